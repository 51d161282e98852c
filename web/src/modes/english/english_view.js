// Pure helpers of the English mode: what a run of the model (mod.EnglishModel.run, docs/js-api.md)
// and the core's head-pattern scores (mod.headPatterns) look like on the page, as text. No DOM,
// no arithmetic on attention: every number shown comes from the core (tests/web/english_view.test.mjs).
import { readHeadsFile } from '../trained/heads_file.js';
import { CARD_WORDS, TARGETS } from './english_text.js';

/**
 * The core's labels (mod.headPatterns, docs/patterns.md) in plain words, with the score each label
 * is earned on. `vertical-stripe` is written by stripeRole (which token the stripe is on).
 */
const LABEL_WORDS = Object.freeze({
  'previous-token': ['previous token', 'previous_token'],
  induction: ['induction', 'induction'],
  'duplicate-token': ['duplicate token', 'duplicate_token'],
  punctuation: ['punctuation', 'punctuation'],
  positional: ['nearby tokens', 'local_band'],
  'long-range': ['long range', 'mean_distance_normalized'],
});

/** A head as the grids name it: "L1 H2" (layer 1, head 2). */
export function headName(layer, head) {
  return `L${layer} H${head}`;
}

/** A head id of the address, "layer.head", as the grids name it: "1.2" → "L1 H2". */
export function headNameOf(id) {
  const [layer, head] = String(id).split('.');
  return headName(layer, head);
}

/** A score as the captions write it: two decimals. */
export function formatScore(x) {
  return typeof x === 'number' && Number.isFinite(x) ? x.toFixed(2) : '—';
}

/** The stripe of a `vertical-stripe` head: on the first token (<bos>), or on a named one. */
function stripeRole(pattern, tokens) {
  const key = pattern.scores?.stripe_key;
  if (key === 0 && typeof pattern.scores.first_token === 'number') {
    return { words: 'first token', score: pattern.scores.first_token };
  }
  const token =
    Number.isInteger(key) && tokens?.[key] !== undefined ? `“${tokens[key]}”` : 'one token';
  return { words: `stripe on ${token}`, score: pattern.scores?.vertical_stripe };
}

/**
 * A head's measured role on this text, from its entry of headPatterns' `heads`: the core's labels
 * in plain words with their scores, the highest first (at most two), or "no clear pattern".
 * Labels the page has no words for are written as the core names them.
 * @param {{scores: object, labels: string[]}} pattern
 * @param {string[]} tokens the labels of the key tokens (for a stripe's token)
 * @returns {{text: string, labels: string[]}}
 */
export function measuredRole(pattern, tokens) {
  const roles = [];
  for (const label of pattern?.labels ?? []) {
    if (label === 'vertical-stripe') roles.push(stripeRole(pattern, tokens));
    else {
      const [words, key] = LABEL_WORDS[label] ?? [
        label.replace(/[-_]/g, ' '),
        label.replace(/-/g, '_'),
      ];
      roles.push({ words, score: pattern.scores?.[key] });
    }
  }
  if (!roles.length) return { text: 'no clear pattern', labels: [] };
  roles.sort((a, b) => (b.score ?? -1) - (a.score ?? -1));
  return {
    text: roles
      .slice(0, 2)
      .map((r) => `${r.words} ${formatScore(r.score)}`)
      .join(' · '),
    labels: [...(pattern.labels ?? [])],
  };
}

/** A card row's value with its chance: "0.76 (chance 0.03)"; "—" without a value. */
export function valueWithChance(row) {
  if (!row || row.value === null) return '—';
  return row.chance === null
    ? formatScore(row.value)
    : `${formatScore(row.value)} (chance ${formatScore(row.chance)})`;
}

/**
 * The card row a head's held-out role stands on: the row of the role's score, or for "no clear
 * pattern" the row furthest above its chance (the coreference probe left out: its chance is a
 * coin's). Null when the card has none.
 */
function keyRow(role, card) {
  const name = Object.entries(CARD_WORDS).find(([, w]) => w.role === role)?.[0];
  if (name) return card.find((r) => r.name === name) ?? null;
  let best = null;
  for (const r of card) {
    if (r.name === 'coreference' || r.value === null) continue;
    if (!best || r.value - (r.chance ?? 0) > best.value - (best.chance ?? 0)) best = r;
  }
  return best;
}

