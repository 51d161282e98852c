// Warm-up of a freshly started attention core, for the page's first updates.
//
// V8 compiles a WebAssembly module with its baseline compiler (Liftoff) first and optimises a
// function (TurboFan) only once it has run enough ("dynamic tiering"). Without a warm-up, the
// first large requests of a page run in baseline code, several times slower than once they are
// optimised (docs/benchmarks.md). A few small calls of what the page runs make those functions
// hot; V8 then optimises them in the background.

/**
 * Runs `calls` small forwards of the layer (96 tokens, d_model 64, 4 heads: about 3 M
 * multiply-adds each) and as many float32 numpyExperiment calls the way the page asks for its
 * grids (40 tokens, d_model 128, 4 heads; `seed`: the page's, so that its kept draws stay).
 */
export function warmUp(mod, { calls = 12, seed = 0 } = {}) {
  const n = 96,
    d = 64;
  const fill = (count, k) => Float32Array.from({ length: count }, (_, i) => Math.sin(i * k) * 0.1);
  const layer = new mod.MultiheadAttention({
    d_model: d,
    num_heads: 4,
    in_proj_weight: fill(3 * d * d, 0.37),
    out_proj_weight: fill(d * d, 0.53),
  });
  try {
    const query = fill(n * d, 1.3);
    for (let i = 0; i < calls; i++) layer.forwardViews({ n, query });
  } finally {
    layer.delete();
  }
  for (let i = 0; i < calls; i++) {
    mod.numpyExperiment({
      seed,
      tokens: 40 + (i % 2),
      d_model: 128,
      num_heads: 4,
      precision: 'float32',
      weights_only: true,
      keep_intermediates: false,
      return_parameters: false,
    });
  }
}
