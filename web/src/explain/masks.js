// The masks of the random-embeddings mode, as the core's request fields (docs/js-api.md):
// boolean masks in PyTorch polarity, true (1) = may not attend. Pure: tests/js/masks.test.mjs.
//
// Shapes (n = tokens): attn_mask (n, n) row-major Uint8Array, key_padding_mask (n) Uint8Array.

/**
 * The request fields for the extra mask of `state` ({mask, pad, window, drawn}) over n tokens.
 * The causal mask stays the core's own `is_causal` flag (combined with these by the core).
 *   padding: key_padding_mask, the last `pad` keys ignored;
 *   window:  attn_mask, query i may not attend to key j when |i - j| > window (a band of
 *            half-width `window`; with causal, only the keys i - window … i remain);
 *   drawn:   attn_mask, the drawn cells [[i, j], …] may not attend.
 * @param {(n: number, window: number) => Uint8Array} [windowMask] the core's sliding-window mask
 *   (mod.windowMask): needed for the window mask, whose rule is the core's
 * @returns {{attn_mask?: Uint8Array, key_padding_mask?: Uint8Array}}
 * @throws {Error} for the window mask without `windowMask`
 */
export function maskFields(state, n, windowMask = null) {
  switch (state.mask) {
    case 'padding': {
      const kpm = new Uint8Array(n);
      for (let j = Math.max(0, n - state.pad); j < n; j++) kpm[j] = 1;
      return { key_padding_mask: kpm };
    }
    case 'window':
      if (!windowMask)
        throw new Error("maskFields: the window mask is the core's (pass its windowMask)");
      return { attn_mask: windowMask(n, state.window) };
    case 'drawn': {
      const m = new Uint8Array(n * n);
      for (const [i, j] of state.drawn) if (i < n && j < n) m[i * n + j] = 1;
      return { attn_mask: m };
    }
    default:
      return {};
  }
}

/** Toggles cell [i, j] in a drawn-cell list, returning a new sorted list. */
export function toggleCell(cells, i, j) {
  const has = cells.some(([a, b]) => a === i && b === j);
  const next = has ? cells.filter(([a, b]) => a !== i || b !== j) : [...cells, [i, j]];
  return next.sort((a, b) => a[0] - b[0] || a[1] - b[1]);
}

/** One line describing the mask in force, for the summary and the step panel. */
export function maskDescription(state, n) {
  const parts = [];
  if (state.causal) parts.push('causal (key j > query i masked)');
  switch (state.mask) {
    case 'padding':
      parts.push(
        state.pad === 0
          ? 'key padding: none of the keys'
          : `key padding: the last ${state.pad} of ${n} key${n === 1 ? '' : 's'} ignored`,
      );
      break;
    case 'window':
      parts.push(`sliding window: |i − j| ≤ ${state.window}`);
      break;
    case 'drawn':
      parts.push(`drawn: ${state.drawn.length} cell${state.drawn.length === 1 ? '' : 's'} masked`);
      break;
    default:
  }
  return parts.length ? parts.join(' + ') : 'no mask';
}