/**
 * The heads' typical roles from web/english_lm_heads.json (heads_file.js readHeadsFile): a Map
 * "layer.head" → {role, score, ablation_cost, row, card}, `row` the card row the role stands on
 * (keyRow) and `card` every row of the head's report card (held-out text and the probes).
 * Entries without a role are left out; anything else (null, no "heads" list) gives an empty Map.
 */
export function readTypicalRoles(json) {
  const roles = new Map();
  for (const [id, h] of readHeadsFile(json).heads) {
    if (!h.role) continue;
    const row = keyRow(h.role, h.card);
    roles.set(id, {
      role: h.role,
      score: row?.value ?? h.score,
      ablation_cost: h.ablation_cost,
      row,
      card: h.card,
    });
  }
  return roles;
}

/**
 * The whole card of a head, as rows to show in a table: every score of `card` (held-out rows of
 * the heads file, or the core's headReport scores on this text) with its words, protocol and the
 * paper's figure. `protocols`: Map name → {protocol, figure} (readHeadsFile); a headReport score
 * carries its own. [{name, words, value, chance, count, probe, protocol, figure}].
 */
export function cardTable(card, protocols = new Map()) {
  return (card ?? []).map((r) => ({
    name: r.name,
    words: CARD_WORDS[r.name]?.words ?? r.name.replace(/_/g, ' '),
    value: typeof r.value === 'number' ? r.value : null,
    chance: typeof r.chance === 'number' ? r.chance : null,
    count: Number.isInteger(r.count) ? r.count : null,
    offset: Number.isInteger(r.offset) ? r.offset : null,
    probe: r.probe ?? null,
    protocol: r.protocol ?? protocols.get(r.name)?.protocol ?? null,
    figure: r.figure ?? protocols.get(r.name)?.figure ?? null,
  }));
}

/**
 * The key scores of a head's live card (mod.headReport on the text on screen): its labels' scores,
 * or when it earns none the score furthest above its chance, as "previous token 0.91 (chance
 * 0.20)" (at most two, joined by " · "); "" for a head without scores.
 */
export function liveCardText(head) {
  const rows = (head?.scores ?? []).filter(
    (r) => typeof r.value === 'number' && r.name !== 'coreference',
  );
  if (!rows.length) return '';
  const earned = rows.filter((r) => (head.labels ?? []).includes(CARD_WORDS[r.name]?.label));
  const gap = (r) => r.value - (r.chance ?? 0);
  const shown = (earned.length ? earned : rows)
    .sort((a, b) => gap(b) - gap(a))
    .slice(0, earned.length ? 2 : 1);
  return shown
    .map((r) => `${CARD_WORDS[r.name]?.words ?? r.name} ${valueWithChance(r)}`)
    .join(' · ');
}

const pct = (x) => `${Math.round(x * 100)} %`;

/**
 * The coreference measurement of web/english_lm_heads.json: the coreference head
 * (measured.coreference_head) and its pronoun-probe row, against the target (TARGETS); null when
 * the file has none. {head: "L1 H0", value, chance, count, nearer, target, met}.
 */
export function coreferenceMeasure(json) {
  const file = readHeadsFile(json);
  const id = file.coreferenceHead;
  const row = id ? file.heads.get(id)?.card.find((r) => r.name === 'coreference') : null;
  if (!row || row.value === null) return null;
  const target = TARGETS.find((t) => t.name === 'coreference').target;
  const nearer = file.measured.nearer_name;
  return {
    head: headNameOf(id),
    value: row.value,
    chance: row.chance ?? 0.5,
    count: row.count ?? file.measured.pronoun_probes ?? null,
    nearer: typeof nearer === 'number' && Number.isFinite(nearer) ? nearer : null,
    target,
    met: row.value >= target,
  };
}

/**
 * The coreference note from the measurement in web/english_lm_heads.json (coreferenceMeasure):
 * the head, the share of pronoun sentences it resolves with its chance, and whether the target is
 * met; null when the file has no such measurement.
 */
