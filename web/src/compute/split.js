// The grids' request split between two workers by heads, and the halves' answers joined.

/** The two halves of `request`: heads [0, a) for the first worker, [a, h) for the second. */
export function splitRequest(request) {
  const half = Math.ceil(request.num_heads / 2);
  return [
    { ...request, first_head: 0, head_count: half },
    { ...request, first_head: half },
  ];
}

/**
 * The result for every head from the two workers' halves (heads [0, a) and [a, h)): their weights
 * and fully masked rows one after the other; the rest as the first half says, without its
 * first_head and head_count. The weights are joined when first read: the grids colour each
 * head from its half (`headWeights`, not enumerable), so an update does not pay for copying every
 * head's weights (12 heads of 512 x 512 are 12.6 MB); a hover, a table or a panel pays it later,
 * once.
 */
export function joinHeads(first, second) {
  const join = (Type, a, b) => {
    const out = new Type(a.length + b.length);
    out.set(a);
    out.set(b, a.length);
    return out;
  };
  const { first_head: _f, head_count: _c, attn_weights: _a, ...rest } = first;
  let weights = null;
  const joined = {
    ...rest,
    fully_masked_rows: join(Uint8Array, first.fully_masked_rows, second.fully_masked_rows),
  };
  Object.defineProperty(joined, 'attn_weights', {
    enumerable: true,
    get: () => (weights ??= join(Float32Array, first.attn_weights, second.attn_weights)),
  });
  // Each head's (n, m) weights: a view into its half's (the joined array is not made for them).
  const size = first.n * first.m;
  Object.defineProperty(joined, 'headWeights', {
    value: [first, second].flatMap(({ attn_weights: w }) =>
      Array.from({ length: w.length / size }, (_, i) => w.subarray(i * size, i * size + size)),
    ),
  });
  if (first.pixels && second.pixels) joined.pixels = [...first.pixels, ...second.pixels];
  else delete joined.pixels;
  return joined;
}
