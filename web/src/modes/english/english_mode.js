// The "English" mode: a small trained English language model (mod.EnglishModel of the full module
// mha_wasm.js, docs/js-api.md) runs on every keystroke; the page shows the tokens as it reads them,
// its next-word prediction and the text's perplexity, and every head of every layer as small
// multiples captioned with the role the core's head-pattern scores measure on this text
// (english_grids.js). Heads can be switched off; the model then runs again without them.
//
// The model's bytes: over http(s), fetch() of english_lm.safetensors (next to index.html); from
// file://, where a page may not fetch its own files, english_lm.js, a classic script with the same
// bytes as base64 (both written by scripts/build_web.mjs, which also tells this bundle, in `build`,
// whether there is a model and the heads' typical roles of web/english_lm_heads.json).
/* global MHA_ENGLISH_MODEL */
import { drawLegend } from '../../draw/legend.js';
import { addNote, errorMessage, sentence, setText, showNotes } from '../../chrome/alerts.js';
import { ENGLISH_DEFAULTS, englishStateToHash, parseEnglishHash, parseHead } from './english_state.js';
import { viewToHash } from '../../chrome/address_keys.js';
import {
  EMPTY_NOTE, formatProbability, measuredRole, modelSummary, perplexityComparison,
  coreferenceNote, englishFigureParts, headName, inductionFinding, modelKinds, patternsRequest, perplexityText,
  readTypicalRoles, rolesChecksum, tokenLabels, tokensNote,
} from './english_view.js';
import { COREFERENCE_NOTE, EXAMPLES, REPEAT_NOTE } from './english_text.js';
import { el } from '../../draw/dom.js';
import { base64ToBytes } from '../../compute/bytes.js';
import { buildPanel } from './english_dom.js';
import { EnglishGrids } from './english_grids.js';

/** The mode's stylesheet (dist/english.css, beside index.html), added once; resolves when it applies. */
function loadStylesheet(doc) {
  return new Promise((resolve, reject) => {
    const link = Object.assign(doc.createElement('link'), { rel: 'stylesheet', href: 'english.css' });
    link.addEventListener('load', () => resolve());
    link.addEventListener('error', () => reject(new Error('english.css did not load: keep it next to index.html')));
    doc.head.append(link);
  });
}

/** Milliseconds after the last change before the address follows it. */
const ADDRESS_DELAY_MS = 250;
/** Next-token candidates shown. */
const TOP = 5;

/**
 * The model file's bytes: fetched when served, else (file://, or a host that refuses the fetch)
 * from english_lm.js's global. @returns {Promise<Uint8Array>}
 */
async function modelBytes(build, modules, win) {
  if (win.location.protocol !== 'file:') {
    try {
      const response = await win.fetch(build.file);
      if (response.ok) return new Uint8Array(await response.arrayBuffer());
    } catch {
      // the script below has the same bytes
    }
  }
  const bundled = () => (typeof MHA_ENGLISH_MODEL === 'object' && MHA_ENGLISH_MODEL ? MHA_ENGLISH_MODEL : null);
  if (!bundled()) {
    try {
      await modules.loadScript(build.script);
    } catch {
      throw new Error(`neither ${build.file} nor ${build.script} could be read: keep them next to index.html`);
    }
  }
  if (!bundled()) throw new Error(`${build.script} loaded but holds no model`);
  return base64ToBytes(bundled().safetensors);
}