export function coreferenceNote(json) {
  const c = coreferenceMeasure(json);
  if (!c) return null;
  const count = c.count === null ? 'the' : `${c.count}`;
  const nearer =
    c.nearer === null ? '' : `; the antecedent is the nearer name in ${pct(c.nearer)} of them`;
  const measured =
    `Coreference, measured on ${count} held-out sentences with two names and a pronoun that refers to one ` +
    `of them (names, verbs and places never seen in training): its coreference head, ${c.head}, puts more ` +
    `of the pronoun’s weight on its antecedent than on the other name in ${pct(c.value)} of them ` +
    `(chance ${pct(c.chance)}${nearer}).`;
  return c.met
    ? `${measured} Target ${pct(c.target)}: met. Look at the row of “it” in head ${c.head}.`
    : `${measured} Target ${pct(c.target)}: missed — no head of this model resolves such pronouns. ` +
        `In the example, the row of “it” (meaning the animal, not the street) shows where its heads look instead.`;
}

/**
 * The terms of a caption line (measuredRole's text with "this text: ", typicalText's line), as
 * LABEL_HELP (english_text.js) lists them: "this text: stripe on “,” 0.61 · first token 0.52" →
 * ["this text", "stripe on", "first token"]; "held-out: no clear pattern · best punctuation 0.40
 * (chance 0.09)" → ["held-out", "no clear pattern", "best", "punctuation", "chance"].
 */
export function captionTerms(line) {
  const terms = [];
  let rest = String(line ?? '').trim();
  const prefix = /^(this text|held-out): /.exec(rest);
  if (prefix) {
    terms.push(prefix[1]);
    rest = rest.slice(prefix[0].length);
  }
  for (const part of rest.split(' · ')) {
    let p = part.trim();
    if (!p) continue;
    if (p.startsWith('off: loss')) {
      terms.push('off: loss');
      continue;
    }
    if (p.startsWith('stripe on ')) {
      terms.push('stripe on');
      continue;
    }
    const chance = / \(chance [\d.—]+\)$/.exec(p);
    if (chance) p = p.slice(0, chance.index);
    if (p.startsWith('best ')) {
      terms.push('best');
      p = p.slice(5);
    }
    terms.push(p.replace(/ [-−+]?[\d.]+$/, '').replace(/ —$/, ''));
    if (chance) terms.push('chance');
  }
  return terms;
}

/**
 * The core's headPatterns request for one layer of a view: its (h, n, n) weights and the tokens
 * (pieces, or words in the by-word view) as strings (docs/patterns.md "Token scores").
 * @param {Float32Array} weights (h, n, n)  @param {string[]} tokens (n)
 */
export function patternsRequest(weights, heads, n, tokens) {
  return { attn_weights: weights, num_heads: heads, n, tokens };
}

/**
 * Module 03's kinds ("What different heads learn") and the two beyond them, measured: for each of
 * TARGETS (english_text.js), the best head's card row of web/english_lm_heads.json (the
 * coreference head of `measured` for coreference) with its chance, and whether the target is met.
 * Returns [{kind, present (true: target met, false: missed, null: no target or not measured),
 * text}], or [] when the file has no head with a card.
 */
export function modelKinds(json) {
  const file = readHeadsFile(json);
  const heads = [...file.heads.values()].filter((h) => h.card.length);
  if (!heads.length) return [];
  const out = [];
  for (const t of TARGETS) {
    let best = null;
    for (const h of heads) {
      const row = h.card.find((r) => r.name === t.name && r.value !== null);
      if (row && (!best || row.value > best.row.value)) best = { h, row };
    }
    if (t.name === 'coreference' && file.coreferenceHead) {
      const h = file.heads.get(file.coreferenceHead);
      const row = h?.card.find((r) => r.name === 'coreference' && r.value !== null);
      if (row) best = { h, row };
    }
    if (!best) {
      out.push({ kind: t.kind, present: null, text: `${t.kind}: not measured for this model.` });
      continue;
    }
    const name = headName(best.h.layer, best.h.head);
    const which =
      t.name === 'coreference' && file.coreferenceHead ? 'the coreference head' : 'best';
    const measured = `${which}: ${name}, ${valueWithChance(best.row)} — ${t.what}, on the ${t.probe}`;
    if (t.target === null) {
      out.push({ kind: t.kind, present: null, text: `${t.kind}: no target; ${measured}.` });
      continue;
    }
    const met = best.row.value >= t.target;
    out.push({
      kind: t.kind,
      present: met,
      text: `${t.kind}: target ${formatScore(t.target)} ${met ? 'met' : 'missed'}; ${measured}.`,
    });
  }
  return out;
}

/**
 * What the heads did on a repeated text: "On this text, L1 H3 earns “induction” (0.71)." or that
 * none did. `patterns`: Map "layer.head" → the head's headPatterns entry ({scores, labels}).
 */
