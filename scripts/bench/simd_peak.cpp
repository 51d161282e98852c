// The wasm SIMD128 float32 multiply-add peak of this machine, for docs/benchmarks.md's "share of
// peak" (issue 6: at least 60 % of it at (512, 768, 12)). Built by scripts/bench.sh into
// build/bench/simd_peak.js (em++ -O3 -msimd128, MODULARIZE: createSimdPeak) and timed from JS
// (scripts/bench/systems.mjs simdPeak) under node and in Chromium.
//
// The loop is what a GEMM micro-kernel does at best: 12 independent four-float accumulators, each
// step a multiply and an add (f32x4.mul, f32x4.add: WebAssembly SIMD128 has no fused multiply-add)
// per accumulator, one scalar load splatted per step so the compiler cannot fold the loop away.
// Floating-point operations per iteration: 12 accumulators x 4 lanes x 2 = 96.
#include <cstdint>

typedef float v4f __attribute__((vector_size(16)));

namespace {
volatile float g_multiplier = 0.999f;  // read through volatile: unknown to the optimiser
}

extern "C" {

/// Runs `iterations` steps; returns a value depending on every accumulator (so none is dropped).
float simd_peak(std::int32_t iterations) {
  v4f acc[12];
  for (int i = 0; i < 12; ++i) acc[i] = v4f{0.0f + static_cast<float>(i), 1.0f, 2.0f, 3.0f};
  const float s = g_multiplier;
  const v4f b0{s, s, s, s}, b1{s * 0.5f, s, s, s};
  for (std::int32_t k = 0; k < iterations; ++k) {
    const float t = g_multiplier;
    const v4f x{t, t, t, t};
    for (int i = 0; i < 12; i += 2) {
      acc[i] += x * b0;
      acc[i + 1] += x * b1;
    }
  }
  v4f sum{0, 0, 0, 0};
  for (int i = 0; i < 12; ++i) sum += acc[i];
  return sum[0] + sum[1] + sum[2] + sum[3];
}

}  // extern "C"