export class EnglishMode {
  /**
   * @param {object} ctx what the page gives every mode (main.js): doc, modules (the wasm loader),
   *   labels (the page's LabelCache), clock (UpdateClock: mha:update), address, embedded(),
   *   showMemoryStats
   * @param {HTMLElement} panel #english-panel (empty: this fills it)
   * @param {{file: string, script: string, bytes: number, heads: object|null}|null} build the model
   *   this build of the page has (scripts/build_web.mjs), or null
   */
  constructor(ctx, panel, build) {
    this.id = 'english';
    this.ctx = ctx;
    this.build = build;
    this.panel = panel;
    this.els = buildPanel(panel);
    this.shareSlot = this.els.shareSlot;
    this.skipTarget = '#english-heads-section';
    /** Save PNG and Save SVG (chrome/page.js): every head of every layer (figureParts). */
    this.exports = 'figure';
    this.state = { ...ENGLISH_DEFAULTS, off: [] };
    this.model = null;
    this.mod = null;
    this.config = null;
    this.loading = null;
    this.active = false;
    this.wired = false;
    /** The run on screen, and the run with every head on for the same text (perplexity change). */
    this.result = null;
    this.baseline = null;
    this.grids = new EnglishGrids(this.els, {
      labels: ctx.labels,
      isOff: (id) => this.state.off.includes(id),
      setOff: (id, off) => this.setOff(id, off),
      onZoom: (id) => {
        this.state.sel = id;
        this.writeHash();
      },
    });
    this.fillExplain();
    this.styled = loadStylesheet(ctx.doc);
    panel.dataset.state = 'idle';
    panel.dataset.tables = 'ready';
  }

  mount(hash, notes = []) {
    const parsed = parseEnglishHash(hash);
    return this.enter(parsed.state, [...notes, ...parsed.notes]);
  }

  resume() {
    return this.enter(this.state);
  }

  unmount() {
    this.active = false;
    this.ctx.address.drop();
  }

  hash({ embed }) {
    return `${englishStateToHash(this.state)}${viewToHash({ embed })}`;
  }

  async enter(state, notes = []) {
    this.active = true;
    this.state = { ...this.state, ...state, off: [...(state.off ?? [])] };
    this.els.text.value = this.state.text;
    showNotes(this.els.notes, notes);
    this.writeHash({ now: true });
    this.wire();
    drawLegend(this.els.legend);
    if (!(await this.load()) || !this.active) return;
    this.checkHeads();
    this.grids.build(this.config.num_layers, this.config.num_heads, this.typical);
    this.grids.measure();
    this.grids.zoomed = this.state.sel;
    this.grids.markOff(this.state.off);
    this.update();
    this.grids.zoom(this.state.sel);
    this.writeHash({ now: true });
    this.setState('ready');
  }

  setState(s) {
    this.panel.dataset.state = s;
  }

  /** Loads the model once. @returns {Promise<boolean>} */
  load() {
    this.loading ??= this.loadOnce().then(() => true, (e) => {
      this.loading = null; // a later visit may try again
      this.setState('error');
      this.els.summary.textContent = 'The English model is not available.';
      this.showAlert(`The English model could not be loaded: ${errorMessage(e)}`);
      return false;
    });
    return this.loading;
  }

  async loadOnce() {
    this.setState('loading');
    this.els.summary.textContent = 'Loading the English model…';
    if (!this.build) {
      throw new Error('this build of the page has none (web/english_lm.safetensors was missing when ' +
        'scripts/build_web.mjs ran)');
    }
    const [mod, bytes] = await Promise.all([
      this.ctx.modules.loadFullModule(),
      modelBytes(this.build, this.ctx.modules, this.ctx.doc.defaultView),
      this.styled,
    ]);
    this.mod = mod;
    if (typeof mod.EnglishModel !== 'function') {
      throw new Error('this build of the attention core has no EnglishModel; rebuild with ./scripts/build.sh');
    }
    this.model = new mod.EnglishModel(bytes); // throws on a bad file (e.g. a checksum mismatch)
    this.config = this.model.config;
    let info = `Model: ${modelSummary(this.config, bytes.length)}.`;
    const heads = this.build.heads ?? null;
    const measuredOn = rolesChecksum(heads);
    const checksum = typeof this.model.checksum === 'string' ? this.model.checksum.toLowerCase() : null;
    this.typical = new Map();
    if (!heads) info += ' No held-out head roles with this build (web/english_lm_heads.json).';
    else if (measuredOn && checksum && measuredOn !== checksum) {
      info += ` Held-out head roles not shown: they were measured on another model file (xxh64 ${measuredOn}, this one is ${checksum}).`;
    } else {
      this.typical = readTypicalRoles(heads);
      this.coreference = coreferenceNote(heads);
      if (this.coreference) this.fillExplain();
      this.showKinds(modelKinds(heads));
    }
    this.els.modelInfo.textContent = info;
    /** The model's unknown token (its vocabulary's id 0): no repeat of anything in the token scores. */
    this.unknownToken = this.model.vocab?.[0] ?? null;
    this.tokenAware = this.probePatterns();
  }

