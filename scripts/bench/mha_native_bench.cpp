// Native timing driver for scripts/bench.sh: times mha::MultiheadAttention::forward
// (self-attention, per-head weights returned, no intermediates) as built in
// build/native/cpp/attention/libmha_attention.a, on PyTorch's own inputs and against its results
// (build/native/mha_bench times random weights and compares nothing). It only calls the public
// API of cpp/attention/mha/attention.hpp.
//
//   mha_native_bench case DIR N D H [budget_ms min_reps max_reps]
//       reads DIR/{x,in_proj_weight,in_proj_bias,out_proj_weight,out_proj_bias}.f32 (raw float32,
//       row-major, written by scripts/bench/torch_bench.py), times the forward, and compares the
//       last result with DIR/torch_output.f32 (n, d) and DIR/torch_weights.f32 (h, n, n)
//   mha_native_bench scaling N D H [budget_ms min_reps max_reps]
//       seeded random inputs (no files); for the scaling table
// Both print one JSON line: median_ms, min_ms, reps, peak resident memory (getrusage ru_maxrss,
// KiB) before the first forward and after the last one, and in case mode the largest absolute
// difference from PyTorch of the output and of the weights (NaN anywhere counts as infinite).
// Shape legend: n = tokens, d = d_model, h = num_heads.
#include <sys/resource.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <limits>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

#include "mha/attention.hpp"

namespace {

using mha::Index;
using mha::RowMatrixXf;
using mha::VectorXf;

long peak_rss_kib() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return u.ru_maxrss;
}

std::vector<float> read_f32(const std::string& path, std::size_t count) {
  std::ifstream f(path, std::ios::binary);
  if (!f) throw std::runtime_error("cannot open " + path);
  std::vector<float> v(count);
  f.read(reinterpret_cast<char*>(v.data()), static_cast<std::streamsize>(count * sizeof(float)));
  if (f.gcount() != static_cast<std::streamsize>(count * sizeof(float)) || f.peek() != EOF) {
    throw std::runtime_error(path + " does not hold exactly " + std::to_string(count) + " floats");
  }
  return v;
}

/// max_i |a_i - b_i|; infinity when any entry is NaN or the sizes differ.
double max_abs_diff(const float* a, const std::vector<float>& b, std::size_t count) {
  if (count != b.size()) return std::numeric_limits<double>::infinity();
  double worst = 0.0;
  for (std::size_t i = 0; i < count; ++i) {
    const double e = std::fabs(static_cast<double>(a[i]) - static_cast<double>(b[i]));
    if (!(e <= worst)) worst = std::isnan(e) ? std::numeric_limits<double>::infinity() : e;
  }
  return worst;
}

/// A JSON value for a double: the number, or the string "Infinity" (JS's Number() reads it).
std::string json_number(double v) {
  if (!std::isfinite(v)) return "\"Infinity\"";
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.9g", v);
  return buf;
}

RowMatrixXf matrix(const std::vector<float>& v, Index rows, Index cols) {
  return Eigen::Map<const RowMatrixXf>(v.data(), rows, cols);
}

VectorXf vector(const std::vector<float>& v) {
  return Eigen::Map<const VectorXf>(v.data(), static_cast<Index>(v.size()));
}

RowMatrixXf random_matrix(std::mt19937& rng, Index rows, Index cols, float scale) {
  std::normal_distribution<float> g(0.0f, scale);
  RowMatrixXf m(rows, cols);
  for (Index i = 0; i < m.size(); ++i) m.data()[i] = g(rng);
  return m;
}

}  // namespace

