// The "English" mode: a small trained English language model (mod.EnglishModel of the full module
// mha_wasm.js, docs/js-api.md) runs on every keystroke; the page shows the pieces it reads, word by
// word, its next-piece prediction and the text's perplexity, and every head of every layer as small
// multiples captioned with the role the core's head-pattern scores measure on this text and the
// head's report card over held-out text (english_grids.js); the enlarged head shows its whole card,
// held-out and on this text (mod.headReport). The by-word view (words=1) shows every grid with each
// word's pieces merged (mod.byWordWeights). Heads can be switched off; the model then runs again.
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
  JOINER,
  cardTable,
  formatProbability,
  measuredRole,
  modelSummary,
  perplexityComparison,
  coreferenceNote,
  englishFigureParts,
  headName,
  inductionFinding,
  modelKinds,
  nextPieceLabel,
  patternsRequest,
  perplexityText,
  readTypicalRoles,
  tokenLabels,
  tokensNote,
  wordGroups,
} from './english_view.js';
import { readHeadsFile } from '../trained/heads_file.js';
import { HeadExperiments } from './experiments.js';
import { BY_WORD_RULE, COREFERENCE_NOTE, EXAMPLES, REPEAT_NOTE } from './english_text.js';
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
   * @param {{file: string, script: string, bytes: number, heads: object|null, experiments: object|null}|null} build the model
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
      cardOf: (id) => this.cardOf(id),
    });
    /** The protocols of the heads file's scores (readHeadsFile), for the whole card. */
    this.protocols = new Map();
    /** Module 03's claims as experiments (the build's measurements; the reader's own point). */
    this.experiments = new HeadExperiments(this.els.experiments, build?.experiments ?? null, {
      model: () => this.model,
      off: () => this.state.off,
      mod: () => this.mod,
      text: () => this.state.text,
      modules: ctx.modules,
    });
    this.fillExplain();
  }

  /** The text box from this.state. */
  showControls() {
    this.els.text.value = this.state.text;
    this.els.byWord.checked = Boolean(this.state.words);
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
      this.protocols = readHeadsFile(heads).protocols;
      this.coreference = coreferenceNote(heads);
      if (this.coreference) this.fillExplain();
      this.showKinds(modelKinds(heads));
    }
    this.els.modelInfo.textContent = info;
    this.experiments.build(this.model.checksum);
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
    const { form, text, repeat, examples, byWord } = this.els;
    byWord.addEventListener('change', () => {
      this.state.words = byWord.checked;
      this.ctx.clock.inputChanged();
      this.onInput();
      this.writeHash();
    });
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

  /** The pieces by word, the cut; the next-piece table and the perplexity. */
  showReading(r, baseline) {
    const { tokens, tokensNote: note, nextBody, perplexity } = this.els;
    setText(note, r.n === 1 ? EMPTY_NOTE : tokensNote(r, this.config.max_len));
    // One chip per word, its pieces side by side (a thin line between two pieces of a word).
    const chips = wordGroups(r).map((g) => {
      const li = el('li', `en-token${g.word === 0 ? ' en-bos' : ''}`);
      li.append(...g.pieces.map((p) => el('span', `en-piece${p.byte ? ' en-byte' : ''}`, p.label)));
      li.dataset.pieces = String(g.pieces.length);
      if (g.pieces.length > 1)
        li.title = `${g.text}: ${g.pieces.length} pieces (${g.pieces.map((p) => p.label).join(` ${JOINER} `)})`;
      return li;
    });
    if (r.truncatedTokens > 0) chips.push(el('li', 'en-token en-cut', `+${r.truncatedTokens} cut`));
    tokens.replaceChildren(...chips);
    const rows = r.nextToken.map(({ token, probability }) => {
      const tr = el('tr');
      const th = el('th', 'en-next-token', nextPieceLabel(token));
      th.title = token;
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
              ? ` With every head on, the most likely next piece is “${nextPieceLabel(baseline.nextToken[0].token)}” ` +
                `(${formatProbability(baseline.nextToken[0].probability)}).`
              : '')
        : perplexityText(r.perplexity, r.n - 1),
    );
    this.els.allOn.hidden = off === 0;
  }

  /**
   * What the grids show of run `r`: its pieces, or with the by-word view each word's pieces merged
   * by the core (mod.byWordWeights: sum over key pieces, mean over query pieces).
   * {layers, heads, n, weights (layers·heads·n·n), labels (n), tokens (n), byWord, truncatedTokens}
   */
  viewOf(r) {
    const base = { layers: r.layers, heads: r.heads, truncatedTokens: r.truncatedTokens };
    if (!this.state.words)
      return {
        ...base,
        n: r.n,
        weights: r.attnWeights,
        labels: tokenLabels(r),
        tokens: r.tokens,
        byWord: false,
      };
    const w = r.wordIndex[r.n - 1] + 1;
    const words = r.words.slice(0, w);
    const weights = this.mod.byWordWeights(r.attnWeights, r.n, r.wordIndex);
    return { ...base, n: w, weights, labels: words, tokens: words, byWord: true };
  }

  /** Every head's small multiple and measured role (on pieces or by word), the enlarged head. */
  drawGrids(r) {
    const view = this.viewOf(r);
    this.view = view;
    this.liveCard = null;
    const { layers, heads, n, weights, labels } = view;
    const size = heads * n * n;
    const roles = new Map();
    /** Each head's headPatterns entry on this text ("layer.head" → {scores, labels}). */
    this.patterns = new Map();
    for (let layer = 0; layer < layers; layer++) {
      let patterns = null;
      try {
        patterns = this.mod.headPatterns(
          patternsRequest(
            weights.subarray(layer * size, (layer + 1) * size),
            heads,
            n,
            view.tokens,
          ),
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
    this.grids.draw({ n, layers, heads, weights, labels, byWord: view.byWord }, roles);
  }

  /**
   * Head `id`'s whole report card: every score of the heads file (held-out text and the probes)
   * beside the core's card of the text on screen (mod.headReport on the run, by word in the
   * by-word view; computed once per run, when a head is enlarged). {heldOut, live, byWord, note}.
   */
  cardOf(id) {
    const r = this.result;
    if (!r) return null;
    if (!this.liveCard) {
      try {
        const card = this.mod.headReport({
          layers: r.attention.map((a) => a.weights),
          num_heads: r.heads,
          n: r.n,
          tokens: r.tokens,
          ...(this.state.words ? { word_index: Array.from(r.wordIndex) } : {}),
        });
        this.liveCard = { heads: card.heads, note: null };
      } catch (e) {
        this.liveCard = {
          heads: [],
          note: `The card on this text could not be computed: ${errorMessage(e)}`,
        };
      }
    }
    const [layer, head] = id.split('.').map(Number);
    const live = this.liveCard.heads.find((h) => h.layer === layer && h.head === head);
    return {
      heldOut: cardTable(this.typical?.get(id)?.card ?? [], this.protocols),
      live: live ? cardTable(live.scores) : [],
      liveLabels: live?.labels ?? [],
      byWord: Boolean(this.state.words),
      note: this.liveCard.note,
    };
  }

  /**
   * The figure export's parts (chrome/page.js): every head of the run on screen, with the roles
   * its captions show and the heads switched off.
   */
  figureParts() {
    if (!this.result) throw new Error('the English model has not read a text yet');
    return englishFigureParts(this.view ?? this.viewOf(this.result), {
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
      'The model reads pieces (SentencePiece, trained on its corpus): a common word is one piece, a rarer one ' +
        'several; the chips above show each word’s pieces side by side, and the grids mark a piece that continues ' +
        `a word with “${JOINER}”. A character the vocabulary lacks is read as its UTF-8 bytes: the grids label the ` +
        'first byte with the character and the others “byte 2/4” and so on. No word is unknown.',
      `${BY_WORD_RULE} The core computes it (mod.byWordWeights), and the captions and the card then score words.`,
      'The report card (under the enlarged head): every score with its protocol, the paper’s figure, and its ' +
        'chance — the same score for a head that spreads its weight evenly over what it may read, on the same ' +
        'rows. “Held-out text” was measured on text the model never trained on and on two probes (Olsson et ' +
        'al. 2022’s repeated random pieces; pronoun sentences); “on this text” is the same card of what you typed.',
      ...EXAMPLES.filter((x) => x.look).map((x) => x.look),
      this.coreference ?? COREFERENCE_NOTE,
      'Perplexity is exp of the mean negative log-probability the model gave each piece of the text, read from the ' +
        'pieces before it: 1 means it was sure of every piece; a model guessing uniformly among its vocabulary scores ' +
        'the vocabulary size.',
      'Switch a head off (the box under its grid): its output is set to zero before the layer’s output projection, ' +
        'and the model runs again. The line under the prediction compares the perplexity with every head on.',
      'The view is kept in the address, e.g. #mode=english&text=the%20cat%20sat&off=0.1&sel=1.2&words=1 (heads as ' +
        'layer.head: off=0.1 switches L0 H1 off, sel=1.2 enlarges L1 H2; words=1 is the by-word view).',
    ];
    this.els.explainList.replaceChildren(...items.map((t) => el('li', '', t)));
  }
}