  /** Module 03's kinds the model has and lacks (modelKinds), under the page; hidden when unmeasured. */
  showKinds(kinds) {
    this.kinds = kinds;
    this.els.kindsList.replaceChildren(...kinds.map((k) => {
      const li = el('li', '', k.text);
      li.dataset.kind = k.kind;
      li.dataset.present = String(k.present);
      return li;
    }));
    this.els.kinds.hidden = kinds.length === 0;
  }

  /**
   * Whether the core's headPatterns reads the tokens with the unknown token unmatched (for the
   * token scores: duplicate token, induction, punctuation); an older core refuses the keys, and
   * the page then scores positions only rather than count unknown words as repeats.
   */
  probePatterns() {
    try {
      this.mod.headPatterns(patternsRequest(Float32Array.of(1), 1, 1, ['<bos>'], this.unknownToken ?? '<unk>'));
      return true;
    } catch {
      return false;
    }
  }

  /** Drops switched-off and enlarged heads the model does not have (from an address), with a note. */
  checkHeads() {
    const { num_layers: layers, num_heads: heads } = this.config;
    const fits = (id) => {
      const h = parseHead(id);
      return h && h.layer < layers && h.head < heads;
    };
    const size = `the model has ${layers} layers of ${heads} heads (${headName(0, 0)} to ${headName(layers - 1, heads - 1)}, ` +
      `0.0–${layers - 1}.${heads - 1} in the address)`;
    for (const id of this.state.off.filter((x) => !fits(x))) addNote(this.els.notes, `off=${id} in the address: ${size}; ignored.`);
    this.state.off = this.state.off.filter(fits);
    if (this.state.sel && !fits(this.state.sel)) {
      addNote(this.els.notes, `sel=${this.state.sel} in the address: ${size}; no head enlarged.`);
      this.state.sel = null;
    }
  }

  wire() {
    if (this.wired) return;
    this.wired = true;
    const { form, text, repeat, examples, allOn } = this.els;
    text.addEventListener('input', () => {
      this.ctx.clock.inputChanged();
      this.els.look.textContent = '';
      this.onInput();
    });
    form.addEventListener('submit', (e) => e.preventDefault());
    repeat.addEventListener('click', () => this.repeatText());
    examples.addEventListener('click', (e) => {
      const id = e.target.closest?.('button[data-example]')?.dataset.example;
      const x = EXAMPLES.find((ex) => ex.id === id);
      if (!x) return;
      this.ctx.clock.inputChanged();
      text.value = x.text;
      this.onInput();
      const look = x.look ?? this.coreference ?? COREFERENCE_NOTE;
      const kind = this.kinds?.find((k) => k.kind === 'Punctuation');
      if (x.id === 'induction' && this.model) this.els.look.textContent = `${look} ${inductionFinding(this.patterns)}`;
      else if (x.id === 'punctuation' && kind) this.els.look.textContent = `${look} Over held-out text: ${kind.text}`;
      else this.els.look.textContent = look;
    });
    allOn.addEventListener('click', () => {
      this.state.off = [];
      this.grids.markOff(this.state.off);
      this.update();
      this.writeHash();
    });
    let frame = 0;
    new ResizeObserver(() => {
      const width = this.els.layers.clientWidth;
      if (width === this.grids.width) return;
      cancelAnimationFrame(frame);
      frame = requestAnimationFrame(() => {
        this.grids.measure();
        this.grids.layout();
      });
    }).observe(this.els.layers);
    this.ctx.doc.defaultView.matchMedia('(prefers-color-scheme: dark)').addEventListener('change', () => {
      this.grids.theme = null;
      drawLegend(this.els.legend);
      this.grids.layout();
    });
  }

