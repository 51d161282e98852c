// The English mode's experiments on heads (docs/head-experiments.md, docs/head-experiments.md): module
// 03's claims as measurements a learner predicts first, then sees. Each is a <details> whose
// question must be answered before its result shows:
//   pruning      the English model's greedy pruning curve (mha prune, web/english_lm_prune.json),
//                its removal order, and the reader's own point: the heads switched off in the
//                grids above, measured on the same held-out half (EnglishModel.heldoutLoss)
//   date         the date model's curve (web/date_model_prune.json)
//   sweep        one to sixteen heads at the same d_model (web/head_count_sweep.json)
//   replay       the training's checkpoints: the best previous-token and induction heads, the
//                in-context score and the loss at each step (web/english_lm_replay.json)
// The data come with the English mode's script (scripts/build_web.mjs); a curve measured on
// another model file than the one loaded is not shown.
import { el, h } from '../../draw/dom.js';
import { curvePng, curveSvg, svgText } from '../../draw/curve.js';
import { downloadBlob } from '../../chrome/snapshot.js';
import { OneHeadComparison } from './one_head.js';
import {
  changeAfter,
  fmt,
  headsBeforeAPoint,
  INDUCTION_LEVEL,
  oneHeadNote,
  signed,
  stepFormed,
} from './experiments_view.js';

/** The result's first line: `text`, then whether the reader's answer was right (data-verdict). */
function verdictOf(text, right) {
  const p = el(
    'p',
    'en-exp-verdict',
    `${text} ${right ? 'As you predicted.' : 'Not what you predicted.'}`,
  );
  p.dataset.verdict = right ? 'right' : 'wrong';
  return p;
}

/**
 * A result table: its caption, a header row of `columns` and an empty body to fill.
 * @returns {{table: HTMLTableElement, body: HTMLTableSectionElement}}
 */
function resultTable(id, caption, columns) {
  const head = h('tr');
  for (const t of columns) head.append(h('th', { text: t, attrs: { scope: 'col' } }));
  const body = h('tbody');
  const table = h(
    'table',
    { className: 'en-exp-table', id },
    h('caption', { text: caption }),
    h('thead', {}, head),
    body,
  );
  return {
    table: /** @type {HTMLTableElement} */ (table),
    body: /** @type {HTMLTableSectionElement} */ (body),
  };
}

/** A curve's removal order, closed: one item per step, `line(step)` (`id` on the list). */
function removalOrder(c, line, id) {
  const order = h('ol', { className: 'en-exp-order', ...(id ? { id } : {}) });
  for (const s of c.steps.slice(1)) order.append(h('li', { text: line(s) }));
  return h(
    'details',
    { className: 'en-exp-more' },
    h('summary', { text: 'The removal order' }),
    order,
  );
}

export class HeadExperiments {
  /**
   * @param {HTMLElement} section the panel's #english-experiments (empty)
   * @param {{english: any, date: any, sweep: any, replay: any, heldout: string[], oneHead: any}|null} data
   * @param {{model: () => any, off?: () => string[], mod: () => any, text: () => string,
   *   modules: object, announce?: (s: string) => void}} hooks off: the heads switched off (the
   *   page's grids; without it, as in the element, no "measure mine")
   */
  constructor(section, data, hooks) {
    this.section = section;
    this.data = data;
    this.hooks = hooks;
    this.marks = [];
    this.els = {};
  }

