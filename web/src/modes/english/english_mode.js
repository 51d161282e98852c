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
// What every trained-model mode shares (loading, the address, heads switched off, the alert, the
// timing) is TrainedMode's (modes/trained/trained_mode.js).
import { addNote, errorMessage, setText } from '../../chrome/alerts.js';
import {
  ENGLISH_DEFAULTS,
  englishStateToHash,
  parseEnglishHash,
  parseHead,
} from './english_state.js';
import {
  EMPTY_NOTE,
  formatProbability,
  measuredRole,
  modelSummary,
  perplexityComparison,
  coreferenceNote,
  englishFigureParts,
  headName,
  inductionFinding,
  modelKinds,
  patternsRequest,
  perplexityText,
  readTypicalRoles,
  tokenLabels,
  tokensNote,
} from './english_view.js';
import { COREFERENCE_NOTE, EXAMPLES, REPEAT_NOTE } from './english_text.js';
import { el } from '../../draw/dom.js';
import { buildPanel } from './english_dom.js';
import { EnglishGrids } from './english_grids.js';
import { TrainedMode, msText } from '../trained/trained_mode.js';

/** The mode's stylesheet (dist/english.css, beside index.html), added once; resolves when it applies. */
function loadStylesheet(doc) {
  return new Promise((resolve, reject) => {
    const link = Object.assign(doc.createElement('link'), {
      rel: 'stylesheet',
      href: 'english.css',
    });
    link.addEventListener('load', () => resolve());
    link.addEventListener('error', () =>
      reject(new Error('english.css did not load: keep it next to index.html')),
    );
    doc.head.append(link);
  });
}

/** Next-token candidates shown. */
const TOP = 5;

/** @extends {TrainedMode<import('../../../../cpp/bindings/wasm/mha_wasm').EnglishModel>} */
export class EnglishMode extends TrainedMode {
  /**
   * @param {object} ctx what the page gives every mode (main.js): doc, modules (the wasm loader),
   *   labels (the page's LabelCache), clock (UpdateClock: mha:update), address, embedded(),
   *   showMemoryStats
   * @param {HTMLElement} panel #english-panel (empty: this fills it)
   * @param {{file: string, script: string, bytes: number, heads: object|null}|null} build the model
   *   this build of the page has (scripts/build_web.mjs), or null
   */
  constructor(ctx, panel, build) {
    const els = buildPanel(panel);
    super(ctx, {
      id: 'english',
      panel,
      els,
      name: 'English model',
      rolesName: 'Held-out head roles',
      address: { parse: parseEnglishHash, toHash: englishStateToHash },
      defaults: ENGLISH_DEFAULTS,
      resizeTarget: els.layers,
      alsoLoad: [loadStylesheet(ctx.doc)],
    });
    this.build = build;
    this.shareSlot = this.els.shareSlot;
    this.skipTarget = '#english-heads-section';
    /** Save PNG and Save SVG (chrome/page.js): every head of every layer (figureParts). */
    this.exports = 'figure';
    this.config = null;
    /** The run with every head on for the text on screen (the perplexity change). */
    this.baseline = null;
    this.grids = new EnglishGrids(this.els, {
      labels: ctx.labels,
      isOff: (id) => this.isOff(id),
      setOff: (id, off) => this.setOff(id, off),
      onZoom: (id) => {
        this.state.sel = id;
        this.writeHash();
      },
    });
    this.fillExplain();
  }

  /** The text box from this.state. */
  showControls() {
    this.els.text.value = this.state.text;
  }

  /** The first view once the model is loaded: every head's small multiple, a run, the head enlarged. */
  firstView() {
    this.checkHeads();
    this.grids.build(this.config.num_layers, this.config.num_heads, this.typical);
    this.grids.measure();
    this.grids.zoomed = this.state.sel;
    this.grids.markOff(this.state.off);
    this.update();
    this.grids.zoom(this.state.sel);
  }

  /**
   * Where the model is: english_lm.safetensors (fetched when served) and english_lm.js (file://),
   * with the heads file this build has (MHA_ENGLISH_BUILD).
   */
  modelSource() {
    if (!this.build) {
      throw new Error(
        'this build of the page has none (web/english_lm.safetensors was missing when ' +
          'scripts/build_web.mjs ran)',
      );
    }
    const { file, script, heads } = this.build;
    return {
      file,
      script,
      global: 'MHA_ENGLISH_MODEL',
      heads: heads ?? null,
      missing: `neither ${file} nor ${script} could be read: keep them next to index.html`,
    };
  }

  /** mod.EnglishModel of the file's bytes. */
  makeModel(mod, bytes) {
    return new mod.EnglishModel(bytes); // throws on a bad file (e.g. a checksum mismatch)
  }

  /** The model line; the held-out roles, unless the build has none or they belong to another model file. */
  opened(bytes, heads, elsewhere) {
    this.config = this.model.config;
    let info = `Model: ${modelSummary(this.config, bytes.length)}.`;
    this.typical = new Map();
    if (!heads) info += ' No held-out head roles with this build (web/english_lm_heads.json).';
    else if (elsewhere) info += ` ${elsewhere}.`;
    else {
      this.typical = readTypicalRoles(heads);
      this.coreference = coreferenceNote(heads);
      if (this.coreference) this.fillExplain();
      this.showKinds(modelKinds(heads));
    }
    this.els.modelInfo.textContent = info;
    /** The model's unknown token (its vocabulary's id 0): no repeat of anything in the token scores. */
    this.unknownToken = this.model.vocab[0];
  }

