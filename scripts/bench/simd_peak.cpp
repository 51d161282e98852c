// The wasm SIMD128 float32 multiply-add peak of this machine, for docs/benchmarks.md's "share of
// peak" (the target: at least 60 % of it at (512, 768, 12)). Built by scripts/bench.sh into
// build/bench/simd_peak.js (em++ -O3 -msimd128, MODULARIZE: createSimdPeak) and timed from JS
// (scripts/bench/systems.mjs simdPeak) under node and in Chromium.
//
// The loop is what a GEMM micro-kernel does at best, with B held in registers: per step, R rows
// each broadcast one float loaded from memory (v128.load32_splat) and multiply it with two
// four-float vectors, adding into 2R independent accumulators: 2R f32x4.mul and 2R f32x4.add
// (WebAssembly SIMD128 has no fused multiply-add), 16 flops per row per step. Every product is
// distinct, so the compiler can fold none of them away. (One splat multiplied with two fixed
// vectors for all 12 accumulators would not do: clang computes the two products once per step,
// so such a loop runs 2 multiplies and 12 adds for 96 counted flops, and its "peak" mostly
// measures f32x4.add: 33.1 GFLOP/s in node 20, 43.8 in Chromium 156, on a machine where this
// loop gives about 33-35 in both.)
// R = 4, 5, 6 (simd_peak_rows): V8 on x64 keeps 15 of the 16 xmm registers for code, and
// R = 6 needs 12 accumulators + 2 B + the splat + a product = 16, so it spills one accumulator;
// the JS side takes the best of the three.
#include <cstdint>

typedef float v4f __attribute__((vector_size(16)));

namespace {

constexpr int kValues = 1920;  // floats broadcast per pass (7.5 KiB, L1): divisible by 4, 5, 6
float g_values[kValues];
volatile float g_multiplier = 0.999f;  // read through volatile: unknown to the optimiser

template <int R>
float peak_rows(std::int32_t passes) {
  v4f lo[R], hi[R];
  for (int r = 0; r < R; ++r) {
    lo[r] = v4f{0, 0, 0, 0};
    hi[r] = v4f{1, 1, 1, 1};
  }
  const float s = g_multiplier;
  const v4f b0{s, s, s, s}, b1{s * 0.5f, s, s, s};
  for (std::int32_t pass = 0; pass < passes; ++pass) {
    const float* p = g_values;
    for (int k = 0; k < kValues / R; ++k, p += R) {
      for (int r = 0; r < R; ++r) {
        const v4f x{p[r], p[r], p[r], p[r]};
        lo[r] += x * b0;
        hi[r] += x * b1;
      }
    }
  }
  v4f sum{0, 0, 0, 0};
  for (int r = 0; r < R; ++r) sum += lo[r] + hi[r];
  return sum[0] + sum[1] + sum[2] + sum[3];
}

}  // namespace

extern "C" {

/// Runs `passes` passes over the broadcast values with R = `rows` (4, 5 or 6; else 0 is
/// returned and nothing runs): 1920 x 16 = 30,720 flops per pass. Returns a value depending on
/// every accumulator (so none is dropped).
float simd_peak_rows(std::int32_t rows, std::int32_t passes) {
  for (int i = 0; i < kValues; ++i) g_values[i] = g_multiplier * static_cast<float>(i % 7);
  switch (rows) {
    case 4: return peak_rows<4>(passes);
    case 5: return peak_rows<5>(passes);
    case 6: return peak_rows<6>(passes);
    default: return 0.0f;
  }
}

}  // extern "C"