  /**
   * Builds the section for the loaded model (its checksum decides whether its pruning curve
   * shows). With `only` (the element's experiment attribute): that experiment alone, open, and
   * no heading. Returns the title of what was built (only: null when the build lacks it).
   * @param {string} checksum
   * @param {{only?: string}} [options]
   * @returns {string|null}
   */
  build(checksum, { only } = {}) {
    const d = this.data;
    const makers = {
      prune: () =>
        d.english && d.english.checksum === checksum ? this.pruneEnglish(d.english) : null,
      date: () => (d.date ? this.pruneDate(d.date) : null),
      sweep: () => (d.sweep ? this.sweep(d.sweep) : null),
      replay: () => (d.replay ? this.replay(d.replay) : null),
    };
    if (only) {
      const box = d ? makers[only]?.() : null;
      this.section.replaceChildren(...(box ? [box] : []));
      if (!box) return null;
      box.open = true;
      return box.querySelector('summary').textContent;
    }
    this.section.replaceChildren(
      h('h2', { id: 'english-experiments-title', text: 'Experiments on the heads' }),
      el(
        'p',
        'help',
        'Module 03 claims that heads learn different things, that many are redundant, and that adding heads without bound ' +
          'does not help. Each experiment below measured one claim on a trained model: answer its question first, then see.',
      ),
    );
    this.section.hidden = !d;
    if (!d) return null;
    if (d.english && d.english.checksum !== checksum)
      this.section.append(
        el(
          'p',
          'help',
          'The pruning curve was measured on another model file than the one loaded here; it is not shown.',
        ),
      );
    for (const make of Object.values(makers)) {
      const box = make();
      if (box) this.section.append(box);
    }
    return 'Experiments on the heads';
  }

  /** A <details> with a question (radio choices) and a result shown once a choice is made. */
  experiment(id, title, question, choices, reveal) {
    const box = h(
      'details',
      { className: 'en-exp', id: `english-exp-${id}` },
      h('summary', { text: title }),
    );
    const form = h('fieldset', { className: 'en-exp-question' }, h('legend', { text: question }));
    for (const [value, label] of choices) {
      const input = h('input', { attrs: { type: 'radio', name: `english-exp-${id}`, value } });
      form.append(h('label', { className: 'en-exp-choice' }, input, ` ${label}`));
    }
    const show = h('button', {
      className: 'en-button',
      text: 'Show the measurement',
      attrs: { type: 'button', disabled: '' },
    });
    show.dataset.reveal = id;
    const result = h('div', { className: 'en-exp-result' });
    result.hidden = true;
    form.addEventListener('change', () => show.removeAttribute('disabled'));
    show.addEventListener('click', () => {
      const chosen = form.querySelector('input:checked');
      if (!chosen) return;
      result.replaceChildren(
        ...reveal(chosen.value, choices.find((c) => c[0] === chosen.value)[1]),
      );
      result.hidden = false;
      const verdict = result.querySelector('.en-exp-verdict');
      verdict.tabIndex = -1;
      verdict.focus();
    });
    box.append(form, show, result);
    return box;
  }

  /** The chart of a curve (`params()`: curveScene's parameters) with Save SVG and Save PNG. */
  chartFigure(name, params, caption) {
    const holder = h('div', { className: 'en-exp-chart' });
    const draw = () => holder.replaceChildren(curveSvg(params()));
    draw();
    const save = (kind) => async () => {
      if (kind === 'svg') {
        const svg = holder.querySelector('svg');
        downloadBlob(new Blob([svgText(svg)], { type: 'image/svg+xml' }), `${name}.svg`);
      } else downloadBlob(await curvePng(params()), `${name}.png`);
    };
    const svgButton = h('button', {
      className: 'link-button',
      text: 'Save SVG',
      attrs: { type: 'button' },
    });
    const pngButton = h('button', {
      className: 'link-button',
      text: 'Save PNG',
      attrs: { type: 'button' },
    });
    svgButton.addEventListener('click', save('svg'));
    pngButton.addEventListener('click', save('png'));
    const figure = h(
      'figure',
      { className: 'en-exp-figure' },
      holder,
      h('figcaption', { text: caption }),
      h('p', { className: 'en-exp-save' }, svgButton, ' ', pngButton),
    );
    return { figure, redraw: draw };
  }

