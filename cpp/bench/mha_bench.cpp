// mha_bench: times one self-attention forward of the native core, for scripts/bench.sh and
// docs/benchmarks.md. Not a test (rule 6): it asserts nothing, it measures.
//
//   build/native/mha_bench N D_MODEL NUM_HEADS [REPS] [--seed S]
//
// Runs `REPS` (default 20) forwards of one mha::MultiheadAttention layer (validated once, as a
// model would hold it) on x (N, D_MODEL) with random weights, after 2 untimed warm-up runs, and
// prints one JSON line:
//   {"impl": "mha-lab native", "n", "d_model", "num_heads", "reps", "median_ms", "min_ms",
//    "max_ms", "median_cpu_ms", "flop", "gflop_per_s", "simd", "gemm", "keep_intermediates": false}
// gemm: the build's GEMM back end (mha::kernels::gemm_backend: "eigen+openblas", "eigen" or
// "blocked"). With OpenBLAS the run is multi-threaded (OpenBLAS uses every core, 2 on these
// machines) unless OPENBLAS_NUM_THREADS=1, as scripts/bench.sh sets it: set it for
// single-thread figures.
// median_cpu_ms: process CPU time per run (std::clock) — on a shared machine wall time also counts
// the time other processes held the CPU; CPU time does not.
// Per-head weights (h, n, n) are computed and returned by every run (never averaged); the
// intermediates (q, k, v, scores, head outputs) are not kept, as PyTorch's
// need_weights=True, average_attn_weights=False returns only the output and the weights.
// flop = 2*n*d*3d (QKV projection) + 2*2*n*n*d (Q K^T and A V over all heads) + 2*n*d*d
// (out_proj): multiply-adds counted as 2, softmax and bias not counted.
// Exit status 2 with "mha_bench: error: ..." on stderr for bad arguments.
#include <Eigen/Core>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <ctime>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <iostream>
#include <random>
#include <string>
#include <vector>

#include "mha/attention.hpp"
#include "mha/kernels.hpp"

namespace {

long parse_int(const char* text, const char* what, long min, long max) {
  char* end = nullptr;
  const long v = std::strtol(text, &end, 10);
  if (end == text || *end != '\0' || v < min || v > max) {
    throw std::invalid_argument(std::string(what) + " must be an integer in [" +
                                std::to_string(min) + ", " + std::to_string(max) + "], got \"" +
                                text + "\"");
  }
  return v;
}

mha::RowMatrixXf randn(std::mt19937& rng, mha::Index rows, mha::Index cols, float scale) {
  std::normal_distribution<float> normal(0.0f, scale);
  mha::RowMatrixXf m(rows, cols);
  for (mha::Index i = 0; i < m.size(); ++i) m.data()[i] = normal(rng);
  return m;
}

}  // namespace

int main(int argc, char** argv) {
  try {
    std::vector<std::string> positional;
    unsigned seed = 0;
    for (int i = 1; i < argc; ++i) {
      const std::string arg = argv[i];
      if (arg == "--seed" && i + 1 < argc) {
        seed = static_cast<unsigned>(parse_int(argv[++i], "--seed", 0, 0x7fffffff));
      } else if (arg == "-h" || arg == "--help") {
        std::cout << "usage: mha_bench N D_MODEL NUM_HEADS [REPS] [--seed S]\n";
        return 0;
      } else {
        positional.push_back(arg);
      }
    }
    if (positional.size() < 3 || positional.size() > 4) {
      throw std::invalid_argument("expected N D_MODEL NUM_HEADS [REPS], got " +
                                  std::to_string(positional.size()) + " arguments");
    }
    const mha::Index n = parse_int(positional[0].c_str(), "N", 1, mha::limits::max_tokens);
    const mha::Index d = parse_int(positional[1].c_str(), "D_MODEL", 1, mha::limits::max_d_model);
    const mha::Index h =
        parse_int(positional[2].c_str(), "NUM_HEADS", 1, mha::limits::max_num_heads);
    const long reps = positional.size() > 3 ? parse_int(positional[3].c_str(), "REPS", 1, 100000) : 20;

    std::mt19937 rng(seed);
    mha::AttentionConfig config;
    config.d_model = d;
    config.num_heads = h;
    const float w_scale = 1.0f / std::sqrt(static_cast<float>(d));
    const mha::MultiheadAttention layer(
        config, mha::AttentionWeights::fused(randn(rng, 3 * d, d, w_scale),
                                             randn(rng, 3 * d, 1, 0.1f).col(0),
                                             randn(rng, d, d, w_scale), randn(rng, d, 1, 0.1f).col(0)));
    const mha::RowMatrixXf x = randn(rng, n, d, 1.0f);
    const mha::ForwardOptions options(false);

    double checksum = 0.0;
    for (int i = 0; i < 2; ++i) checksum += layer.forward(x, {}, options).output(0, 0);
    std::vector<double> ms, cpu_ms;
    for (long r = 0; r < reps; ++r) {
      const std::clock_t c0 = std::clock();
      const auto t0 = std::chrono::steady_clock::now();
      const mha::AttentionResult result = layer.forward(x, {}, options);
      const auto t1 = std::chrono::steady_clock::now();
      const std::clock_t c1 = std::clock();
      checksum += result.output(0, 0) + result.attn_weights.data()[0];
      ms.push_back(std::chrono::duration<double, std::milli>(t1 - t0).count());
      cpu_ms.push_back(1000.0 * static_cast<double>(c1 - c0) / CLOCKS_PER_SEC);
    }
    const auto median_of = [](std::vector<double> v) {
      std::sort(v.begin(), v.end());
      return v.size() % 2 ? v[v.size() / 2] : 0.5 * (v[v.size() / 2 - 1] + v[v.size() / 2]);
    };
    std::sort(ms.begin(), ms.end());
    const double median = median_of(ms);
    const double flop = 2.0 * n * d * 3.0 * d + 4.0 * n * n * d + 2.0 * n * d * d;
    const nlohmann::json out = {{"impl", "mha-lab native"},
                                {"n", n},
                                {"d_model", d},
                                {"num_heads", h},
                                {"reps", reps},
                                {"median_ms", median},
                                {"min_ms", ms.front()},
                                {"max_ms", ms.back()},
                                {"median_cpu_ms", median_of(cpu_ms)},
                                {"flop", flop},
                                {"gflop_per_s", flop / (median * 1e6)},
                                {"simd", Eigen::SimdInstructionSetsInUse()},
                                {"gemm", mha::kernels::gemm_backend()},
                                {"keep_intermediates", false},
                                {"checksum", checksum}};
    std::cout << out.dump() << '\n';
    return 0;
  } catch (const std::exception& e) {
    std::cerr << "mha_bench: error: " << e.what() << '\n';
    return 2;
  }
}
