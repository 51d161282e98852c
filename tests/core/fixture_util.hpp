// Helpers shared by the core tests: reading tests/fixtures/*.json (written by
// scripts/fixtures/make_fixtures.py, never by a test) into mha types, and element-wise comparisons that
// report the worst deviation.
//
// Fixture tensors are {"shape": [...], "data": [flat, row-major]}; float32 data is written as the
// shortest decimal that round-trips to the float32 PyTorch used (the script checks that
// strtod + cast to float gives the float32 back bit for bit); float64 data as repr().
// -inf inside a float mask is the string "-inf".
#pragma once

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <fstream>
#include <functional>
#include <limits>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "mha/attention.hpp"

namespace mha_test {

using json = nlohmann::json;
using mha::Index;

/// An AttentionConfig in one expression: d_model, num_heads, kdim and vdim (0 = d_model).
inline mha::AttentionConfig config(Index d, Index h, Index kdim = 0, Index vdim = 0) {
  mha::AttentionConfig c;
  c.d_model = d;
  c.num_heads = h;
  c.kdim = kdim;
  c.vdim = vdim;
  return c;
}

/// Runs f, expects exactly error type E, and returns its what() for further checks.
template <typename E>
std::string message_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const E& e) {
    return e.what();
  } catch (const std::exception& e) {
    ADD_FAILURE() << "threw the wrong type, what(): " << e.what();
    return {};
  }
  ADD_FAILURE() << "did not throw";
  return {};
}

/// Loads tests/fixtures/<name> and checks its header.
inline json load_fixture(const std::string& name) {
  const std::string path = std::string(MHA_FIXTURES_DIR) + "/" + name;
  std::ifstream in(path);
  if (!in) throw std::runtime_error("cannot open fixture " + path);
  json doc = json::parse(in);
  if (doc.at("format").get<std::string>() != "mha-lab-fixture" || doc.at("version").get<int>() != 1)
    throw std::runtime_error(path + ": not a version-1 mha-lab fixture");
  return doc;
}

inline std::vector<Index> shape_of(const json& t) {
  std::vector<Index> s;
  for (const auto& v : t.at("shape")) s.push_back(v.get<Index>());
  return s;
}

/// Flat values of a tensor; the string "-inf" (float masks) becomes -infinity.
inline std::vector<double> flat(const json& t) {
  const json& data = t.is_object() ? t.at("data") : t;
  std::vector<double> out;
  out.reserve(data.size());
  for (const auto& v : data) {
    if (v.is_string()) {
      if (v.get<std::string>() != "-inf") throw std::runtime_error("unexpected string in tensor");
      out.push_back(-std::numeric_limits<double>::infinity());
    } else {
      out.push_back(v.get<double>());
    }
  }
  return out;
}

inline mha::RowMatrixXd matrix_d(const json& t) {
  const auto s = shape_of(t);
  if (s.size() != 2) throw std::runtime_error("expected a 2-D tensor");
  const auto v = flat(t);
  mha::RowMatrixXd m(s[0], s[1]);
  for (Index i = 0; i < m.size(); ++i) m.data()[i] = v[static_cast<std::size_t>(i)];
  return m;
}

inline mha::RowMatrixXf matrix_f(const json& t) { return matrix_d(t).cast<float>(); }

inline mha::VectorXf vector_f(const json& t) {
  const auto v = flat(t);
  mha::VectorXf out(static_cast<Index>(v.size()));
  for (Index i = 0; i < out.size(); ++i)
    out[i] = static_cast<float>(v[static_cast<std::size_t>(i)]);
  return out;
}

/// A (rows, cols) tensor becomes a (1, rows, cols) stack; (h, rows, cols) stays as it is.
inline mha::HeadStack stack_f(const json& t) {
  const auto s = shape_of(t);
  const auto v = flat(t);
  mha::HeadStack st =
      s.size() == 3 ? mha::HeadStack(s[0], s[1], s[2]) : mha::HeadStack(1, s[0], s[1]);
  for (Index i = 0; i < st.size(); ++i)
    st.data()[i] = static_cast<float>(v[static_cast<std::size_t>(i)]);
  return st;
}

/// The weights of a torch_mha.json case, in the form it stores (fused or separate).
inline mha::AttentionWeights torch_weights(const json& c) {
  const json& w = c.at("weights");
  mha::VectorXf in_b, out_b;
  if (w.contains("in_proj_bias")) in_b = vector_f(w.at("in_proj_bias"));
  if (w.contains("out_proj_bias")) out_b = vector_f(w.at("out_proj_bias"));
  if (w.contains("in_proj_weight"))
    return mha::AttentionWeights::fused(matrix_f(w.at("in_proj_weight")), in_b,
                                        matrix_f(w.at("out_proj_weight")), out_b);
  return mha::AttentionWeights::separate(
      matrix_f(w.at("q_proj_weight")), matrix_f(w.at("k_proj_weight")),
      matrix_f(w.at("v_proj_weight")), in_b, matrix_f(w.at("out_proj_weight")), out_b);
}

inline mha::AttentionConfig torch_config(const json& c) {
  mha::AttentionConfig cfg;
  cfg.d_model = c.at("d_model").get<Index>();
  cfg.num_heads = c.at("num_heads").get<Index>();
  cfg.kdim = c.at("kdim").get<Index>();
  cfg.vdim = c.at("vdim").get<Index>();
  return cfg;
}

