// Pure helpers of the English mode: what a run of the model (mod.EnglishModel.run, docs/js-api.md)
// and the core's head-pattern scores (mod.headPatterns) look like on the page, as text. No DOM,
// no arithmetic on attention: every number shown comes from the core (tests/web/english_view.test.mjs).

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

/**
 * The heads' typical roles from web/english_lm_heads.json ({"heads": [{layer, head, role, score,
 * ablation_cost}, ...]}): a Map "layer.head" → {role, score, ablation_cost}. Entries that are not
 * of that form are left out; anything else (null, no "heads" list) gives an empty Map.
 */
export function readTypicalRoles(json) {
  const roles = new Map();
  const heads = json && Array.isArray(json.heads) ? json.heads : [];
  for (const h of heads) {
    if (!h || !Number.isInteger(h.layer) || !Number.isInteger(h.head) || h.layer < 0 || h.head < 0)
      continue;
    if (typeof h.role !== 'string' || !h.role.trim()) continue;
    roles.set(`${h.layer}.${h.head}`, {
      role: h.role.trim().slice(0, 80),
      score: typeof h.score === 'number' && Number.isFinite(h.score) ? h.score : null,
      ablation_cost:
        typeof h.ablation_cost === 'number' && Number.isFinite(h.ablation_cost)
          ? h.ablation_cost
          : null,
    });
  }
  return roles;
}

/**
 * The coreference note from the measurement in web/english_lm_heads.json ({"coreference":
 * {"sentences": [...], "best": {layer, head, antecedent, other}, "resolved"}}, written by
 * scripts/training/evaluate_english_lm.py), or null when the file has none or it is malformed.
 */
export function coreferenceNote(json) {
  const c = json?.coreference;
  const b = c?.best;
  const share = (x) => typeof x === 'number' && Number.isFinite(x) && x >= 0 && x <= 1;
  if (
    !c ||
    !Array.isArray(c.sentences) ||
    !c.sentences.length ||
    typeof c.sentences[0] !== 'string'
  )
    return null;
  if (
    !b ||
    !Number.isInteger(b.layer) ||
    !Number.isInteger(b.head) ||
    !share(b.antecedent) ||
    !share(b.other)
  )
    return null;
  const pct = (x) => `${Math.round(x * 100)} %`;
  const head = headName(b.layer, b.head);
  const measured =
    `Coreference, measured on ${c.sentences.length} sentences where a pronoun refers to one of two earlier nouns ` +
    `(such as “${c.sentences[0].replace(/ ([.,])/g, '$1')}”): the head that favours the antecedent most, ${head}, ` +
    `puts ${pct(b.antecedent)} of the pronoun’s attention on it and ${pct(b.other)} on the other noun.`;
  return c.resolved === true
    ? `${measured} That head resolves such pronouns: look at the row of “it” in head ${head}.`
    : `${measured} No head reaches half: this model is too small to resolve pronouns. In the example, the row of ` +
        `“it” (meaning the animal, not the street) shows where its heads look instead.`;
}

/**
 * The terms of a caption line (measuredRole's text with "this text: ", typicalText's line), as
 * LABEL_HELP (english_text.js) lists them: "this text: stripe on “,” 0.61 · first token 0.52" →
 * ["this text", "stripe on", "first token"].
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
    const p = part.trim();
    if (!p) continue;
    if (p.startsWith('off: perplexity')) terms.push('off: perplexity');
    else if (p.startsWith('stripe on ')) terms.push('stripe on');
    else terms.push(p.replace(/ [-−+]?[\d.]+$/, '').replace(/ —$/, ''));
  }
  return terms;
}

/**
 * The core's headPatterns request for one layer of a run: its (h, n, n) weights, the tokens as the
 * model read them, and the model's unknown token as unmatched (two words the vocabulary lacks are
 * both read as "<unk>" but are no repeat: docs/patterns.md "Token scores").
 * @param {Float32Array} weights (h, n, n)  @param {string[]} tokens the run's tokens
 * @param {string} unknown the model's unknown token (its vocabulary's id 0)
 */
export function patternsRequest(weights, heads, n, tokens, unknown) {
  return { attn_weights: weights, num_heads: heads, n, tokens, unmatched_tokens: [unknown] };
}

/** The least held-out score for a kind to count as present (scripts/training/evaluate_english_lm.py's roles). */
const KIND_PRESENT = 0.5;

