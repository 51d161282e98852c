// mha_bench: times one self-attention forward of the native core, for scripts/bench.sh and
// docs/benchmarks.md. Not a test: it asserts nothing, it measures. Three forms:
//
//   build/native/mha_bench N D_MODEL NUM_HEADS [REPS] [--seed S]
//       REPS (default 20) forwards on random weights after 2 untimed warm-up runs; one JSON line
//       {"impl": "mha-lab native", "n", "d_model", "num_heads", "reps", "median_ms", "min_ms",
//        "max_ms", "median_cpu_ms", "flop", "gflop_per_s", "simd", "gemm", "keep_intermediates"}
//   build/native/mha_bench case DIR N D_MODEL NUM_HEADS [BUDGET_MS MIN_REPS MAX_REPS]
//       PyTorch's own inputs: DIR/{x,in_proj_weight,in_proj_bias,out_proj_weight,out_proj_bias}.f32
//       (raw float32, row-major, written by scripts/bench/torch_bench.py); the last result is
//       compared with DIR/torch_output.f32 (n, d) and DIR/torch_weights.f32 (h, n, n)
//   build/native/mha_bench scaling N D_MODEL NUM_HEADS [BUDGET_MS MIN_REPS MAX_REPS]
//       seeded random inputs, for the benchmark's scaling table
// The last two repeat the forward until BUDGET_MS (2000) has passed, at least MIN_REPS (5) and
// at most MAX_REPS (200) times, after one warm-up run, and print one JSON line: {"system":
// "native", "n", "d", "h", "median_ms", "min_ms", "reps", "peak_rss_kib_before", "peak_rss_kib"
// (getrusage ru_maxrss before the first forward and after the last), "max_abs_err_output",
// "max_abs_err_weights"} (the largest absolute differences from PyTorch: -1 when not compared,
// "Infinity" when any entry is NaN).
//
// gemm: the build's GEMM back end (mha::kernels::gemm_backend: "eigen+openblas", "eigen" or
// "blocked"). With OpenBLAS the run is multi-threaded (OpenBLAS uses every core) unless
// OPENBLAS_NUM_THREADS=1, as scripts/bench.sh sets it: set it for single-thread figures.
// median_cpu_ms: process CPU time per run (std::clock): on a shared machine wall time also counts
// the time other processes held the CPU; CPU time does not.
// Per-head weights (h, n, n) are computed and returned by every run (never averaged); the
// intermediates (q, k, v, scores, head outputs) are not kept, as PyTorch's
// need_weights=True, average_attn_weights=False returns only the output and the weights.
// flop = 2*n*d*3d (QKV projection) + 2*2*n*n*d (Q K^T and A V over all heads) + 2*n*d*d
// (out_proj): multiply-adds counted as 2, softmax and bias not counted.
// Exit status 2 with "mha_bench: error: ..." on stderr for bad arguments or unreadable files.
#include <sys/resource.h>

#include <Eigen/Core>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <ctime>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <fstream>
#include <iostream>
#include <limits>
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

long peak_rss_kib() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return u.ru_maxrss;
}

std::vector<float> read_f32(const std::string& path, std::size_t count) {
  std::ifstream f(path, std::ios::binary);
  if (!f) throw std::invalid_argument("cannot open " + path);
  std::vector<float> v(count);
  f.read(reinterpret_cast<char*>(v.data()), static_cast<std::streamsize>(count * sizeof(float)));
  if (f.gcount() != static_cast<std::streamsize>(count * sizeof(float)) || f.peek() != EOF) {
    throw std::invalid_argument(path + " does not hold exactly " + std::to_string(count) +
                                " floats");
  }
  return v;
}

/// max_i |a_i - b_i| as JSON: a number, or "Infinity" when any entry is NaN or the sizes differ.
nlohmann::json max_abs_diff(const float* a, std::size_t count, const std::vector<float>& b) {
  double worst = count == b.size() ? 0.0 : std::numeric_limits<double>::infinity();
  for (std::size_t i = 0; i < count && std::isfinite(worst); ++i) {
    const double e = std::fabs(static_cast<double>(a[i]) - static_cast<double>(b[i]));
    worst = std::isnan(e) ? std::numeric_limits<double>::infinity() : std::max(worst, e);
  }
  return std::isfinite(worst) ? nlohmann::json(worst) : nlohmann::json("Infinity");
}

double median_of(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.size() % 2 ? v[v.size() / 2] : 0.5 * (v[v.size() / 2 - 1] + v[v.size() / 2]);
}

mha::AttentionConfig config_of(mha::Index d, mha::Index h) {
  mha::AttentionConfig config;
  config.d_model = d;
  config.num_heads = h;
  return config;
}

/// The shapes N D_MODEL NUM_HEADS at args[first ..].
struct Shape {
  mha::Index n, d, h;
};
Shape read_shape(const std::vector<std::string>& args, std::size_t first) {
  return {parse_int(args[first].c_str(), "N", 1, mha::limits::max_tokens),
          parse_int(args[first + 1].c_str(), "D_MODEL", 1, mha::limits::max_d_model),
          parse_int(args[first + 2].c_str(), "NUM_HEADS", 1, mha::limits::max_num_heads)};
}