  /** Module 03's kinds the model has and lacks (modelKinds), under the page; hidden when unmeasured. */
  showKinds(kinds) {
    this.kinds = kinds;
    this.els.kindsList.replaceChildren(
      ...kinds.map((k) => {
        const li = el('li', '', k.text);
        li.dataset.kind = k.kind;
        li.dataset.present = String(k.present);
        return li;
      }),
    );
    this.els.kinds.hidden = kinds.length === 0;
  }

  /** Drops switched-off and enlarged heads the model does not have (from an address), with a note. */
  checkHeads() {
    const { num_layers: layers, num_heads: heads } = this.config;
    const fits = (id) => {
      const h = parseHead(id);
      return h && h.layer < layers && h.head < heads;
    };
    const size =
      `the model has ${layers} layers of ${heads} heads (${headName(0, 0)} to ${headName(layers - 1, heads - 1)}, ` +
      `0.0–${layers - 1}.${heads - 1} in the address)`;
    for (const id of this.state.off.filter((x) => !fits(x)))
      addNote(this.els.notes, `off=${id} in the address: ${size}; ignored.`);
    this.state.off = this.state.off.filter(fits);
    if (this.state.sel && !fits(this.state.sel)) {
      addNote(this.els.notes, `sel=${this.state.sel} in the address: ${size}; no head enlarged.`);
      this.state.sel = null;
    }
  }

  /** The text box, the form, "Repeat this text" and the examples. */
  wireControls() {
    const { form, text, repeat, examples } = this.els;
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
      if (x.id === 'induction' && this.model)
        this.els.look.textContent = `${look} ${inductionFinding(this.patterns)}`;
      else if (x.id === 'punctuation' && kind)
        this.els.look.textContent = `${look} Over held-out text: ${kind.text}`;
      else this.els.look.textContent = look;
    });
  }

  /** "Repeat this text": the text, a space, the text again. */
  repeatText() {
    const t = this.els.text.value.trim();
    if (!t) {
      this.els.look.textContent =
        'There is no text to repeat yet: type some, or choose an example.';
      return;
    }
    this.ctx.clock.inputChanged();
    this.els.text.value = `${t} ${t}`;
    this.onInput();
    this.els.look.textContent = this.model
      ? `${REPEAT_NOTE} ${inductionFinding(this.patterns)}`
      : REPEAT_NOTE;
  }

  /**
   * Runs the model on the text box (without the heads switched off) and draws (update() times
   * it, on #english-summary as data-ms). A failure keeps the last view and says why.
   */
  runAndDraw() {
    const text = this.els.text.value;
    const off = this.state.off;
    let result, baseline;
    try {
      result = this.model.run(
        text,
        off.length
          ? { top: TOP, ablate: off.map((id) => id.split('.').map(Number)) }
          : { top: TOP },
      );
      if (off.length) {
        baseline =
          this.baseline?.text === text ? this.baseline.result : this.model.run(text, { top: TOP });
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

  /** The summary line (tokens and the time of the update) and the update clock's measure. */
  timed(ms, drawn) {
    if (drawn) {
      setText(this.els.summary, `${this.result.n} tokens · run and drawn in ${msText(ms)} ms`);
      this.ctx.clock.gridsDrawn();
      this.grids.queueTable(); // after the clock's measure: not part of the keystroke's time
    } else this.ctx.clock.inputRefused();
  }

  /** The tokens, the unknown words, the cut; the next-token table and the perplexity. */
  showReading(r, baseline) {
    const { tokens, tokensNote: note, nextBody, perplexity } = this.els;
    setText(note, r.n === 1 ? EMPTY_NOTE : tokensNote(r, this.config.max_len));
    const chips = r.tokens.map((_token, i) => {
      const unknown = Boolean(r.unknown[i]);
      const li = el(
        'li',
        `en-token${unknown ? ' en-unknown' : ''}${i === 0 ? ' en-bos' : ''}`,
        i === 0 ? '<bos>' : r.words[i],
      );
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
    setText(
      perplexity,
      off
        ? perplexityComparison(baseline.perplexity, r.perplexity, off) +
            (baseline.nextToken[0]
              ? ` With every head on, the most likely next token is “${baseline.nextToken[0].token}” ` +
                `(${formatProbability(baseline.nextToken[0].probability)}).`
              : '')
        : perplexityText(r.perplexity, r.n - 1),
    );
    this.els.allOn.hidden = off === 0;
  }

  /** Every head's small multiple and measured role, the enlarged head. */
  drawGrids(r) {
    const labels = tokenLabels(r);
    const { layers, heads, n, attnWeights } = r;
    const roles = new Map();
    /** Each head's headPatterns entry on this text ("layer.head" → {scores, labels}). */
    this.patterns = new Map();
    for (let layer = 0; layer < layers; layer++) {
      let patterns = null;
      try {
        patterns = this.mod.headPatterns(
          patternsRequest(r.attention[layer].weights, heads, n, r.tokens, this.unknownToken),
        );
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
    return englishFigureParts(this.result, {
      text: this.baseline?.text ?? this.state.text,
      off: this.state.off,
      roles: this.grids.lastRoles,
    });
  }

  /** What stays on screen after a refused input. */
  lastShown() {
    return ' The prediction and the grids still show the last text the model read.';
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
}