int main(int argc, char** argv) {
  try {
    if (argc < 6) {
      std::cerr << "usage: mha_native_bench case DIR N D H [budget_ms min_reps max_reps]\n"
                   "       mha_native_bench scaling N D H [budget_ms min_reps max_reps]\n";
      return 2;
    }
    const std::string mode = argv[1];
    const bool from_files = mode == "case";
    if (!from_files && mode != "scaling") throw std::runtime_error("mode must be case or scaling");
    int a = from_files ? 3 : 2;
    const std::string dir = from_files ? argv[2] : "";
    const Index n = std::atol(argv[a]), d = std::atol(argv[a + 1]), h = std::atol(argv[a + 2]);
    a += 3;
    const double budget_ms = argc > a ? std::atof(argv[a]) : 2000.0;
    const int min_reps = argc > a + 1 ? std::atoi(argv[a + 1]) : 5;
    const int max_reps = argc > a + 2 ? std::atoi(argv[a + 2]) : 200;

    mha::AttentionConfig config;
    config.d_model = d;
    config.num_heads = h;
    RowMatrixXf x;
    mha::AttentionWeights weights;
    const auto N = static_cast<std::size_t>(n), D = static_cast<std::size_t>(d);
    if (from_files) {
      const auto f = [&](const char* name) { return dir + "/" + name + ".f32"; };
      x = matrix(read_f32(f("x"), N * D), n, d);
      weights = mha::AttentionWeights::fused(
          matrix(read_f32(f("in_proj_weight"), 3 * D * D), 3 * d, d),
          vector(read_f32(f("in_proj_bias"), 3 * D)),
          matrix(read_f32(f("out_proj_weight"), D * D), d, d),
          vector(read_f32(f("out_proj_bias"), D)));
    } else {
      std::mt19937 rng(static_cast<unsigned>(n * 1009 + d * 7 + h));
      const float w = 1.0f / std::sqrt(static_cast<float>(d));
      x = random_matrix(rng, n, d, 1.0f);
      weights = mha::AttentionWeights::fused(random_matrix(rng, 3 * d, d, w),
                                             VectorXf::Zero(3 * d), random_matrix(rng, d, d, w),
                                             VectorXf::Zero(d));
    }
    const mha::MultiheadAttention layer(config, std::move(weights));
    const mha::ForwardOptions options(false);
    const long rss_before = peak_rss_kib();

    using clock = std::chrono::steady_clock;
    mha::AttentionResult r = layer.forward(x, {}, options);  // warm-up
    std::vector<double> times;
    const auto start = clock::now();
    const auto elapsed_ms = [](clock::time_point t0) {
      return std::chrono::duration<double, std::milli>(clock::now() - t0).count();
    };
    while (static_cast<int>(times.size()) < max_reps &&
           (static_cast<int>(times.size()) < min_reps || elapsed_ms(start) < budget_ms)) {
      r = mha::AttentionResult{};  // free the previous result first: peak = one forward
      const auto t0 = clock::now();
      r = layer.forward(x, {}, options);
      times.push_back(elapsed_ms(t0));
    }
    const long rss_after = peak_rss_kib();
    double err_output = -1.0, err_weights = -1.0;  // -1: not compared (scaling mode)
    if (from_files) {
      const std::size_t H = static_cast<std::size_t>(h);
      err_output = max_abs_diff(r.output.data(), read_f32(dir + "/torch_output.f32", N * D),
                                static_cast<std::size_t>(r.output.size()));
      err_weights = max_abs_diff(r.attn_weights.data(),
                                 read_f32(dir + "/torch_weights.f32", H * N * N),
                                 static_cast<std::size_t>(r.attn_weights.size()));
    }
    std::vector<double> sorted = times;
    std::sort(sorted.begin(), sorted.end());
    const std::size_t m = sorted.size() / 2;
    const double median = sorted.size() % 2 ? sorted[m] : (sorted[m - 1] + sorted[m]) / 2;
    std::printf(
        "{\"system\":\"native\",\"n\":%ld,\"d\":%ld,\"h\":%ld,\"median_ms\":%.6f,\"min_ms\":%.6f,"
        "\"reps\":%zu,\"peak_rss_kib_before\":%ld,\"peak_rss_kib\":%ld,"
        "\"max_abs_err_output\":%s,\"max_abs_err_weights\":%s}\n",
        static_cast<long>(n), static_cast<long>(d), static_cast<long>(h), median, sorted.front(),
        sorted.size(), rss_before, rss_after, json_number(err_output).c_str(),
        json_number(err_weights).c_str());
    return 0;
  } catch (const std::exception& e) {
    std::cerr << "mha_native_bench: " << e.what() << "\n";
    return 1;
  }
}