/**
 * Which of module 03's kinds of head ("What different heads learn") the model has, and the two
 * kinds it has beyond them, from the held-out measurement in web/english_lm_heads.json (per head
 * `scores` {"previous token", "nearby tokens", "first token", "punctuation", "duplicate token",
 * "induction"} and `role`; `coreference`). A kind is present when some head's held-out score for
 * it is at least 0.5. Returns [{kind, present (true, false, or null: not measured), text}], or
 * [] when the file has no per-head scores.
 */
export function modelKinds(json) {
  const heads = (Array.isArray(json?.heads) ? json.heads : []).filter(
    (h) =>
      h &&
      Number.isInteger(h.layer) &&
      Number.isInteger(h.head) &&
      h.scores &&
      typeof h.scores === 'object',
  );
  if (!heads.length) return [];
  const score = (h, k) =>
    typeof h.scores[k] === 'number' && Number.isFinite(h.scores[k]) ? h.scores[k] : null;
  const list = (hs, k) =>
    hs.map((h) => `${headName(h.layer, h.head)} ${formatScore(score(h, k))}`).join(', ');
  const having = (k, except = (_h) => false) =>
    heads
      .filter((h) => score(h, k) !== null && score(h, k) >= KIND_PRESENT && !except(h))
      .sort((a, b) => score(b, k) - score(a, k));
  const best = (k) =>
    heads.filter((h) => score(h, k) !== null).sort((a, b) => score(b, k) - score(a, k))[0] ?? null;
  const out = [];
  const kind = (name, k, what, except) => {
    const hs = having(k, except);
    if (hs.length)
      out.push({ kind: name, present: true, text: `${name}: yes, ${list(hs, k)} (${what}).` });
    else {
      const b = best(k);
      out.push({
        kind: name,
        present: false,
        text: `${name}: no; the highest is ${b ? list([b], k) : '—'} (${what}), under ${KIND_PRESENT}.`,
      });
    }
  };
  kind('Previous token', 'previous token', 'mean weight on the word before');
  // A previous-token head's band is mostly its previous token: the narrower kind names it.
  kind(
    'Positional / neighbourhood',
    'nearby tokens',
    'mean weight within one position',
    (h) => (score(h, 'previous token') ?? 0) >= (score(h, 'nearby tokens') ?? 0) - 0.1,
  );
  kind('Punctuation', 'punctuation', 'mean weight on punctuation');
  const c = json?.coreference?.best;
  if (
    c &&
    Number.isInteger(c.layer) &&
    Number.isInteger(c.head) &&
    typeof c.antecedent === 'number' &&
    typeof c.other === 'number'
  ) {
    const where =
      `${headName(c.layer, c.head)}, puts ${Math.round(c.antecedent * 100)} % of a pronoun’s weight on its ` +
      `antecedent and ${Math.round(c.other * 100)} % on the other noun`;
    out.push(
      json.coreference.resolved === true
        ? { kind: 'Coreference', present: true, text: `Coreference: yes, the best head, ${where}.` }
        : { kind: 'Coreference', present: false, text: `Coreference: no; the closest, ${where}.` },
    );
  } else
    out.push({
      kind: 'Coreference',
      present: null,
      text: 'Coreference: not measured for this model.',
    });
  const unclear = heads.filter((h) => h.role === 'no clear pattern');
  out.push({
    kind: 'Content-based',
    present: null,
    text: unclear.length
      ? `Content-based: not measured; no simple rule fits ${unclear.map((h) => headName(h.layer, h.head)).join(', ')}.`
      : 'Content-based: not measured.',
  });
  kind(
    'Beyond module 03, induction',
    'induction',
    'on random common words repeated: weight on the word after the first occurrence',
  );
  kind('Beyond module 03, first token (attention sink)', 'first token', 'mean weight on <bos>');
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
 * A typical role as its caption line: "held-out: previous token 0.83 · off: perplexity +0.12"
 * (the held-out perplexity with the head switched off minus with every head on).
 */
export function typicalText(t) {
  if (!t) return '';
  const score = t.score === null ? '' : ` ${formatScore(t.score)}`;
  const sign = t.ablation_cost !== null && t.ablation_cost >= 0 ? '+' : '';
  const cost =
    t.ablation_cost === null ? '' : ` · off: perplexity ${sign}${formatScore(t.ablation_cost)}`;
  return `held-out: ${t.role}${score}${cost}`;
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

/** The perplexity line with every head on. `predictions`: the words scored (n − 1). */
export function perplexityText(ppl, predictions) {
  if (typeof ppl !== 'number' || predictions < 1) {
    return 'Perplexity: — (no word to score yet: the model scores each word of the text from the ones before it).';
  }
  return (
    `Perplexity: ${formatPerplexity(ppl)} over ${predictions} word${predictions === 1 ? '' : 's'} ` +
    '(how surprised the model is by this text; lower is better).'
  );
}

/**
 * The grids' labels of a run's tokens: the model's tokens ("<bos>", lower-cased words), and for a
 * word the vocabulary lacks, the word as written with a "*" (the model reads it as "<unk>").
 */
export function tokenLabels(run) {
  return run.tokens.map((t, i) => (run.unknown[i] ? `${run.words[i]}*` : t));
}

/**
 * The line above the token chips: how many tokens, how many unknown, how many cut.
 * @param {object} run  @param {number} maxLen the model's context (tokens, <bos> included)
 */
export function tokensNote(run, maxLen) {
  const words = run.n - 1;
  const parts = [`${run.n} token${run.n === 1 ? '' : 's'}: <bos> and ${words} of the text`];
  const unknown = run.unknown.filter(Boolean).length;
  if (unknown)
    parts.push(`${unknown} not in the model’s vocabulary (dashed: the model reads them as <unk>)`);
  if (run.truncatedTokens > 0) {
    parts.push(
      `${run.truncatedTokens} more token${run.truncatedTokens === 1 ? '' : 's'} cut: the model reads ` +
        `at most ${maxLen} tokens (<bos> and the first ${maxLen - 1} of the text)`,
    );
  }
  return `${parts.join(' · ')}.`;
}

/** The note when the text has no token: the model still predicts the first word, from <bos>. */
export const EMPTY_NOTE =
  'No words yet: the model reads <bos> (the start of a text) alone, and the table shows what it ' +
  'expects the first word to be. Type some English.';

/** "d_model 128, 4 heads × 2 layers, 5,000 words, context 128 tokens, 1.2 MB". */
export function modelSummary(config, bytes) {
  const c = config ?? {};
  const mb = bytes >= 1e6 ? `${(bytes / 1e6).toFixed(1)} MB` : `${Math.round(bytes / 1e3)} KB`;
  return (
    `a decoder-only Transformer: ${c.num_layers} layers × ${c.num_heads} heads, d_model ${c.d_model}, ` +
    `vocabulary of ${Number(c.vocab_size).toLocaleString('en-US')} words, context ${c.max_len} tokens, ${mb} of weights`
  );
}

/** `text` cut to `max` characters (code points), with "…" when cut. */
function shortText(text, max) {
  const chars = Array.from(String(text));
  return chars.length > max ? `${chars.slice(0, max).join('')}…` : chars.join('');
}

/**
 * The figure export of a run (chrome/page.js figureParts, drawn by chrome/figure.js): every head
 * of every layer, a row of heads per layer, captioned "layer l, head h" (with "(switched off)"
 * when it is) and the role measured on this text under the caption; query and key tokens the
 * grids' labels (tokenLabels); the caption lines: the text, the shape, the heads switched off;
 * the file name's stem.
 * @param {object} run the model's run on screen (mod.EnglishModel.run: layers, heads, n,
 *   attnWeights (layers·heads·n·n), tokens, words, unknown, truncatedTokens)
 * @param {{text: string, off?: string[], roles?: Map<string, string>}} p text: the text the run
 *   read; off: "layer.head" ids; roles: "layer.head" → the caption's measured role
 */
export function englishFigureParts(run, { text, off = [], roles = new Map() }) {
  const { layers, heads, n } = run;
  const labels = tokenLabels(run);
  const all = Array.from({ length: layers * heads }, (_, k) => k);
  const id = (k) => `${Math.floor(k / heads)}.${k % heads}`;
  const unknown = run.unknown.filter(Boolean).length;
  const shape = [
    `${layers} layers × ${heads} heads`,
    `${n} tokens: <bos> and ${n - 1} of the text`,
  ];
  if (unknown) shape.push(`* not in the model’s vocabulary (read as <unk>): ${unknown}`);
  if (run.truncatedTokens > 0) shape.push(`${run.truncatedTokens} more tokens cut`);
  const offNames = off.map((h) => h.split('.')).map(([l, h]) => `layer ${l} head ${h}`);
  return {
    data: {
      weights: run.attnWeights,
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
    stem: `mha-english-l${layers}-h${heads}-n${n}`,
  };
}