export function inductionFinding(patterns) {
  const found = [...(patterns ?? new Map())]
    .filter(([, p]) => p?.labels?.includes('induction'))
    .map(([id, p]) => `${headNameOf(id)} (${formatScore(p.scores?.induction)})`);
  if (found.length) return `On this text, “induction” is earned by ${found.join(', ')}.`;
  return (
    'On this text no head earns “induction”: this model’s induction heads show it on repeated runs of ' +
    'common words, and on other text often keep their weight on <bos> (“first token”).'
  );
}

/**
 * A typical role as its caption line: "held-out: previous token 0.76 (chance 0.03) · off:
 * perplexity +0.01" (the held-out perplexity with the head switched off minus with every head
 * on); a head with no clear role: "held-out: no clear pattern · best punctuation 0.40 (chance
 * 0.09) · …".
 */
export function typicalText(t) {
  if (!t) return '';
  const words = (r) => `${CARD_WORDS[r.name]?.words ?? r.name} ${valueWithChance(r)}`;
  let role;
  if (t.row && t.role === 'no clear pattern') role = `no clear pattern · best ${words(t.row)}`;
  else if (t.row) role = `${t.role} ${valueWithChance(t.row)}`;
  else role = t.score === null ? t.role : `${t.role} ${formatScore(t.score)}`;
  const sign = t.ablation_cost !== null && t.ablation_cost >= 0 ? '+' : '';
  const cost = t.ablation_cost === null ? '' : ` · off: loss ${sign}${t.ablation_cost.toFixed(3)}`;
  return `held-out: ${role}${cost}`;
}

/** A probability as a percentage: "23.4 %", "<0.1 %". */
export function formatProbability(p) {
  if (typeof p !== 'number' || !Number.isFinite(p)) return '—';
  if (p > 0 && p < 0.001) return '<0.1 %';
  return `${(p * 100).toFixed(1)} %`;
}

/** A perplexity: 3 significant digits or more ("7.42", "84.2", "1,234"); "—" for none (null). */
export function formatPerplexity(x) {
  if (typeof x !== 'number' || !Number.isFinite(x)) return '—';
  if (x < 10) return x.toFixed(2);
  if (x < 1000) return x.toFixed(1);
  return Math.round(x).toLocaleString('en-US');
}

/**
 * The perplexity line with heads switched off: "84.2 with every head on; 120.5 with 2 heads off
 * (+36.3)". `on`, `off`: the two runs' perplexities (null: no prediction to score).
 */
export function perplexityComparison(on, off, count) {
  const heads = `${count} head${count === 1 ? '' : 's'} off`;
  if (typeof on !== 'number' || typeof off !== 'number') {
    return `Perplexity: ${formatPerplexity(off)} with ${heads}, ${formatPerplexity(on)} with every head on.`;
  }
  const d = off - on;
  const sign = d >= 0 ? '+' : '−';
  return (
    `Perplexity: ${formatPerplexity(off)} with ${heads} (${sign}${formatPerplexity(Math.abs(d))} against ` +
    `${formatPerplexity(on)} with every head on).`
  );
}

/** The perplexity line with every head on. `predictions`: the pieces scored (n − 1). */
export function perplexityText(ppl, predictions) {
  if (typeof ppl !== 'number' || predictions < 1) {
    return 'Perplexity: — (nothing to score yet: the model scores each piece of the text from the ones before it).';
  }
  return (
    `Perplexity: ${formatPerplexity(ppl)} over ${predictions} piece${predictions === 1 ? '' : 's'} ` +
    '(how surprised the model is by this text; lower is better).'
  );
}

/** SentencePiece's mark of a piece that starts a word (U+2581). */
const WORD_START = '\u2581';
/** What a label puts before a piece that continues the word of the piece before it (mha_lab.readable_tokens' joiner). */
export const JOINER = '\u00b7';
const BYTE_PIECE = /^<0x([0-9A-Fa-f]{2})>$/;
/** A piece that is the mark alone (a space before a character read as bytes): "␣". */
export const SPACE_LABEL = '\u2423';

/** UTF-8 length of a character from its lead byte (0: not a lead byte). */
function utf8Length(b) {
  if (b < 0x80) return 1;
  if (b >= 0xc2 && b < 0xe0) return 2;
  if (b >= 0xe0 && b < 0xf0) return 3;
  if (b >= 0xf0 && b < 0xf5) return 4;
  return 0;
}