  pruneEnglish(c) {
    const n = c.heads.length;
    const half = Math.floor(n / 2);
    const delta = changeAfter(c, half);
    const bucket = delta < 0.02 ? 'little' : delta <= 0.1 ? 'some' : 'lot';
    return this.experiment(
      'prune',
      'Pruning: how many heads can go?',
      `This model has ${n} heads. Remove them one at a time, always the one whose loss matters least on held-out text. ` +
        `With half of them (${half}) gone, how much worse is the loss per character?`,
      [
        ['little', 'hardly (less than 0.02 nats per character)'],
        ['some', 'somewhat (0.02 to 0.1)'],
        ['lot', 'a lot (more than 0.1)'],
      ],
      (value, label) => {
        const points = c.steps.map((s, k) => [k, s.value]);
        const chart = this.chartFigure(
          'english-pruning',
          () => ({
            points,
            marks: this.marks,
            title: 'English model: loss per character, heads removed',
            xLabel: 'heads removed (cheapest first)',
            yLabel: 'loss per character (nats)',
            yFormat: (y) => y.toFixed(2),
            desc: 'Greedy pruning: at each step the head whose removal costs least on other held-out sentences is removed.',
          }),
          `Greedy pruning (mha prune): each head chosen on ${c.selection_items.toLocaleString('en-US')} held-out sentences, the loss measured on ${c.measurement_items.toLocaleString('en-US')} others.` +
            (this.hooks.off
              ? ' Orange: the heads you switched off in the grids above, measured on the same sentences.'
              : ''),
        );
        this.redrawEnglish = chart.redraw;
        const verdict = verdictOf(
          `You said “${label}”. Measured: with ${half} of ${n} heads removed the loss is ${fmt(c.steps[half].value)} ` +
            `nats per character against ${fmt(c.steps[0].value)} with all on: ${signed(delta)} ` +
            `(${signed((100 * delta) / c.steps[0].value, 1)} %). Every head removed: ${signed(changeAfter(c, n))}.`,
          value === bucket,
        );
        const order = removalOrder(
          c,
          (st) => `${st.removed}: ${fmt(st.value)} (${signed(st.value - c.steps[0].value)})`,
          'english-exp-prune-order',
        );
        if (!this.hooks.off) return [verdict, chart.figure, order];
        const mine = h('button', {
          className: 'en-button',
          id: 'english-exp-mine',
          text: 'Measure the heads I switched off',
          attrs: { type: 'button' },
        });
        const status = h('p', {
          className: 'help',
          id: 'english-exp-mine-status',
          attrs: { 'aria-live': 'polite' },
        });
        mine.addEventListener('click', () => this.measureMine(c, status));
        return [
          verdict,
          chart.figure,
          h(
            'p',
            { className: 'help' },
            'Switch heads off in the grids above (each head’s “switch this head off”), then:',
          ),
          mine,
          status,
          order,
        ];
      },
    );
  }

  /** The reader's point: the heads off now, on the curve's measurement sentences. */
  measureMine(c, status) {
    const model = this.hooks.model();
    const off = this.hooks.off();
    if (!model) return;
    const ablate = off.map((id) => id.split('.').map(Number));
    const names = ablate.map(([l, hd]) => `L${l} H${hd}`);
    const t0 = performance.now();
    let loss;
    try {
      loss = model.heldoutLoss(this.data.heldout, { ablate });
    } catch (e) {
      status.textContent = `Could not measure: ${e.message}`;
      return;
    }
    const k = off.length;
    const y = loss.perCharacter;
    this.marks = this.marks.filter((m) => m.x !== k || m.key !== off.join(','));
    this.marks.push({ x: k, y, label: `yours (${k} off)`, key: off.join(',') });
    this.redrawEnglish?.();
    status.textContent =
      `${k === 0 ? 'No head switched off' : `${k} head${k === 1 ? '' : 's'} off (${names.join(', ')})`}: ${fmt(y)} nats per character ` +
      `on the same ${loss.texts} sentences; the curve at ${k} removed: ${fmt(c.steps[Math.min(k, c.steps.length - 1)].value)} ` +
      `(${Math.round(performance.now() - t0)} ms).`;
    status.dataset.loss = String(y);
    this.hooks.announce?.(status.textContent);
  }

