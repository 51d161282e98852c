// Bring your own attention and weights: files chosen with <input type=file> or dropped on the
// panel are read locally (File.arrayBuffer(); nothing is uploaded) and handed to the core's
// loaders (docs/js-api.md: loadAttention, loadNpy, loadMultiheadAttention), which check every
// shape, dtype and value and throw an Error naming what is wrong. The page shows the same grids,
// scores and combined views for them. Pure parts (tokens, count checks) are tested in
// tests/web/explain.test.mjs.
import { h } from './dom.js';
import { readTheme, HeadHeatmap } from '../draw/heatmap.js';
import { smallMultiples } from '../draw/layout.js';
import { FONT_BOLD } from '../draw/labels.js';
import { gridFigure } from './grid.js';
import { renderPatterns } from './patterns_panel.js';
import { renderCombined, ROLLOUT_FORMULA } from './combine.js';
import { weightsCsv, weightsJson } from '../chrome/export.js';
import { downloadBlob } from '../chrome/snapshot.js';
import { saveFigure } from '../chrome/figure_save.js';
import { FIGURE_SCALES } from '../chrome/figure.js';
import { isViewFile, parseViewFile, viewFileText } from './view_file.js';

/** The largest file the page reads (the core's own limits are checked after). */
export const MAX_FILE_BYTES = 256 * 1024 * 1024;
/** The most heads × layers drawn as grids from a file (the scores cover every head). */
export const MAX_DRAWN_FILE_HEADS = 16;
/** The most layers × heads drawn as thumbnails in the all-layers overview. */
export const MAX_OVERVIEW_GRIDS = 192;

/**
 * Tokens from what the user typed or loaded: a JSON array of strings, or else one token per
 * line when there are several lines, or else tokens separated by spaces.
 * @returns {{ok: true, tokens: string[]} | {ok: false, message: string}}
 */
export function parseTokenText(text) {
  const s = String(text ?? '').trim();
  if (s === '') return { ok: true, tokens: [] };
  if (s.startsWith('[')) {
    let v;
    try {
      v = JSON.parse(s);
    } catch (e) {
      return {
        ok: false,
        message: `the tokens look like a JSON array but do not parse: ${e.message}`,
      };
    }
    if (!Array.isArray(v) || !v.every((t) => typeof t === 'string')) {
      return {
        ok: false,
        message: 'the tokens JSON must be an array of strings, e.g. ["The", "cat"]',
      };
    }
    return { ok: true, tokens: v };
  }
  const lines = s.split(/\r?\n/);
  return { ok: true, tokens: lines.length > 1 ? lines.map((l) => l.trim()) : s.split(/\s+/) };
}

/**
 * Labels for n query rows and m key columns: the given tokens when their count fits, numbers
 * when none were given. Self-attention (n == m) takes one list; cross-attention may take n + m.
 * @returns {{ok: true, rows: string[], cols: string[], note: string} | {ok: false, message: string}}
 */
export function labelsFor(tokens, n, m) {
  const numbers = (k) => Array.from({ length: k }, (_, i) => String(i));
  if (tokens.length === 0) {
    return {
      ok: true,
      rows: numbers(n),
      cols: numbers(m),
      note: 'No tokens given: rows and columns are numbered.',
    };
  }
  if (tokens.length === n && n === m) return { ok: true, rows: tokens, cols: tokens, note: '' };
  if (n !== m && tokens.length === n + m) {
    return {
      ok: true,
      rows: tokens.slice(0, n),
      cols: tokens.slice(n),
      note: 'The first n tokens label the queries, the rest the keys.',
    };
  }
  const want = n === m ? `${n}` : `${n} + ${m} = ${n + m} (queries, then keys)`;
  return {
    ok: false,
    message:
      `${tokens.length} token${tokens.length === 1 ? '' : 's'} given, but the attention has ` +
      `${n} query row${n === 1 ? '' : 's'} and ${m} key column${m === 1 ? '' : 's'}: give ${want} tokens, or none`,
  };
}