inline mha::AttentionMasks torch_masks(const json& c) {
  mha::AttentionMasks masks;
  const json& am = c.at("attn_mask");
  if (!am.is_null()) {
    masks.attn_mask_kind = am.at("kind").get<std::string>() == "bool"
                               ? mha::AttentionMasks::Kind::boolean
                               : mha::AttentionMasks::Kind::additive;
    masks.attn_mask = stack_f(am);
  }
  // key_padding_mask: a list of 0/1 (boolean), or {"kind": "float", "data": [...]} (added).
  const json& kpm = c.at("key_padding_mask");
  if (kpm.is_object()) {
    masks.key_padding_mask_kind = mha::AttentionMasks::Kind::additive;
    for (const auto& v : kpm.at("data")) {
      masks.key_padding_mask.push_back(
          v.is_string() ? -std::numeric_limits<float>::infinity() : v.get<float>());
    }
  } else if (!kpm.is_null()) {
    for (const auto& v : kpm)
      masks.key_padding_mask.push_back(static_cast<float>(v.get<int>()));
  }
  masks.is_causal = c.at("is_causal").get<bool>();
  return masks;
}

/// Outcome of an element-wise comparison |actual - expected| <= atol + rtol * |expected|.
struct Deviation {
  double max_abs = 0.0;  ///< max |actual - expected|
  double max_rel = 0.0;  ///< max |actual - expected| / max(|expected|, tiny)
  bool ok = true;
  std::string first_failure;
};

template <typename A, typename B>
Deviation compare(const A* actual, const B* expected, std::size_t count, double atol, double rtol) {
  Deviation d;
  for (std::size_t i = 0; i < count; ++i) {
    const double a = static_cast<double>(actual[i]);
    const double e = static_cast<double>(expected[i]);
    if (!std::isfinite(a) || !std::isfinite(e)) {
      if (d.ok) {
        std::ostringstream os;
        os << "non-finite at index " << i << ": actual " << a << ", expected " << e;
        d.first_failure = os.str();
      }
      d.ok = false;
      continue;
    }
    const double diff = std::abs(a - e);
    d.max_abs = std::max(d.max_abs, diff);
    d.max_rel = std::max(d.max_rel, diff / std::max(std::abs(e), 1e-30));
    if (diff > atol + rtol * std::abs(e)) {
      if (d.ok) {
        std::ostringstream os;
        os.precision(10);
        os << "index " << i << ": actual " << a << ", expected " << e << ", |diff| " << diff
           << " > atol " << atol << " + rtol " << rtol << " * |expected|";
        d.first_failure = os.str();
      }
      d.ok = false;
    }
  }
  return d;
}

inline ::testing::AssertionResult close(const Deviation& d) {
  if (d.ok) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << d.first_failure << " (max |diff| " << d.max_abs << ")";
}

inline bool any_nan(const float* p, Index count) {
  for (Index i = 0; i < count; ++i)
    if (std::isnan(p[i])) return true;
  return false;
}

/// Prints a measured deviation so that the test log records it (ctest -V, or the binary run alone).
inline void report(const std::string& what, const Deviation& d) {
  std::printf("[ maxdev   ] %-60s abs %.3e  rel %.3e\n", what.c_str(), d.max_abs, d.max_rel);
}

/// The golden tests' tolerances (numpy_golden_test.cpp and torch_golden_test.cpp say why):
///   weights: |a - e| <= 1e-5 (absolute; weights are in [0, 1]);
///   output : |a - e| <= 1e-5 * max|e| + 1e-5 |e| (relative to the output's scale).
constexpr double kGoldenWeightsAtol = 1e-5;
constexpr double kGoldenOutputScaledAtol = 1e-5;
constexpr double kGoldenOutputRtol = 1e-5;

/// Expects r.attn_weights and r.output within the golden tolerances of `expected`'s
/// "attn_weights" and "output" (flat tensors of the same sizes), naming `what` in a failure, and
/// prints both deviations ("[ maxdev ] <what> weights", "<what> output (scale S)").
inline void expect_golden(const mha::AttentionResult& r, const json& expected,
                          const std::string& what) {
  const auto out = flat(expected.at("output"));
  const auto w = flat(expected.at("attn_weights"));
  double scale = 0.0;
  for (double v : out) scale = std::max(scale, std::abs(v));
  const auto dw = compare(r.attn_weights.data(), w.data(), w.size(), kGoldenWeightsAtol, 0.0);
  EXPECT_TRUE(close(dw)) << what << " attn_weights";
  const auto dout = compare(r.output.data(), out.data(), out.size(),
                            kGoldenOutputScaledAtol * scale, kGoldenOutputRtol);
  EXPECT_TRUE(close(dout)) << what << " output";
  report(what + " weights", dw);
  report(what + " output (scale " + std::to_string(scale) + ")", dout);
}

}  // namespace mha_test

/// Expects `part` inside the error message `msg`, printing both when it is missing.
#define EXPECT_MESSAGE_HAS(msg, part)            \
  EXPECT_NE((msg).find(part), std::string::npos) \
      << "message \"" << (msg) << "\" lacks \"" << (part) << "\""