/**
 * Readable labels of a subword model's pieces, as mha_lab.readable_tokens labels them (the
 * SentencePiece mark "▁" removed, a lone "▁" shown as "␣"; a piece that continues the word before
 * it shown after "·"),
 * with the words of `wordIndex` (the model's: a piece continues a word when it has the word of the
 * piece before it, unless that piece is a lone "▁"). Byte pieces: a character the vocabulary lacks
 * is read as its UTF-8 bytes ("<0xF0>" "<0x9F>" "<0x98>" "<0x80>"); the first byte piece is
 * labelled with the character ("😀"), the others "byte 2/4" and so on. A byte piece that is no
 * whole printable character (a control character, or bytes cut by the context) stays as it is.
 * @param {string[]} tokens (n)  @param {ArrayLike<number>} wordIndex (n)
 * @returns {string[]} (n)
 */
export function pieceLabels(tokens, wordIndex) {
  const n = tokens.length;
  const labels = new Array(n);
  const joins = (i) => i > 0 && wordIndex[i] === wordIndex[i - 1] && tokens[i - 1] !== WORD_START;
  for (let i = 0; i < n; ) {
    const t = tokens[i];
    const join = joins(i) ? JOINER : '';
    const byte = BYTE_PIECE.exec(t);
    if (byte) {
      const lead = parseInt(byte[1], 16);
      const len = utf8Length(lead);
      const bytes = [lead];
      for (let k = 1; k < len && i + k < n; k++) {
        const b = BYTE_PIECE.exec(tokens[i + k]);
        if (!b || (parseInt(b[1], 16) & 0xc0) !== 0x80) break;
        bytes.push(parseInt(b[1], 16));
      }
      let ch = null;
      if (len > 0 && bytes.length === len) {
        try {
          ch = new TextDecoder('utf-8', { fatal: true }).decode(new Uint8Array(bytes));
        } catch {
          ch = null;
        }
      }
      if (ch && !/^[\p{Cc}\p{Cf}\p{Z}]$/u.test(ch)) {
        labels[i] = join + ch;
        for (let k = 1; k < len; k++) labels[i + k] = `${JOINER}byte ${k + 1}/${len}`;
        i += len;
        continue;
      }
      labels[i++] = join + t;
      continue;
    }
    const bare = t.startsWith(WORD_START) ? t.slice(1) || SPACE_LABEL : t;
    labels[i++] = join + bare;
  }
  return labels;
}

/**
 * A predicted next piece as the page writes it: a piece that starts a word without its "▁"
 * ("▁the" → "the", a lone "▁" → "␣"), one that would continue the last word after "·" ("s" →
 * "·s"); a byte piece or a special token as it is.
 */
export function nextPieceLabel(piece) {
  const t = String(piece);
  if (BYTE_PIECE.test(t) || /^<[^<>\s]+>$/.test(t)) return t;
  if (t.startsWith(WORD_START)) return t.slice(1) || SPACE_LABEL;
  return JOINER + t;
}

/** The grids' labels of a run's tokens (pieceLabels of its tokens and wordIndex; "<bos>" first). */
export function tokenLabels(run) {
  return pieceLabels(run.tokens, run.wordIndex);
}

/**
 * A run's tokens by word, for the chips: [{word, text, pieces: [{index, label}]}], one per word
 * of wordIndex (<bos> first), `text` the word as written (run.words) and each piece's label
 * without the joiner (the chip shows the word's pieces side by side); `byte` marks a character's
 * further byte pieces ("byte 2/4").
 */
export function wordGroups(run) {
  const labels = tokenLabels(run);
  const groups = [];
  for (let i = 0; i < run.tokens.length; i++) {
    const w = run.wordIndex[i];
    if (!groups.length || groups[groups.length - 1].word !== w)
      groups.push({ word: w, text: run.words[w] ?? '', pieces: [] });
    const label = labels[i].startsWith(JOINER) ? labels[i].slice(1) : labels[i];
    groups[groups.length - 1].pieces.push({ index: i, label, byte: /^byte \d\/\d$/.test(label) });
  }
  return groups;
}

/**
 * The line above the token chips: how many tokens (pieces) and words, how many cut.
 * @param {object} run  @param {number} maxLen the model's context (tokens, <bos> included)
 */