/** Reads a File (or Blob) into bytes, refusing empty and oversized files with a message. */
export async function readFileBytes(file) {
  if (file.size === 0) throw new Error(`${file.name || 'the file'} is empty (0 bytes)`);
  if (file.size > MAX_FILE_BYTES) {
    throw new Error(
      `${file.name || 'the file'} has ${file.size} bytes; this page reads at most ${MAX_FILE_BYTES} bytes`,
    );
  }
  return new Uint8Array(await file.arrayBuffer());
}

function fileField(label, accept, id, help, role) {
  const input = h('input', { id, attrs: { type: 'file', accept }, data: { file: role } });
  const field = h(
    'div',
    { className: 'field file-field' },
    h('label', { text: label, attrs: { for: id } }),
    input,
    help ? h('span', { className: 'help', text: help }) : null,
  );
  return { field, input };
}

function drawHeads(container, labelCache, stack, numHeads, n, m, rows, cols, prefix) {
  const theme = readTheme(container);
  const drawn = Math.min(numHeads, MAX_DRAWN_FILE_HEADS);
  const plan = smallMultiples({
    count: drawn,
    n,
    m,
    width: container.clientWidth || 720,
    gap: 8,
    framePad: 0,
    labelWidth: Math.max(n, m) > 64 ? 0 : labelCache.widest(labelCache.labelSet(rows), FONT_BOLD),
  });
  container.dataset.columns = String(plan.columns);
  const figures = [];
  const result = {
    n,
    m,
    attn_weights: stack,
    fully_masked_rows: fullyMaskedRows(stack, numHeads, n, m),
  };
  for (let k = 0; k < Math.min(numHeads, MAX_DRAWN_FILE_HEADS); k++) {
    const name = `${prefix}head ${k}`;
    figures.push(
      gridFigure({
        labels: labelCache,
        result,
        head: k,
        tokens: rows,
        keyTokens: cols,
        name,
        className: 'file-head',
        data: { fileHead: k },
      }),
    );
  }
  container.replaceChildren(...figures.map((f) => f.figure));
  if (numHeads > MAX_DRAWN_FILE_HEADS) {
    container.append(
      h('p', {
        className: 'help',
        text: `Heads ${MAX_DRAWN_FILE_HEADS}–${numHeads - 1} are not drawn (the scores below cover all ${numHeads}).`,
      }),
    );
  }
  for (const f of figures) f.heatmap.resize(plan.available, theme, { labels: plan.labels });
}

/**
 * Every layer's heads as thumbnails, one row per layer (at most MAX_OVERVIEW_GRIDS grids); a
 * click or Enter on a layer's grid calls onLayer(layer), which shows that layer's grids in full.
 */
function drawOverview(container, labelCache, loaded, rows, cols, onLayer) {
  const { n, m, num_heads: numHeads, num_layers: numLayers } = loaded;
  const layers = Math.min(numLayers, Math.max(1, Math.floor(MAX_OVERVIEW_GRIDS / numHeads)));
  const plan = smallMultiples({
    count: numHeads,
    n,
    m,
    width: container.clientWidth || 720,
    gap: 4,
    framePad: 0,
    maxColumns: numHeads,
  });
  const theme = readTheme(container);
  const parts = [
    h('p', {
      className: 'help',
      text:
        `All layers × heads${layers < numLayers ? ` (layers 0–${layers - 1} of ${numLayers})` : ''}: ` +
        'click a grid (or Enter) to show its layer in full above.',
    }),
  ];
  const heatmaps = [];
  for (let l = 0; l < layers; l++) {
    const stack = loaded.layers[l];
    const result = {
      n,
      m,
      attn_weights: stack,
      fully_masked_rows: fullyMaskedRows(stack, numHeads, n, m),
    };
    const row = h(
      'div',
      { className: 'file-layer-row', data: { layer: l } },
      h('span', { className: 'file-layer-name', text: `layer ${l}` }),
    );
    for (let k = 0; k < numHeads; k++) {
      const hm = new HeadHeatmap({
        labels: labelCache,
        head: k,
        result,
        tokens: rows,
        keyTokens: cols,
        name: `Layer ${l}, head ${k}`,
        onSelect: (sel) => hm.setSelection(sel),
        onActivate: () => onLayer(l),
      });
      delete hm.canvas.dataset.head;
      Object.assign(hm.canvas.dataset, { overviewLayer: String(l), overviewHead: String(k) });
      row.append(hm.element);
      heatmaps.push(hm);
    }
    parts.push(row);
  }
  container.replaceChildren(...parts);
  for (const hm of heatmaps) hm.resize(plan.available, theme, { labels: false });
}