  /** "Repeat this text": the text, a space, the text again. */
  repeatText() {
    const t = this.els.text.value.trim();
    if (!t) {
      this.els.look.textContent = 'There is no text to repeat yet: type some, or choose an example.';
      return;
    }
    this.ctx.clock.inputChanged();
    this.els.text.value = `${t} ${t}`;
    this.onInput();
    this.els.look.textContent = this.model ? `${REPEAT_NOTE} ${inductionFinding(this.patterns)}` : REPEAT_NOTE;
  }

  onInput() {
    if (!this.model) return;
    this.update();
  }

  /**
   * Runs the model on the text box (without the heads switched off) and draws. A failure keeps
   * the last view and says why. The time it took is on #english-summary as data-ms.
   */
  update() {
    const t0 = performance.now();
    let drawn = false;
    try {
      drawn = this.runAndDraw();
    } finally {
      const ms = performance.now() - t0;
      this.els.summary.dataset.ms = ms.toFixed(2);
      if (drawn) {
        setText(this.els.summary, `${this.result.n} tokens · run and drawn in ${ms < 10 ? ms.toFixed(1) : Math.round(ms)} ms`);
        this.ctx.clock.gridsDrawn();
        this.grids.queueTable(); // after the clock's measure: not part of the keystroke's time
      } else this.ctx.clock.inputRefused();
      if (this.mod?.memoryStats) this.ctx.showMemoryStats(this.mod.memoryStats());
    }
    return drawn;
  }

  runAndDraw() {
    const text = this.els.text.value;
    const off = this.state.off;
    let result, baseline;
    try {
      result = this.model.run(text, off.length ? { top: TOP, ablate: off.map((id) => id.split('.').map(Number)) } : { top: TOP });
      if (off.length) {
        baseline = this.baseline?.text === text ? this.baseline.result : this.model.run(text, { top: TOP });
      }
    } catch (e) {
      this.fail(errorMessage(e));
      return false;
    }
    this.clearAlert();
    this.result = result;
    this.baseline = off.length ? { text, result: baseline } : { text, result };
    this.state.text = text;
    this.showReading(result, off.length ? baseline : null);
    this.drawGrids(result);
    this.writeHash();
    return true;
  }

  /** The tokens, the unknown words, the cut; the next-token table and the perplexity. */
  showReading(r, baseline) {
    const { tokens, tokensNote: note, nextBody, perplexity } = this.els;
    setText(note, r.n === 1 ? EMPTY_NOTE : tokensNote(r, this.config.max_len));
    const chips = r.tokens.map((_token, i) => {
      const unknown = Boolean(r.unknown[i]);
      const li = el('li', `en-token${unknown ? ' en-unknown' : ''}${i === 0 ? ' en-bos' : ''}`, i === 0 ? '<bos>' : r.words[i]);
      if (unknown) li.title = `not in the vocabulary: the model reads <unk>`;
      return li;
    });
    if (r.truncatedTokens > 0) chips.push(el('li', 'en-token en-cut', `+${r.truncatedTokens} cut`));
    tokens.replaceChildren(...chips);
    const rows = r.nextToken.map(({ token, probability }) => {
      const tr = el('tr');
      const th = el('th', 'en-next-token', token);
      th.scope = 'row';
      const td = el('td', 'en-next-p');
      const bar = el('span', 'en-bar');
      bar.style.width = `${Math.max(0, Math.min(1, probability)) * 100}%`;
      td.append(el('span', 'en-bar-track'), el('span', 'en-p', formatProbability(probability)));
      td.firstChild.append(bar);
      tr.append(th, td);
      return tr;
    });
    nextBody.replaceChildren(...rows);
    const off = this.state.off.length;
    setText(perplexity, off
      ? perplexityComparison(baseline.perplexity, r.perplexity, off) +
        (baseline.nextToken[0] ? ` With every head on, the most likely next token is “${baseline.nextToken[0].token}” ` +
          `(${formatProbability(baseline.nextToken[0].probability)}).` : '')
      : perplexityText(r.perplexity, r.n - 1));
    this.els.allOn.hidden = off === 0;
  }