  pruneDate(c) {
    const n = c.heads.length;
    const k = headsBeforeAPoint(c);
    const bucket = k <= 4 ? 'few' : k <= 12 ? 'half' : 'most';
    return this.experiment(
      'date',
      'Pruning the date model: when does it lose a point?',
      `The date translator has ${n} heads (encoder, decoder and cross-attention). Removing them one at a time, cheapest first, ` +
        'how many can go before its exact match falls by more than one point (module 03: “removing half the heads costs less than one point”)?',
      [
        ['few', '4 or fewer'],
        ['half', '5 to 12 (up to half)'],
        ['most', 'more than half'],
      ],
      (value, label) => {
        const chart = this.chartFigure(
          'date-pruning',
          () => ({
            points: c.steps.map((s, i) => [i, 100 * s.value]),
            title: 'Date model: exact match, heads removed',
            xLabel: 'heads removed (cheapest first)',
            yLabel: 'exact match (%)',
            yFormat: (y) => y.toFixed(0),
          }),
          `Greedy pruning (mha prune): each head chosen on ${c.selection_items.toLocaleString('en-US')} held-out dates, exact match measured on ${c.measurement_items.toLocaleString('en-US')} others.`,
        );
        const half = Math.floor(n / 2);
        const verdict = verdictOf(
          `You said “${label}”. Measured: ${k} of ${n} heads go before exact match falls by more than a point ` +
            `(${(100 * c.steps[0].value).toFixed(1)} % with all on); with half (${half}) removed it is ${(100 * c.steps[half].value).toFixed(1)} % ` +
            `(${signed(100 * changeAfter(c, half), 1)} points).`,
          value === bucket,
        );
        const order = removalOrder(c, (st) => `${st.removed}: ${(100 * st.value).toFixed(1)} %`);
        return [verdict, chart.figure, order];
      },
    );
  }

  sweep(s) {
    const best = s.models.reduce((a, b) => (b.loss_per_char < a.loss_per_char ? b : a));
    const one = s.models.find((m) => m.num_heads === 1);
    return this.experiment(
      'sweep',
      'One head or sixteen?',
      `The same model trained with 1, 2, 4, 8 and 16 heads at d_model ${s.models[0].d_head * s.models[0].num_heads}: the same attention parameters, ` +
        `data, seeds and ${s.steps} steps. Which head count gives the lowest held-out loss?`,
      s.models.map((m) => [
        String(m.num_heads),
        `${m.num_heads} head${m.num_heads === 1 ? '' : 's'}`,
      ]),
      (value) => {
        const { table, body } = resultTable(
          'english-exp-sweep-table',
          `Held-out loss per character (${s.models[0].sentences} sentences) and what the heads do (the head report card on ${s.windows} windows)`,
          [
            'heads',
            'd_head',
            'attention parameters (all)',
            'loss per character',
            'best previous-token head (chance)',
            'roles by layer',
            'nearest other head (JS distance)',
          ],
        );
        for (const m of s.models) {
          const p = m.best.previous_token_argmax;
          const tr = h('tr', { data: { heads: m.num_heads } });
          tr.append(
            h('th', { text: m.num_heads, attrs: { scope: 'row' } }),
            h('td', { text: m.d_head }),
            h('td', {
              text: `${m.attention_parameters.toLocaleString('en-US')} (${m.parameters.toLocaleString('en-US')})`,
            }),
            h('td', { text: fmt(m.loss_per_char), data: { loss: m.loss_per_char } }),
            h('td', { text: `${p.value.toFixed(2)} (${p.chance.toFixed(2)})` }),
            h('td', { text: m.roles.map((r) => [...new Set(r)].join(', ')).join(' / ') }),
            h('td', { text: m.nearest_js === null ? '—' : m.nearest_js.toFixed(2) }),
          );
          body.append(tr);
        }
        const losses = s.models.map((m) => m.loss_per_char);
        const verdict = verdictOf(
          `You said ${value}. Measured: ${best.num_heads} head${best.num_heads === 1 ? '' : 's'} ` +
            `give${best.num_heads === 1 ? 's' : ''} the lowest loss (${fmt(best.loss_per_char)}), ` +
            `but all ${s.models.length} lie within ${fmt(Math.max(...losses) - Math.min(...losses))} nats per character` +
            `${best.num_heads === 1 ? '' : `; one head ${fmt(one.loss_per_char)}`}.`,
          value === String(best.num_heads),
        );
        return [
          verdict,
          table,
          el('p', 'help', oneHeadNote(s)),
          ...new OneHeadComparison(this.data, this.hooks).parts(),
        ];
      },
    );
  }

