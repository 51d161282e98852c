// Warm-up of a freshly started attention core (issue 6: the page's first updates).
//
// V8 compiles a WebAssembly module with its baseline compiler (Liftoff) first and optimises a
// function (TurboFan) only once it has run enough ("dynamic tiering"). Without a warm-up, the
// first large requests of a page run the GEMM kernels in baseline code (a trace in headless
// Chromium: 77 ms for 64 tokens at d_model 512 in the worker, 51 ms with this warm-up). A few
// small forwards make the kernels hot; V8 then optimises them in the background.

/** Runs `calls` small forwards (96 tokens, d_model 64, 4 heads: about 3 M multiply-adds each). */
export function warmUp(mod, calls = 12) {
  const n = 96, d = 64;
  const fill = (count, k) => Float32Array.from({ length: count }, (_, i) => Math.sin(i * k) * 0.1);
  const layer = new mod.MultiheadAttention({
    d_model: d, num_heads: 4, in_proj_weight: fill(3 * d * d, 0.37), out_proj_weight: fill(d * d, 0.53),
  });
  try {
    const query = fill(n * d, 1.3);
    for (let i = 0; i < calls; i++) layer.forwardViews({ n, query });
  } finally {
    layer.delete();
  }
}