export function tokensNote(run, maxLen) {
  const pieces = run.n - 1;
  const words = run.n > 1 ? run.wordIndex[run.n - 1] : 0;
  const parts = [
    `${run.n} token${run.n === 1 ? '' : 's'}: <bos> and ${pieces} piece${pieces === 1 ? '' : 's'} of ` +
      `${words} word${words === 1 ? '' : 's'}`,
  ];
  if (run.truncatedTokens > 0) {
    parts.push(
      `${run.truncatedTokens} more token${run.truncatedTokens === 1 ? '' : 's'} cut: the model reads ` +
        `at most ${maxLen} tokens (<bos> and the first ${maxLen - 1} pieces of the text)`,
    );
  }
  return `${parts.join(' · ')}.`;
}

/** The note when the text has no token: the model still predicts the first word, from <bos>. */
export const EMPTY_NOTE =
  'No words yet: the model reads <bos> (the start of a text) alone, and the table shows what it ' +
  'expects the first word to be. Type some English.';

/** "a decoder-only Transformer: 3 layers × 8 heads, d_model 128, vocabulary of 4,096 pieces, context 128 tokens, 1.2 MB of weights". */
export function modelSummary(config, bytes) {
  const c = config ?? {};
  const mb = bytes >= 1e6 ? `${(bytes / 1e6).toFixed(1)} MB` : `${Math.round(bytes / 1e3)} KB`;
  return (
    `a decoder-only Transformer: ${c.num_layers} layers × ${c.num_heads} heads, d_model ${c.d_model}, ` +
    `vocabulary of ${Number(c.vocab_size).toLocaleString('en-US')} pieces, context ${c.max_len} tokens, ${mb} of weights`
  );
}

/** `text` cut to `max` characters (code points), with "…" when cut. */
function shortText(text, max) {
  const chars = Array.from(String(text));
  return chars.length > max ? `${chars.slice(0, max).join('')}…` : chars.join('');
}

/**
 * The figure export of a view (chrome/page.js figureParts, drawn by chrome/figure.js): every head
 * of every layer, a row of heads per layer, captioned "layer l, head h" (with "(switched off)"
 * when it is) and the role measured on this text under the caption; query and key tokens the
 * grids' labels; the caption lines: the text, the shape (pieces, or words in the by-word view),
 * the heads switched off; the file name's stem.
 * @param {object} view what the grids show (english_mode.js viewOf): layers, heads, n, weights
 *   (layers·heads·n·n), labels (n), byWord, truncatedTokens
 * @param {{text: string, off?: string[], roles?: Map<string, string>}} p text: the text the run
 *   read; off: "layer.head" ids; roles: "layer.head" → the caption's measured role
 */
export function englishFigureParts(view, { text, off = [], roles = new Map() }) {
  const { layers, heads, n, labels } = view;
  const all = Array.from({ length: layers * heads }, (_, k) => k);
  const id = (k) => `${Math.floor(k / heads)}.${k % heads}`;
  const shape = [
    `${layers} layers × ${heads} heads`,
    view.byWord
      ? `by word: ${n} words (<bos> and ${n - 1} of the text), each word’s pieces merged (sum over key pieces, mean over query pieces)`
      : `${n} tokens: <bos> and ${n - 1} pieces of the text`,
  ];
  if (view.truncatedTokens > 0) shape.push(`${view.truncatedTokens} more tokens cut`);
  const offNames = off.map((h) => h.split('.')).map(([l, h]) => `layer ${l} head ${h}`);
  return {
    data: {
      weights: view.weights,
      heads: all,
      queryTokens: labels,
      keyTokens: labels,
      config: { num_layers: layers, num_heads: heads, n },
    },
    title: `English language model: “${shortText(text, 100)}”`,
    headNames: all.map(
      (k) =>
        `layer ${Math.floor(k / heads)}, head ${k % heads}${off.includes(id(k)) ? ' (switched off)' : ''}`,
    ),
    headNotes: all.map((k) => roles.get(id(k)) ?? ''),
    columns: heads,
    panelWidth: 240,
    caption: [
      `Text: “${shortText(text, 600)}”`,
      shape.join(' · '),
      `Heads switched off: ${offNames.length ? offNames.join(', ') : 'none'}`,
    ],
    stem: `mha-english-l${layers}-h${heads}-n${n}${view.byWord ? '-words' : ''}`,
  };
}
