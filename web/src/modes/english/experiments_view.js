// The English mode's experiments on the heads: their arithmetic and wording, pure (no DOM):
// tested by tests/web/experiments.test.mjs; used by experiments.js.

/**
 * The first checkpoint step at which the best previous-token score reaches `level` (default
 * 0.5, where the head report card starts to name the role), or null when none does.
 */
export function stepFormed(replay, level = 0.5) {
  return replay.steps.find((s) => s.previous_token.value >= level)?.step ?? null;
}

/** The change of a curve after removing `k` heads: value(k) - value(0). */
export function changeAfter(curve, k) {
  return curve.steps[k].value - curve.steps[0].value;
}

/**
 * How many heads a date-model curve removes before exact match falls by more than one point
 * (0.01): the last step k such that every step up to k is within a point of step 0.
 */
export function headsBeforeAPoint(curve) {
  const first = curve.steps[0].value;
  let k = 0;
  while (k + 1 < curve.steps.length && curve.steps[k + 1].value >= first - 0.01 - 1e-12) k += 1;
  return k;
}

/** The level of Olsson et al. 2022's prefix-matching score at which a head counts as induction. */
export const INDUCTION_LEVEL = 0.4;

export const fmt = (x, d = 4) => x.toFixed(d);
export const signed = (x, d = 4) => `${x >= 0 ? '+' : '−'}${Math.abs(x).toFixed(d)}`;

/** The role the head report card gives a head with no score past its threshold. */
const NO_PATTERN = 'no clear pattern';

/**
 * What the sweep shows about one head against many, in words from its numbers: the roles each
 * layer's heads earn, or, when no head of any model earns one, that the sweep is too short to
 * tell; the spread of the losses; and the nearest other head of a layer (Jensen–Shannon
 * distance) as the head count grows.
 */
export function oneHeadNote(s) {
  const one = s.models.find((m) => m.num_heads === 1);
  const many = s.models.filter((m) => m.num_heads > 1);
  if (!one || !many.length) return '';
  const losses = s.models.map((m) => m.loss_per_char);
  const spread = Math.max(...losses) - Math.min(...losses);
  const widest = many[many.length - 1];
  const prev = s.models.map((m) => m.best.previous_token_argmax.value);
  const formed = s.models.some((m) => m.roles.some((r) => r.some((x) => x !== NO_PATTERN)));
  const roles = (m) => m.roles.map((r, l) => `L${l}: ${[...new Set(r)].join(', ')}`).join('; ');
  const patterns = formed
    ? `With one head a layer each layer has one pattern (${roles(one)}); with ${widest.num_heads} heads a layer holds several (${roles(widest)}).`
    : `After ${s.steps} steps no head of any of these models has a clear pattern (the best previous-token score ` +
      `${Math.min(...prev).toFixed(2)} to ${Math.max(...prev).toFixed(2)}, chance ${one.best.previous_token_argmax.chance.toFixed(2)}): ` +
      'this sweep is too short to show what one head cannot hold.';
  return (
    `${patterns} Their losses lie within ${spread.toFixed(4)} nats per character of each other. ` +
    `The nearest other head of a layer (Jensen–Shannon distance, 0: the same pattern) goes from ` +
    `${many[0].nearest_js.toFixed(2)} with ${many[0].num_heads} heads to ${widest.nearest_js.toFixed(2)} with ${widest.num_heads}.`
  );
}
