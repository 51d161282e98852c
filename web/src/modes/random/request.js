// The random-embeddings mode's request: the controls' settings, the mask fields and the explain
// keys as one numpyExperiment request for the core, or the reason a setting is refused.
import { keepsIntermediates } from '../../compute/cost.js';
import { fitExplain, maskLimits, readMaskControls } from '../../explain/explain_state.js';
import { maskFields } from '../../explain/masks.js';
import { errorMessage } from '../../chrome/alerts.js';
import { checkPageLimits, readControls } from './random_state.js';

/**
 * The request for the settings of `controls` (controls.js RandomControls; its mask fields are
 * limited to the token count here).
 * @param {import('../../../../cpp/bindings/wasm/mha_wasm').MhaCoreModule} core the attention core
 *   (windowMask, parameterCount)
 * @param {object} controls the mode's form
 * @param {object} explainState the explain keys on show (explain/explain_state.js)
 * @param {{cell: object|null, needsParameters: () => boolean}} explain the explain panels: a locked
 *   cell asks for the full forward, an open compare or ablation panel for X and the weights
 * @returns {{request: object, state: object, tokens: string[], explained: object, fields: object}
 *   | {refused: string, maskKey?: string}} the request, or why a setting is refused (the core's
 *   Error message for a (d_model, num_heads) pair it refuses)
 */
export function experimentRequest(core, controls, explainState, explain) {
  const read = readControls(controls.raw());
  if (read.ok === false) return { refused: read.message };
  const { state, tokens } = read;
  controls.limitMaskFields(maskLimits(tokens.length));
  const masks = readMaskControls(controls.rawMask(), tokens.length);
  if (masks.ok === false) return { refused: masks.message, maskKey: masks.key };
  const explained = fitExplain({ ...explainState, ...masks.value }, tokens.length, state.num_heads);
  const fields = maskFields(explained, tokens.length, (n, window) =>
    core.windowMask({ n, window }),
  );
  /** @type {import('../../../../cpp/bindings/wasm/mha_wasm').ExperimentRequest} */
  let request;
  try {
    // The module is the authority on (d_model, num_heads): zero, negative or non-dividing
    // head counts throw an Error that names the values, shown as is.
    core.parameterCount({ d_model: state.d_model, num_heads: state.num_heads });
    const limitMessage = checkPageLimits(state);
    if (limitMessage) return { refused: limitMessage };
    request = {
      seed: state.seed,
      tokens: tokens.length,
      d_model: state.d_model,
      num_heads: state.num_heads,
      // float64 as numpy up to the core's experimentFloat64MaxWork multiply-adds (every course
      // example), float32 above; the result says which, and so does #precision.
      precision: 'auto',
      positional: state.positional,
      is_causal: state.causal,
      ...fields,
    };
    // The grids need the weights only: no value projection, A·V or out_proj, no q, k or scores
    // (about half the work when n < 2·d_model; the float64 path computes everything anyway).
    // The step panel's q, k, scores, a·v_j and y_i need the full forward: asked for while a
    // cell is locked there, and only while they stay small (MAX_KEPT_WEIGHTS).
    if (!explain.cell) request.weights_only = true;
    if (!explain.cell || !keepsIntermediates(state.num_heads, tokens.length))
      request.keep_intermediates = false;
    // X and the weights (4 MiB at d_model 512) only for the panels that run the layer on them.
    if (!explain.needsParameters()) request.return_parameters = false;
  } catch (e) {
    return { refused: errorMessage(e) };
  }
  return { request, state, tokens, explained, fields };
}