/** 1 where a head's row is all zero (as the core marks fully masked rows). */
function fullyMaskedRows(stack, numHeads, n, m) {
  const out = new Uint8Array(numHeads * n);
  for (let r = 0; r < numHeads * n; r++) {
    let any = false;
    for (let j = 0; j < m && !any; j++) any = stack[r * m + j] !== 0;
    out[r] = any ? 0 : 1;
  }
  return out;
}

/**
 * Builds the panel in `container`.
 * @param {HTMLElement} container
 * @param {{getModule: () => Promise<import('../../../cpp/bindings/wasm/mha_wasm').MhaModule>, labels: object,
 *   onError: (message: string) => void, onClear: () => void}} deps
 *   getModule: the core module holding the loaders (it may be loaded on demand);
 *   labels: the page's label cache (draw/labels.js LabelCache), which the panel's grids share;
 *   onError: shows a message in the page's alert region; onClear: clears it
 */
export function buildFilePanel(container, { getModule, labels: labelCache, onError, onClear }) {
  const uid = Math.random().toString(36).slice(2, 7);
  const status = h('p', { className: 'file-status', attrs: { role: 'status' } });
  const tokensId = `file-tokens-${uid}`;
  const tokensInput = h('textarea', {
    id: tokensId,
    className: 'file-tokens',
    attrs: { rows: '2', spellcheck: 'false' },
    data: { file: 'tokens-text' },
  });
  const tokensField = h(
    'div',
    { className: 'field file-field' },
    h('label', {
      text: 'Tokens (space- or line-separated, or a JSON array)',
      attrs: { for: tokensId },
    }),
    tokensInput,
  );
  const tokensFile = fileField(
    '…or a tokens file (.txt, .json)',
    '.txt,.json,text/plain,application/json',
    `file-tokens-file-${uid}`,
    '',
    'tokens',
  );
  const attn = fileField(
    'Attention weights (.npy or .safetensors)',
    '.npy,.safetensors',
    `file-attn-${uid}`,
    'shape (heads, n, n) or (layers, heads, n, n); float32, float64 or float16',
    'attention',
  );
  const weights = fileField(
    'nn.MultiheadAttention weights (.safetensors, PyTorch names)',
    '.safetensors',
    `file-weights-${uid}`,
    '',
    'weights',
  );
  const embeddings = fileField(
    'Token embeddings X (.npy, shape (n, d_model))',
    '.npy',
    `file-x-${uid}`,
    '',
    'embeddings',
  );
  const headsId = `file-heads-${uid}`;
  const headsInput = h('input', {
    id: headsId,
    attrs: { type: 'number', min: '1', step: '1', inputmode: 'numeric' },
    data: { file: 'num-heads' },
  });
  const headsField = h(
    'div',
    { className: 'field file-field' },
    h('label', { text: 'num_heads (when the file’s metadata has none)', attrs: { for: headsId } }),
    headsInput,
  );
  const tensorId = `file-tensor-${uid}`;
  const tensorInput = h('input', {
    id: tensorId,
    attrs: { type: 'text', spellcheck: 'false', autocomplete: 'off' },
    data: { file: 'tensor' },
  });
  const tensorField = h(
    'div',
    { className: 'field file-field' },
    h('label', {
      text: 'Tensor name (a safetensors file with several tensors)',
      attrs: { for: tensorId },
    }),
    tensorInput,
  );
  const layerId = `file-layer-${uid}`;
  const layerSelect = h('select', { id: layerId, data: { file: 'layer' } });
  const layerField = h(
    'div',
    { className: 'field file-field', attrs: { hidden: '' } },
    h('label', { text: 'Layer', attrs: { for: layerId } }),
    layerSelect,
  );
  const drop = h(
    'div',
    { className: 'file-drop', attrs: { tabindex: '-1' } },
    'Or drop files here: a .npy / .safetensors attention tensor, or weights .safetensors plus embeddings .npy, plus an optional tokens .txt / .json. ',
    h('strong', { text: 'Files are read in this page only; nothing is uploaded.' }),
  );
  const output = h('div', { className: 'file-output' });

  /** What the user has given so far (bytes kept until replaced). */
  const given = { attention: null, weights: null, embeddings: null };
  let loaded = null; // {layers, num_layers, num_heads, n, m, source}

  // The message goes into the panel itself (the page's alert region may be far above the
  // panel, off screen) and into the alert region; the previous file's grids are cleared so they
  // are never taken for the new file's.
  const fail = (message) => {
    status.textContent = message;
    status.classList.add('file-error');
    output.replaceChildren();
    container.dataset.state = 'error';
    onError(message);
  };

  async function show() {
    onClear();
    const mod = await getModule();
    const tok = parseTokenText(tokensInput.value);
    if (tok.ok === false) return fail(tok.message);
    if (!loaded) return;
    const { n, m, num_heads: numHeads, num_layers: numLayers } = loaded;
    const labels = labelsFor(tok.tokens, n, m);
    if (labels.ok === false) return fail(labels.message);
    const layer = Math.min(Number(layerSelect.value) || 0, numLayers - 1);
    const stack = loaded.layers[layer];
    const heads = loaded.heads ?? [...Array(numHeads).keys()];
    const exports = exportButtons(
      stack,
      numHeads,
      labels,
      {
        source: loaded.source,
        layer,
        num_layers: numLayers,
        num_heads: numHeads,
        n,
        m,
      },
      (message) => {
        status.textContent = message;
      },
      {
        heads,
        viewText: () =>
          viewFileText({ ...loaded, rows: labels.rows, cols: labels.cols, layer, heads }),
        ink: readTheme(container).ink,
      },
    );
    const grids = h('div', { className: 'file-heads' });
    const overview = h('div', { className: 'file-overview' });
    const patternsBox = h('div', { className: 'file-patterns' });
    const combineBox = h('div', { className: 'file-combine', data: { panel: `file-${uid}` } });
    const rolloutBox = h('div', { className: 'file-rollout' });
    output.replaceChildren(
      h('p', {
        className: 'help',
        text: `${loaded.source}: ${numLayers} layer${numLayers === 1 ? '' : 's'} × ${numHeads} heads × ${n} × ${m}. ${labels.note}`,
      }),
      exports,
      grids,
      overview,
      patternsBox,
      combineBox,
      rolloutBox,
    );
    drawHeads(
      grids,
      labelCache,
      stack,
      numHeads,
      n,
      m,
      labels.rows,
      labels.cols,
      numLayers > 1 ? `layer ${layer}, ` : '',
    );
    if (numLayers > 1) {
      drawOverview(overview, labelCache, loaded, labels.rows, labels.cols, (l) => {
        layerSelect.value = String(l);
        show()
          .then(() => grids.scrollIntoView?.({ block: 'nearest' }))
          .catch((e) => fail(e.message));
      });
    }
    const req = { attn_weights: stack, num_heads: numHeads, n, m };
    // The token scores only for tokens the user gave (not the numbers that label the grids).
    const named = tok.tokens.length ? { tokens: labels.cols, query_tokens: labels.rows } : {};
    renderPatterns(patternsBox, {
      patterns: mod.headPatterns({ ...req, ...named }),
      tokens: labels.rows,
      keyTokens: labels.cols,
      weights: stack,
    });
    const combine = (kind) =>
      renderCombined(combineBox, {
        labels: labelCache,
        kind,
        matrix: kind === 'max' ? mod.maxOverHeads(req) : mod.meanOverHeads(req),
        n,
        m,
        tokens: labels.rows,
        keyTokens: labels.cols,
        numHeads,
        onKind: combine,
      });
    combine('mean');
    if (numLayers > 1 && n === m) {
      const rollout = mod.attentionRollout({ layers: loaded.layers, num_heads: numHeads, n });
      renderRollout(rolloutBox, labelCache, rollout, n, labels.rows, numLayers);
    }
    container.dataset.state = 'ready';
    status.classList.remove('file-error');
    status.textContent = `Showing ${loaded.source}.`;
  }

  async function loadAttention(bytes, name) {
    const mod = await getModule();
    const tensor = tensorInput.value.trim();
    const r = tensor ? mod.loadAttention(bytes, { tensor }) : mod.loadAttention(bytes);
    loaded = { ...r, source: `${name} (${r.dtype}, shape (${r.shape.join(', ')}))` };
  }

  async function runWeights() {
    const mod = await getModule();
    const options = {};
    if (headsInput.value.trim() !== '') {
      const k = Number(headsInput.value);
      if (!Number.isInteger(k) || k < 1)
        throw new Error(`num_heads=${headsInput.value.trim()} is not a whole number of at least 1`);
      options.num_heads = k;
    }
    const named = (file, fn) => {
      try {
        return fn();
      } catch (e) {
        throw new Error(`${file.name}: ${e instanceof Error ? e.message : String(e)}`);
      }
    };
    const spec = named(given.weights, () =>
      mod.loadMultiheadAttention(given.weights.bytes, options),
    );
    const x = named(given.embeddings, () => mod.loadNpy(given.embeddings.bytes));
    if (x.shape.length !== 2 || x.shape[1] !== spec.d_model) {
      throw new Error(
        `${given.embeddings.name} has shape (${x.shape.join(', ')}); the weights need (n, d_model) = (n, ${spec.d_model})`,
      );
    }
    const n = x.shape[0];
    const r = mod.forward({ ...spec, n, query: x.data });
    loaded = {
      layers: [r.attn_weights],
      num_layers: 1,
      num_heads: r.num_heads,
      n,
      m: r.m,
      source: `${given.weights.name} (d_model ${spec.d_model}, ${spec.num_heads} heads) on ${given.embeddings.name} (${n} tokens), run through the core`,
    };
  }

  /** Takes a list of files (from an input or a drop) and routes each by its name. */
  async function take(files, role) {
    try {
      onClear();
      for (const file of files) {
        try {
          await takeOne(file, role);
        } catch (e) {
          throw new Error(`${file.name}: ${e instanceof Error ? e.message : String(e)}`);
        }
      }
      if (
        given.weights &&
        given.embeddings &&
        (role === 'weights' || role === 'embeddings' || role === undefined)
      ) {
        await runWeights();
      }
      layerSelect.replaceChildren(
        ...Array.from({ length: loaded?.num_layers ?? 0 }, (_, l) =>
          h('option', { text: `layer ${l}`, attrs: { value: l } }),
        ),
      );
      layerField.hidden = !loaded || loaded.num_layers < 2;
      if (loaded) layerSelect.value = String(loaded.viewLayer ?? loaded.num_layers - 1);
      await show();
    } catch (e) {
      fail(e instanceof Error ? e.message : String(e));
    }
  }

  /** One file: its bytes kept in its role (an attention tensor is loaded by the core at once). */
  async function takeOne(file, role) {
    const lower = file.name.toLowerCase();
    const bytes = await readFileBytes(file);
    if (lower.endsWith('.json')) {
      const text = new TextDecoder('utf-8', { fatal: false }).decode(bytes);
      if (isViewFile(text)) {
        // A saved view: the tensor, its labels and the layer and heads it showed.
        const v = parseViewFile(text);
        tokensInput.value = JSON.stringify(
          v.n === v.m && v.rows.every((t, i) => t === v.cols[i]) ? v.rows : [...v.rows, ...v.cols],
        );
        loaded = {
          layers: v.layers,
          num_layers: v.num_layers,
          num_heads: v.num_heads,
          n: v.n,
          m: v.m,
          heads: v.heads,
          viewLayer: v.layer,
          source: v.source,
        };
        return;
      }
    }
    let kind =
      role ??
      (lower.endsWith('.txt') || lower.endsWith('.json')
        ? 'tokens'
        : lower.endsWith('.npy') && given.weights
          ? 'embeddings'
          : 'attention');
    if (kind === 'tokens') {
      tokensInput.value = new TextDecoder('utf-8', { fatal: false }).decode(bytes);
      return;
    }
    if (kind === 'attention' && role === undefined && lower.endsWith('.safetensors')) {
      // A dropped .safetensors is either an attention tensor or a layer's weights: ask the
      // core's attention loader first, and keep the file as weights if it is not attention.
      try {
        await loadAttention(bytes, file.name);
      } catch (e) {
        kind = 'weights';
        status.textContent = `${file.name} is not an attention tensor (${e.message}); it is kept as nn.MultiheadAttention weights.`;
      }
      given[kind] = { bytes, name: file.name };
      return;
    }
    given[kind] = { bytes, name: file.name };
    if (kind === 'attention') await loadAttention(bytes, file.name);
  }

  tokensFile.input.addEventListener('change', () => take([...tokensFile.input.files], 'tokens'));
  attn.input.addEventListener('change', () => take([...attn.input.files], 'attention'));
  weights.input.addEventListener('change', () => take([...weights.input.files], 'weights'));
  embeddings.input.addEventListener('change', () =>
    take([...embeddings.input.files], 'embeddings'),
  );
  tokensInput.addEventListener('change', () => show().catch((e) => fail(e.message)));
  headsInput.addEventListener(
    'change',
    () => given.weights && given.embeddings && take([], 'weights'),
  );
  layerSelect.addEventListener('change', () => show().catch((e) => fail(e.message)));
  tensorInput.addEventListener('change', () => {
    if (given.attention)
      take([new File([given.attention.bytes], given.attention.name)], 'attention');
  });
  for (const type of ['dragenter', 'dragover']) {
    container.addEventListener(type, (e) => {
      e.preventDefault();
      drop.classList.add('is-over');
    });
  }
  container.addEventListener('dragleave', () => drop.classList.remove('is-over'));
  container.addEventListener('drop', (e) => {
    e.preventDefault();
    drop.classList.remove('is-over');
    take([...(e.dataTransfer?.files ?? [])]);
  });

  container.replaceChildren(
    h('p', {
      className: 'help',
      text: 'Attention exported from any model (e.g. a Hugging Face model’s output_attentions, stacked with torch.stack and saved with np.save), or an nn.MultiheadAttention layer’s state_dict (safetensors) with token embeddings: the same grids, scores and combined views as above.',
    }),
    h(
      'div',
      { className: 'file-fields' },
      attn.field,
      tensorField,
      tokensField,
      tokensFile.field,
      layerField,
    ),
    h('div', { className: 'file-fields' }, weights.field, embeddings.field, headsField),
    drop,
    status,
    output,
  );
}