  replay(r) {
    const formed = stepFormed(r);
    const steps = r.steps.map((x) => x.step);
    const bins = [
      ['early', `by step ${steps[1]}`],
      ['middle', `between steps ${steps[1]} and ${steps[Math.min(3, steps.length - 1)]}`],
      ['late', `after step ${steps[Math.min(3, steps.length - 1)]}`],
      ['never', 'never'],
    ];
    const bin =
      formed === null
        ? 'never'
        : formed <= steps[1]
          ? 'early'
          : formed <= steps[Math.min(3, steps.length - 1)]
            ? 'middle'
            : 'late';
    return this.experiment(
      'replay',
      'Training replay: when do the heads form?',
      `The model was saved every ${steps[1] - steps[0]} steps while it trained. At step 0 no head prefers the previous piece. ` +
        'When does a previous-token head appear (its score on held-out text reaching 0.5)?',
      bins,
      (value, label) => {
        const last = r.steps[r.steps.length - 1];
        const prev = this.chartFigure(
          'english-replay-previous-token',
          () => ({
            points: r.steps.map((x) => [x.step, x.previous_token.value]),
            title: 'Best previous-token head (Voita argmax) during training',
            xLabel: 'training step',
            yLabel: 'share of rows on the previous piece',
          }),
          `The best head's previous-token score at each checkpoint, on ${r.windows} held-out windows; chance ${last.previous_token.chance.toFixed(2)}.`,
        );
        const icl = this.chartFigure(
          'english-replay-in-context',
          () => ({
            points: r.steps.map((x) => [x.step, x.in_context]),
            title: 'In-context score during training (Olsson et al. 2022)',
            xLabel: 'training step',
            yLabel: 'loss at token 100 − at token 10 (nats)',
          }),
          'Below zero: later tokens are predicted better than early ones, the context helps (Olsson et al. 2022 use the 500th and the 50th token; this model reads 128).',
        );
        const { table, body } = resultTable(
          'english-exp-replay-table',
          `Each checkpoint on held-out text (${r.sentences} sentences for the loss)`,
          [
            'step',
            'loss per character',
            'previous token (chance)',
            'induction (chance)',
            'in-context score',
          ],
        );
        for (const x of r.steps)
          body.append(
            h(
              'tr',
              { data: { step: x.step } },
              h('th', { text: x.step, attrs: { scope: 'row' } }),
              h('td', { text: fmt(x.loss_per_char) }),
              h('td', {
                text: `${x.previous_token.value.toFixed(2)} (${x.previous_token.chance.toFixed(2)}) ${x.previous_token.head}`,
              }),
              h('td', {
                text: `${x.induction.value.toFixed(2)} (${x.induction.chance.toFixed(2)})`,
              }),
              h('td', { text: signed(x.in_context, 3) }),
            ),
          );
        const induction = r.steps.find((x) => x.induction.value >= INDUCTION_LEVEL);
        const verdict = verdictOf(
          `You said “${label}”. Measured: ${
            formed === null
              ? 'no head reaches 0.5'
              : `the previous-token head reaches 0.5 at step ${formed}`
          } (${r.steps.map((x) => x.previous_token.value.toFixed(2)).join(' → ')}). ` +
            (induction
              ? `An induction head (Olsson’s score ${INDUCTION_LEVEL} or more) forms by step ${induction.step}.`
              : `No induction head forms: the best induction score stays at most ${Math.max(...r.steps.map((x) => x.induction.value)).toFixed(2)} ` +
                `(chance ${last.induction.chance.toFixed(2)}; Olsson’s heads score ${INDUCTION_LEVEL} or more).`),
          value === bin,
        );
        return [verdict, prev.figure, icl.figure, table];
      },
    );
  }
}
