// The English mode's panel, built into index.html's empty #english-panel when the mode is first
// shown (the page's first load carries none of it). Text nodes only (textContent).
import { BY_WORD_RULE, EXAMPLES, HEADS_HELP, LABEL_HELP } from './english_text.js';
import { el } from '../../draw/dom.js';

function withId(e, id) {
  e.id = id;
  return e;
}

/**
 * Fills `panel` and returns its parts by name. The share bar (#share), if the page already put
 * it in the panel, moves to the share slot.
 */
export function buildPanel(panel) {
  const els = { panel };
  const intro = el(
    'p',
    'date-intro',
    'A small English language model (a decoder-only, causal Transformer over subword pieces) ' +
      'runs here in the same C++ attention core: as you type, it predicts the next piece, and every head of every layer ' +
      'shows where each piece (or, by word, each word) looked.',
  );

  const form = withId(el('form', 'controls en-controls'), 'english-controls');
  form.noValidate = true;
  const field = el('div', 'field field-text');
  const label = el('label', '', 'Text');
  label.htmlFor = 'english-text';
  const text = withId(el('textarea', 'en-text'), 'english-text');
  Object.assign(text, { rows: 2, spellcheck: false, maxLength: 20000 });
  text.setAttribute('autocomplete', 'off');
  text.setAttribute('aria-describedby', 'english-help english-tokens-note');
  const help = withId(
    el(
      'p',
      'help',
      'Any text: the model reads it as pieces (a common word is one piece, a rarer one several; each chip below ' +
        'is a word, a thin line between its pieces), and a character its vocabulary lacks as that character’s ' +
        'UTF-8 bytes.',
    ),
    'english-help',
  );
  field.append(label, text, help);

  const actions = el('div', 'en-actions');
  const repeat = withId(el('button', 'en-button', 'Repeat this text'), 'english-repeat');
  repeat.type = 'button';
  const examples = el('div', 'en-examples');
  examples.setAttribute('role', 'group');
  examples.setAttribute('aria-labelledby', 'english-examples-label');
  examples.append(withId(el('span', 'en-examples-label', 'Examples:'), 'english-examples-label'));
  for (const x of EXAMPLES) {
    const b = el('button', 'en-button en-example', x.label);
    b.type = 'button';
    b.dataset.example = x.id;
    examples.append(b);
  }
  actions.append(repeat, examples);
  const look = withId(el('p', 'help en-look'), 'english-look');
  look.setAttribute('aria-live', 'polite');
  form.append(field, actions, look);

  const alert = withId(el('div', 'alert'), 'english-alert');
  alert.setAttribute('role', 'alert');
  const notes = withId(el('div', 'notes'), 'english-notes');
  notes.setAttribute('role', 'status');

  // The tokens as the model reads them, and its prediction.
  const reading = el('section', 'en-reading');
  reading.setAttribute('aria-labelledby', 'english-reading-title');
  const tokensNote = withId(el('p', 'help en-tokens-note'), 'english-tokens-note');
  const tokens = withId(el('ol', 'en-tokens'), 'english-tokens');
  tokens.setAttribute('aria-label', 'Tokens as the model reads them');

  const predict = el('div', 'en-predict');
  const nextTitle = withId(el('h2', '', 'The next piece'), 'english-reading-title');
  const next = withId(el('table', 'en-next'), 'english-next');
  const caption = withId(
    el(
      'caption',
      '',
      'The model’s five most likely next pieces (“·”: a piece that continues the last word)',
    ),
    'english-next-caption',
  );
  const head = el('thead');
  const hr = el('tr');
  for (const t of ['piece', 'probability']) {
    const th = el('th', '', t);
    th.scope = 'col';
    hr.append(th);
  }
  head.append(hr);
  next.append(caption, head, el('tbody'));
  const perplexity = withId(el('p', 'en-perplexity'), 'english-perplexity');
  perplexity.setAttribute('aria-live', 'polite');
  const allOn = withId(el('button', 'link-button', 'Switch every head back on'), 'english-all-on');
  allOn.type = 'button';
  allOn.hidden = true;
  predict.append(nextTitle, next, perplexity, allOn);
  const words = el('div', 'en-words');
  words.append(tokensNote, tokens);
  // The text, what the model read and the notes on the left; the prediction on the right.
  const left = el('div', 'en-left');
  left.append(form, alert, notes, words);
  reading.append(left, predict);

  const legendFigure = el('figure', 'legend en-legend');
  const legendCanvas = withId(el('canvas', 'legend-canvas'), 'english-legend');
  legendCanvas.setAttribute('role', 'img');
  legendCanvas.setAttribute(
    'aria-label',
    'Colour scale: viridis, from weight 0 (dark purple) through 0.5 (teal) to 1 (yellow)',
  );
  legendFigure.append(legendCanvas, el('figcaption', '', 'attention weight'));

  const readout = withId(
    el(
      'p',
      'readout',
      'Point at a cell of the enlarged head, or Tab to it and use the arrow keys, ' +
        'to read its weight; click, tap or Enter locks it.',
    ),
    'english-readout',
  );
  readout.setAttribute('aria-live', 'polite');

  const heads = withId(el('section', 'heads-section en-heads'), 'english-heads-section');
  heads.tabIndex = -1;
  heads.setAttribute('aria-labelledby', 'english-heads-title');
  const layers = withId(el('div', 'en-layers'), 'english-layers');
  const zoom = withId(el('figure', 'head zoom en-zoom'), 'english-zoom');
  zoom.setAttribute('aria-live', 'polite');
  const headsTop = el('div', 'en-heads-top');
  const headsText = el('div');
  headsText.append(
    withId(el('h2', '', 'Every head of every layer'), 'english-heads-title'),
    el('p', 'help', HEADS_HELP),
  );
  // The by-word view: its switch and its rule.
  const view = withId(el('div', 'en-view'), 'english-view');
  const byWordLabel = el('label', 'en-by-word');
  const byWord = withId(el('input'), 'english-by-word');
  byWord.type = 'checkbox';
  byWord.setAttribute('aria-describedby', 'english-by-word-rule');
  byWordLabel.append(byWord, ' By word: merge each word’s pieces');
  view.append(
    byWordLabel,
    withId(el('p', 'help en-by-word-rule', BY_WORD_RULE), 'english-by-word-rule'),
  );
  headsText.append(view);
  headsTop.append(headsText, legendFigure);
  // What every term of the captions means.
  const terms = withId(el('section', 'en-terms'), 'english-terms');
  terms.setAttribute('aria-labelledby', 'english-terms-title');
  const termList = withId(el('dl', 'en-term-list'), 'english-term-list');
  for (const { term, text: line } of LABEL_HELP) {
    const dt = el('dt', '', term);
    dt.dataset.term = term;
    termList.append(dt, el('dd', '', line));
  }
  terms.append(withId(el('h3', '', 'What the captions mean'), 'english-terms-title'), termList);
  heads.append(headsTop, layers, readout, zoom, terms);

  const status = el('section', 'en-status');
  status.setAttribute('aria-label', 'Model');
  const summary = withId(
    el('p', 'summary', 'The English model loads when this tab is opened.'),
    'english-summary',
  );
  const modelInfo = withId(el('p', 'params'), 'english-model-info');
  status.append(summary, modelInfo);

  const shareSlot = withId(el('div', 'share-slot'), 'english-share-slot');
  const share = panel.querySelector('#share');
  if (share) shareSlot.append(share);

  // Which of module 03's kinds of head the model has, measured (filled when the model loads).
  const kinds = withId(el('section', 'explain en-kinds'), 'english-kinds');
  kinds.setAttribute('aria-labelledby', 'english-kinds-title');
  const kindsList = withId(el('ul'), 'english-kinds-list');
  kinds.append(
    withId(el('h2', '', 'Module 03’s kinds in this model'), 'english-kinds-title'),
    withId(
      el(
        'p',
        'help',
        'Module 03 (“What different heads learn”) lists previous-token, positional, punctuation, ' +
          'coreference and content-based heads. Measured on held-out text and probes (scripts/training/evaluate_english_lm.py), ' +
          'each with its chance baseline and the target the model was trained for:',
      ),
      'english-kinds-intro',
    ),
    kindsList,
  );
  kinds.hidden = true;

  // Module 03's claims as experiments (experiments.js fills it when the model loads).
  const experiments = withId(el('section', 'explain en-experiments'), 'english-experiments');
  experiments.setAttribute('aria-labelledby', 'english-experiments-title');
  experiments.hidden = true;

  const explain = el('section', 'explain');
  explain.setAttribute('aria-labelledby', 'english-explain-title');
  const list = el('ul');
  explain.append(withId(el('h2', '', 'What to look for'), 'english-explain-title'), list);

  panel.replaceChildren(intro, reading, heads, status, shareSlot, kinds, experiments, explain);
  Object.assign(els, {
    experiments,
    kinds,
    kindsList,
    form,
    text,
    repeat,
    examples,
    look,
    alert,
    notes,
    tokensNote,
    tokens,
    next,
    nextBody: next.tBodies[0],
    perplexity,
    allOn,
    summary,
    modelInfo,
    legend: legendCanvas,
    byWord,
    readout,
    heads,
    layers,
    zoom,
    shareSlot,
    explainList: list,
  });
  return els;
}