/**
 * "Save CSV" / "Save JSON" of one layer's weights as loaded (every head), in the page's export
 * formats (export.js: weightsCsv, weightsJson; float32-exact); "Save PNG" (at 1×/2×/4×) and "Save
 * SVG" of the heads shown (figure.js, captioned with the file's name and shape); "Save view": the
 * whole tensor, its labels and the view's layer and heads in one file (view_file.js) that the panel
 * opens again. `say` reports what was saved.
 */
function exportButtons(stack, numHeads, labels, config, say, { heads, viewText, ink }) {
  const data = {
    weights: stack,
    heads: [...Array(numHeads).keys()],
    queryTokens: labels.rows,
    keyTokens: labels.cols,
    maskedRows: fullyMaskedRows(stack, numHeads, config.n, config.m),
    config,
  };
  const stem = `loaded-attention-layer${config.layer}-h${numHeads}`;
  const scale = h(
    'select',
    { attrs: { 'aria-label': 'PNG scale' }, data: { fileExport: 'scale' } },
    ...FIGURE_SCALES.map((k) => h('option', { text: `${k}×`, attrs: { value: String(k) } })),
  );
  const save = async (kind) => {
    if (kind === 'csv' || kind === 'json') {
      const name = `${stem}.${kind}`;
      const blob =
        kind === 'csv'
          ? new Blob([weightsCsv(data)], { type: 'text/csv' })
          : new Blob([`${JSON.stringify(weightsJson(data), null, 1)}\n`], {
              type: 'application/json',
            });
      downloadBlob(blob, name);
      return `Saved ${name}.`;
    }
    if (kind === 'view') {
      const name = `loaded-attention-view.json`;
      downloadBlob(new Blob([viewText()], { type: 'application/json' }), name);
      return `Saved ${name}: open it here again (Files panel, tokens file or drop) to get this view back.`;
    }
    const k = kind === 'png' ? Number(scale.value) : 1;
    const name = `${stem}${kind === 'png' && k !== 1 ? `-${k}x` : ''}.${kind}`;
    const link = `${config.source}, layer ${config.layer} of ${config.num_layers}, ${numHeads} heads × ${config.n} × ${config.m}`;
    const r = await saveFigure(
      {
        data: { ...data, heads, config: { ...config, source: undefined } },
        kind,
        scale: k,
        ink,
        link,
        title: `Attention from ${config.source.replace(/ \(.*$/, '')}, layer ${config.layer}`,
        headNames: heads.map((hd) =>
          config.num_layers > 1 ? `layer ${config.layer}, head ${hd}` : `head ${hd}`,
        ),
      },
      name,
    );
    return `Saved ${name} (${r.width} × ${r.height}, ${r.bytes} bytes).`;
  };
  const button = (kind, text) => {
    const b = h('button', {
      className: 'link-button',
      text,
      attrs: { type: 'button' },
      data: { fileExport: kind },
    });
    b.addEventListener('click', () => {
      save(kind).then(say, (e) =>
        say(`Could not save: ${e instanceof Error ? e.message : String(e)}`),
      );
    });
    return b;
  };
  return h(
    'p',
    { className: 'file-exports' },
    'This layer’s weights: ',
    button('csv', 'Save CSV'),
    ' · ',
    button('json', 'Save JSON'),
    ' · ',
    button('png', 'Save PNG'),
    ' at ',
    scale,
    ' · ',
    button('svg', 'Save SVG'),
    ' · ',
    button('view', 'Save view (reopen later)'),
  );
}

/** The rollout across layers as one grid (rows sum to 1). */
function renderRollout(container, labelCache, rollout, n, tokens, numLayers) {
  const matrix = Float32Array.from(rollout);
  const result = { n, m: n, attn_weights: matrix, fully_masked_rows: new Uint8Array(n) };
  const name = `Attention rollout over ${numLayers} layers`;
  const { figure, heatmap: hm } = gridFigure({
    labels: labelCache,
    result,
    tokens,
    name,
    className: 'combined-figure',
    data: { rollout: 'layers' },
    caption: h(
      'span',
      {},
      h('strong', { text: `${name}: ${ROLLOUT_FORMULA}` }),
      h('span', {
        className: 'help',
        text: ' — Abnar & Zuidema 2020: how much of input token j reaches position i, if attention and the residual carry it linearly.',
      }),
    ),
  });
  container.replaceChildren(figure);
  hm.resize(Math.max(240, Math.min(480, container.clientWidth || 480)), readTheme(container));
}