/// `case DIR N D H [...]` (from_files) or `scaling N D H [...]`: see the top of this file.
int run_budgeted(const std::vector<std::string>& args, bool from_files) {
  const std::size_t first = from_files ? 2 : 1;
  if (args.size() < first + 3 || args.size() > first + 6) {
    throw std::invalid_argument(std::string("expected ") + (from_files ? "case DIR " : "scaling ") +
                                "N D_MODEL NUM_HEADS [BUDGET_MS MIN_REPS MAX_REPS]");
  }
  const Shape s = read_shape(args, first);
  const auto opt = [&](std::size_t k, const char* what, long fallback, long max) {
    return args.size() > first + 3 + k ? parse_int(args[first + 3 + k].c_str(), what, 1, max)
                                       : fallback;
  };
  const double budget_ms = static_cast<double>(opt(0, "BUDGET_MS", 2000, 3600000));
  const long min_reps = opt(1, "MIN_REPS", 5, 100000);
  const long max_reps = opt(2, "MAX_REPS", 200, 100000);

  mha::RowMatrixXf x;
  mha::AttentionWeights weights;
  const auto N = static_cast<std::size_t>(s.n), D = static_cast<std::size_t>(s.d);
  if (from_files) {
    const std::string dir = args[1];
    const auto f = [&](const char* name, std::size_t count) {
      return read_f32(dir + "/" + name + ".f32", count);
    };
    using MapM = Eigen::Map<const mha::RowMatrixXf>;
    using MapV = Eigen::Map<const mha::VectorXf>;
    const auto xs = f("x", N * D), w_in = f("in_proj_weight", 3 * D * D),
               b_in = f("in_proj_bias", 3 * D), w_out = f("out_proj_weight", D * D),
               b_out = f("out_proj_bias", D);
    x = MapM(xs.data(), s.n, s.d);
    weights = mha::AttentionWeights::fused(MapM(w_in.data(), 3 * s.d, s.d),
                                           MapV(b_in.data(), 3 * s.d),
                                           MapM(w_out.data(), s.d, s.d), MapV(b_out.data(), s.d));
  } else {
    std::mt19937 rng(static_cast<unsigned>(s.n * 1009 + s.d * 7 + s.h));
    const float w = 1.0f / std::sqrt(static_cast<float>(s.d));
    x = randn(rng, s.n, s.d, 1.0f);
    weights = mha::AttentionWeights::fused(randn(rng, 3 * s.d, s.d, w),
                                           mha::VectorXf::Zero(3 * s.d), randn(rng, s.d, s.d, w),
                                           mha::VectorXf::Zero(s.d));
  }
  const mha::MultiheadAttention layer(config_of(s.d, s.h), std::move(weights));
  const mha::ForwardOptions options(false);
  const long rss_before = peak_rss_kib();

  using clock = std::chrono::steady_clock;
  const auto ms_since = [](clock::time_point t0) {
    return std::chrono::duration<double, std::milli>(clock::now() - t0).count();
  };
  mha::AttentionResult r = layer.forward(x, {}, options);  // warm-up
  std::vector<double> times;
  const auto start = clock::now();
  while (static_cast<long>(times.size()) < max_reps &&
         (static_cast<long>(times.size()) < min_reps || ms_since(start) < budget_ms)) {
    r = mha::AttentionResult{};  // free the previous result first: peak = one forward
    const auto t0 = clock::now();
    r = layer.forward(x, {}, options);
    times.push_back(ms_since(t0));
  }
  nlohmann::json err_output = -1, err_weights = -1;  // -1: not compared (scaling)
  if (from_files) {
    const std::string dir = args[1];
    err_output = max_abs_diff(r.output.data(), static_cast<std::size_t>(r.output.size()),
                              read_f32(dir + "/torch_output.f32", N * D));
    err_weights = max_abs_diff(r.attn_weights.data(), static_cast<std::size_t>(r.attn_weights.size()),
                               read_f32(dir + "/torch_weights.f32", static_cast<std::size_t>(s.h) * N * N));
  }
  const nlohmann::json out = {{"system", "native"},
                              {"n", s.n},
                              {"d", s.d},
                              {"h", s.h},
                              {"median_ms", median_of(times)},
                              {"min_ms", *std::min_element(times.begin(), times.end())},
                              {"reps", times.size()},
                              {"peak_rss_kib_before", rss_before},
                              {"peak_rss_kib", peak_rss_kib()},
                              {"max_abs_err_output", err_output},
                              {"max_abs_err_weights", err_weights}};
  std::cout << out.dump() << '\n';
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  try {
    const std::vector<std::string> args(argv + 1, argv + argc);
    if (!args.empty() && (args[0] == "case" || args[0] == "scaling")) {
      return run_budgeted(args, args[0] == "case");
    }
    std::vector<std::string> positional;
    unsigned seed = 0;
    for (int i = 1; i < argc; ++i) {
      const std::string arg = argv[i];
      if (arg == "--seed" && i + 1 < argc) {
        seed = static_cast<unsigned>(parse_int(argv[++i], "--seed", 0, 0x7fffffff));
      } else if (arg == "-h" || arg == "--help") {
        std::cout << "usage: mha_bench N D_MODEL NUM_HEADS [REPS] [--seed S]\n"
                     "       mha_bench case DIR N D_MODEL NUM_HEADS [BUDGET_MS MIN_REPS MAX_REPS]\n"
                     "       mha_bench scaling N D_MODEL NUM_HEADS [BUDGET_MS MIN_REPS MAX_REPS]\n";
        return 0;
      } else {
        positional.push_back(arg);
      }
    }
    if (positional.size() < 3 || positional.size() > 4) {
      throw std::invalid_argument("expected N D_MODEL NUM_HEADS [REPS], got " +
                                  std::to_string(positional.size()) + " arguments");
    }
    const auto [n, d, h] = read_shape(positional, 0);
    const long reps = positional.size() > 3 ? parse_int(positional[3].c_str(), "REPS", 1, 100000) : 20;

    std::mt19937 rng(seed);
    const mha::AttentionConfig config = config_of(d, h);
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