  /** Every head's small multiple and measured role, the enlarged head. */
  drawGrids(r) {
    const labels = tokenLabels(r);
    const { layers, heads, n, attnWeights } = r;
    const roles = new Map();
    /** Each head's headPatterns entry on this text ("layer.head" → {scores, labels}). */
    this.patterns = new Map();
    const size = heads * n * n;
    for (let layer = 0; layer < layers; layer++) {
      let patterns = null;
      try {
        patterns = this.mod.headPatterns(patternsRequest(attnWeights.subarray(layer * size, (layer + 1) * size), heads, n,
          this.tokenAware ? r.tokens : null, this.unknownToken));
      } catch (e) {
        // Said once per message, not on every keystroke.
        const note = `The head-pattern scores could not be computed: ${errorMessage(e)}`;
        if (this.patternsNote !== note) addNote(this.els.notes, note);
        this.patternsNote = note;
      }
      for (let head = 0; head < heads; head++) {
        const p = patterns?.heads?.[head];
        if (p) this.patterns.set(`${layer}.${head}`, p);
        roles.set(`${layer}.${head}`, p ? `this text: ${measuredRole(p, labels).text}` : '');
      }
    }
    this.grids.draw({ n, layers, heads, weights: attnWeights, labels }, roles);
  }

  /**
   * The figure export's parts (chrome/page.js): every head of the run on screen, with the roles
   * its captions show and the heads switched off.
   */
  figureParts() {
    if (!this.result) throw new Error('the English model has not read a text yet');
    return englishFigureParts(this.result, { text: this.baseline?.text ?? this.state.text, off: this.state.off, roles: this.grids.lastRoles });
  }

  fail(message) {
    const last = this.result ? ' The prediction and the grids still show the last text the model read.' : '';
    this.showAlert(message + last);
    this.els.text.setAttribute('aria-invalid', 'true');
  }

  showAlert(message) {
    this.els.alert.textContent = sentence(message);
  }

  clearAlert() {
    if (this.els.alert.textContent) this.els.alert.textContent = '';
    this.els.text.removeAttribute('aria-invalid');
  }

  setOff(id, off) {
    const now = this.state.off.filter((k) => k !== id);
    if (off) now.push(id);
    this.state.off = now;
    this.grids.markOff(now);
    if (this.model) this.update();
    this.writeHash();
  }

  fillExplain() {
    const items = [
      ...EXAMPLES.filter((x) => x.look).map((x) => x.look),
      this.coreference ?? COREFERENCE_NOTE,
      'Perplexity is exp of the mean negative log-probability the model gave each word of the text, read from the ' +
        'words before it: 1 means it was sure of every word; a model guessing uniformly among its vocabulary scores ' +
        'the vocabulary size.',
      'Switch a head off (the box under its grid): its output is set to zero before the layer’s output projection, ' +
        'and the model runs again. The line under the prediction compares the perplexity with every head on.',
      'The view is kept in the address, e.g. #mode=english&text=the%20cat%20sat&off=0.1&sel=1.2 (heads as layer.head: ' +
        'off=0.1 switches L0 H1 off, sel=1.2 enlarges L1 H2).',
    ];
    this.els.explainList.replaceChildren(...items.map((t) => el('li', '', t)));
  }

  writeHash({ now = false } = {}) {
    if (!this.active) return;
    const hashOf = () => (this.active ? this.hash({ embed: this.ctx.embedded() }) : null);
    if (now) this.ctx.address.write(hashOf());
    else this.ctx.address.writeLater(hashOf, ADDRESS_DELAY_MS);
  }
}
