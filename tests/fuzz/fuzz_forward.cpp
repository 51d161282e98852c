// libFuzzer target: bytes -> a small attention configuration, inputs, weights and masks ->
// mha::multi_head_attention_forward (Eigen, float32) and mha::multi_head_attention_reference
// (loops, double), compared.
//
// Shape legend (attention.hpp): n = query tokens, m = key tokens, d = d_model, h = num_heads,
// d_head = d / h, kdim / vdim = key / value widths.
//
// Decoding: header bytes choose d_head (1..4), h (1..4), an off-by-one d (config_error),
// kdim/vdim (d, or 1..7 with separate weights), n and m (1..6), self-attention, biases, the mask
// kind (none; boolean or additive, shared (n, m), (1, n, m) or per head (h, n, m)),
// key_padding_mask (boolean, or additive with the mask entries' classes), is_causal. Every float
// after that is one byte picking a class: a small value (k / 16), a special (NaN, +-inf,
// denormals, FLT_MIN, FLT_MAX, 1e19, ...) or four raw bytes. Mask entries have their own table
// (-inf, NaN, +inf, +-1e38, +-3e38, ...). When the bytes run out, every further byte reads as 0
// (a value of -6.25, a mask entry of 0).
//
// Expected outcomes: a typed mha::error thrown by both paths (validation is shared, so config,
// shape, limit and value errors of the inputs must agree; a float32 overflow inside the
// computation may be seen by one path only — see below), or two results that are finite, whose
// rows sum to 1 or are all 0 when flagged fully masked, flagged exactly when every key is masked
// (a finite mask value never masks), whose flags agree, and whose weights and
// outputs agree within a rounding bound computed from the magnitudes (see ErrorBound).
// Anything else calls abort() (mha_fuzz::finding).
#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <limits>
#include <typeinfo>
#include <vector>

#include "fuzz_common.hpp"

namespace {

using mha::Index;
using mha::RowMatrixXd;
using mha::RowMatrixXf;
using mha_fuzz::finding;

constexpr float kInf = std::numeric_limits<float>::infinity();
constexpr float kNaN = std::numeric_limits<float>::quiet_NaN();
constexpr float kMax = std::numeric_limits<float>::max();
constexpr float kMin = std::numeric_limits<float>::min();
constexpr float kDenorm = std::numeric_limits<float>::denorm_min();
constexpr double kU = 0x1p-24;  // unit roundoff of float32

class Bytes {
 public:
  Bytes(const std::uint8_t* data, std::size_t size) : data_(data), size_(size) {}
  std::uint8_t byte() { return pos_ < size_ ? data_[pos_++] : 0; }

  /// One input or weight value. Mostly moderate numbers, so that most inputs pass validation
  /// and reach the arithmetic.
  float value() {
    static constexpr float specials[] = {0.0f,     -0.0f,  kNaN, kInf,  -kInf, kDenorm,
                                         -kDenorm, kMin,   kMax, -kMax, 1e19f, -1e19f,
                                         1e10f,    1e-30f, 3e4f, -3e4f, 1e5f,  1e-45f};
    const std::uint8_t b = byte();
    if (b < 200) return (static_cast<float>(b) - 100.0f) / 16.0f;  // -6.25 .. 6.1875
    if (b < 200 + sizeof specials / sizeof specials[0]) return specials[b - 200];
    if (b < 240) return static_cast<float>(b - 200) * 64.0f;  // logits in the thousands
    std::uint32_t bits = 0;
    for (int i = 0; i < 4; ++i) bits = (bits << 8) | byte();
    float f;
    std::memcpy(&f, &bits, sizeof f);
    return f;
  }

  /// One entry of an additive float mask.
  float mask_value() {
    static constexpr float specials[] = {-kInf, kNaN,  kInf,  1e38f,  -1e38f,  3e38f, -3e38f,
                                         kMax,  -kMax, 1e30f, -1e30f, kDenorm, -1e4f, 1e4f};
    const std::uint8_t b = byte();
    if (b < 128) return 0.0f;
    if (b < 200) return (static_cast<float>(b) - 164.0f) / 4.0f;
    if (b < 200 + sizeof specials / sizeof specials[0]) return specials[b - 200];
    return -kInf;
  }

  RowMatrixXf matrix(Index rows, Index cols) {
    RowMatrixXf x(rows, cols);
    for (Index i = 0; i < x.size(); ++i) x.data()[i] = value();
    return x;
  }
  mha::VectorXf vector(Index size) {
    mha::VectorXf v(size);
    for (Index i = 0; i < size; ++i) v[i] = value();
    return v;
  }

 private:
  const std::uint8_t* data_;
  std::size_t size_;
  std::size_t pos_ = 0;
};

RowMatrixXd abs_d(const Eigen::Ref<const RowMatrixXf>& x) { return x.cast<double>().cwiseAbs(); }

/// |x| |W|^T + |b|: the magnitude a float32 product x W^T + b accumulates, per entry.
RowMatrixXd abs_linear(const Eigen::Ref<const RowMatrixXf>& x,
                       const Eigen::Ref<const RowMatrixXf>& W, const mha::VectorXf& b) {
  RowMatrixXd y = abs_d(x) * abs_d(W).transpose();
  if (b.size() > 0) y.rowwise() += b.cast<double>().cwiseAbs().transpose();
  return y;
}

/// Checks fast (float32, Eigen) against reference (double loops, rounded to float32).
///
/// The bound is the textbook forward error of each stage (Higham, "Accuracy and Stability of
/// Numerical Algorithms", §3.1: a k-term float dot product errs by at most
/// gamma_k * sum |a_i b_i|, gamma_k = k u / (1 - k u), u = 2^-24), taken with a safety factor of
/// 2 and carried through the softmax:
///   projection entry (width k):   e_p  <= gamma_{k+2} * (|x||W|^T + |b|)
///   score (i, j):                 e_s  <= scale * sum_c (e_q |K| + |Q| e_k + gamma_{d_head+2}
///   |Q||K|)
///                                          + u * |mask sum|      (the float addition of the mask)
///   weight a_ij = softmax(s)_j:   |da| <= a_ij * (exp(2 max_j e_s) - 1) + (2m + 8) u
///                                 (the first term is the exact propagation of score errors;
///                                 the second covers exp, the sum and the division, absolute
///                                 because weights are at most 1; Eigen's exp clamps below -88,
///                                 an absolute error under 1e-38)
///   head output, out_proj:        the same dot-product bound with |a| + |da| and |V| + e_v.
/// Plus, at every stage, 2^-149 per term of each dot product: a result in the subnormal range
/// errs by up to 2^-150 absolutely, not relatively (Higham §2.1, fl(x op y) = (x op y)(1 + d) + e
/// with |e| <= 2^-150), and out_proj can amplify that error by sum |W_out| (found by fuzzing:
/// tests/fuzz/corpus/fuzz_forward/crash-underflow-bound, denormal inputs and weights of -6.25).
void compare(const mha::AttentionConfig& cfg, const mha::AttentionWeights& w,
             const RowMatrixXf& query, const RowMatrixXf& key, const RowMatrixXf& value,
             const mha::AttentionMasks& masks, const mha::AttentionResult& fast,
             const mha::AttentionResult& ref) {
  const Index n = query.rows(), m = key.rows(), d = cfg.d_model, h = cfg.num_heads;
  const Index dh = cfg.d_head();
  const auto gamma = [](Index k) {
    return 2.0 * (static_cast<double>(k) * kU) / (1.0 - static_cast<double>(k) * kU);
  };
  // Absolute underflow allowance of a k-term dot product.
  const auto tiny = [](Index k) { return 0x1p-149 * static_cast<double>(k + 2); };
  const mha::VectorXf none;
  const Index bl = w.in_proj_bias.size() > 0 ? d : 0;
  const mha::VectorXf bq = w.in_proj_bias.segment(0, bl);
  const mha::VectorXf bk = w.in_proj_bias.segment(bl, bl);
  const mha::VectorXf bv = w.in_proj_bias.segment(2 * bl, bl);
  const RowMatrixXd Qa = abs_linear(query, w.q_weight(), bq);
  const RowMatrixXd Ka = abs_linear(key, w.k_weight(), bk);
  const RowMatrixXd Va = abs_linear(value, w.v_weight(), bv);
  // Fused self-attention multiplies by the whole (3d, d) weight: the same per-entry dot products.
  const RowMatrixXd eQ = (gamma(d + 2) * Qa).array() + tiny(d);
  const RowMatrixXd eK = (gamma(cfg.key_dim() + 2) * Ka).array() + tiny(cfg.key_dim());
  const RowMatrixXd eV = (gamma(cfg.value_dim() + 2) * Va).array() + tiny(cfg.value_dim());
  const double scale = 1.0 / std::sqrt(static_cast<double>(dh));

  if (fast.fully_masked_rows != ref.fully_masked_rows) {
    finding("fast and reference disagree on which rows are fully masked");
  }
  RowMatrixXd Ya = RowMatrixXd::Zero(n, d), eY = RowMatrixXd::Zero(n, d);
  for (Index head = 0; head < h; ++head) {
    const Index c0 = head * dh;
    for (Index i = 0; i < n; ++i) {
      std::vector<double> es(static_cast<std::size_t>(m));
      double max_es = 0.0;
      for (Index j = 0; j < m; ++j) {
        double e = 0.0;
        for (Index c = c0; c < c0 + dh; ++c) {
          e += eQ(i, c) * (Ka(j, c) + eK(j, c)) + Qa(i, c) * eK(j, c) +
               gamma(dh + 2) * Qa(i, c) * Ka(j, c);
        }
        e = e * scale + kU * std::fabs(static_cast<double>(ref.scores(head, i, j))) + tiny(dh);
        if (masks.term(head, i, j) == -kInf) e = 0.0;  // a masked key: exactly 0 in both paths
        es[static_cast<std::size_t>(j)] = e;
        max_es = std::max(max_es, e);
      }
      const double spread = std::expm1(std::min(2.0 * max_es, 700.0));
      for (Index j = 0; j < m; ++j) {
        const double a_f = fast.attn_weights(head, i, j), a_r = ref.attn_weights(head, i, j);
        const double da = std::max(a_f, a_r) * spread + (2.0 * static_cast<double>(m) + 8.0) * kU;
        if (std::fabs(a_f - a_r) > da) {
          finding("fast and reference weights disagree beyond the rounding bound", a_f, a_r);
        }
        for (Index c = c0; c < c0 + dh; ++c) {
          const double mag = std::max(a_f, a_r) * Va(j, c);
          Ya(i, c) += mag;
          eY(i, c) += da * (Va(j, c) + eV(j, c)) + std::max(a_f, a_r) * eV(j, c) +
                      gamma(m + 2) * mag + tiny(1);
        }
      }
    }
  }
  const RowMatrixXd Wo = abs_d(w.out_proj_weight);
  RowMatrixXd Oa = (Ya + eY) * Wo.transpose();
  if (w.out_proj_bias.size() > 0) {
    Oa.rowwise() += w.out_proj_bias.cast<double>().cwiseAbs().transpose();
  }
  const RowMatrixXd eO = ((eY * Wo.transpose() + gamma(d + 2) * Oa).array() + tiny(d)).matrix();
  for (Index i = 0; i < n; ++i) {
    for (Index o = 0; o < d; ++o) {
      const double f = fast.output(i, o), r = ref.output(i, o);
      // The reference rounds its double result to float32 once: half an ulp more.
      if (std::fabs(f - r) > eO(i, o) + kU * std::fabs(r) + tiny(0)) {
        finding("fast and reference outputs disagree beyond the rounding bound", f, r);
      }
    }
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  Bytes in(data, size);
  const std::uint8_t b0 = in.byte(), b1 = in.byte(), b2 = in.byte(), b3 = in.byte();
  const std::uint8_t b4 = in.byte(), b5 = in.byte();
  const Index d_head = 1 + (b0 & 3);
  const Index h = 1 + ((b0 >> 2) & 3);
  const bool bad_d = (b0 >> 4) == 15;  // d not divisible by h (when h > 1)
  const Index d = d_head * h + (bad_d ? 1 : 0);
  const bool separate = (b1 & 1) != 0;
  const Index kdim = separate ? 1 + ((b1 >> 1) & 7) : d;
  const Index vdim = separate ? 1 + ((b1 >> 4) & 7) : d;
  const Index n = 1 + (b2 % 6);
  const bool self_attention = !separate && (b2 & 0x80) != 0;
  const Index m = self_attention ? n : 1 + (b3 % 6);
  const bool in_bias = (b4 & 1) != 0, out_bias = (b4 & 2) != 0;
  const int mask_kind = (b4 >> 2) % 7;  // 0 none; 1-3 boolean; 4-6 additive
  const bool key_padding = (b4 & 0x40) != 0, causal = (b4 & 0x80) != 0;
  const bool wrong_mask_heads = b5 == 0xff;  // a (2h, n, m) mask: shape_error

  mha::AttentionConfig cfg;
  cfg.d_model = d;
  cfg.num_heads = h;
  cfg.kdim = separate ? kdim : 0;
  cfg.vdim = separate ? vdim : 0;

  const RowMatrixXf query = in.matrix(n, d);
  const RowMatrixXf key = self_attention ? query : in.matrix(m, kdim);
  const RowMatrixXf value = self_attention ? query : in.matrix(m, vdim);
  mha::AttentionWeights w;
  const mha::VectorXf ib = in_bias ? in.vector(3 * d) : mha::VectorXf();
  if (separate) {
    RowMatrixXf wq = in.matrix(d, d), wk = in.matrix(d, kdim), wv = in.matrix(d, vdim);
    w = mha::AttentionWeights::separate(wq, wk, wv, ib, in.matrix(d, d),
                                        out_bias ? in.vector(d) : mha::VectorXf());
  } else {
    RowMatrixXf wi = in.matrix(3 * d, d);
    w = mha::AttentionWeights::fused(wi, ib, in.matrix(d, d),
                                     out_bias ? in.vector(d) : mha::VectorXf());
  }

  mha::AttentionMasks masks;
  if (mask_kind != 0) {
    const int layout = (mask_kind - 1) % 3;  // 0: (n, m), 1: (1, n, m), 2: (h, n, m)
    const Index heads = layout == 2 ? (wrong_mask_heads ? 2 * h : h) : 1;
    masks.attn_mask_kind =
        mask_kind <= 3 ? mha::AttentionMasks::Kind::boolean : mha::AttentionMasks::Kind::additive;
    masks.attn_mask = mha::HeadStack(heads, n, m);
    for (Index i = 0; i < masks.attn_mask.size(); ++i) {
      masks.attn_mask.data()[i] =
          mask_kind <= 3 ? static_cast<float>(in.byte() & 1) : in.mask_value();
    }
  }
  if (key_padding) {
    // Boolean, or (one time in four) additive with the float mask's value classes.
    const bool additive = in.byte() % 4 == 0;
    masks.key_padding_mask_kind =
        additive ? mha::AttentionMasks::Kind::additive : mha::AttentionMasks::Kind::boolean;
    masks.key_padding_mask.resize(static_cast<std::size_t>(m));
    for (auto& k : masks.key_padding_mask) {
      k = additive ? in.mask_value() : static_cast<float>(in.byte() % 3 == 0);
    }
  }
  masks.is_causal = causal;

  // Self-attention hands the same matrix three times, so the fast path takes the fused product.
  const RowMatrixXf& k_in = self_attention ? query : key;
  const RowMatrixXf& v_in = self_attention ? query : value;

  // Validation is shared: both paths must throw the same error for bad inputs.
  try {
    mha::validate_forward_inputs(cfg, w, query, k_in, v_in, masks);
  } catch (const mha::error& e) {
    for (int path = 0; path < 2; ++path) {
      try {
        if (path == 0) {
          mha::multi_head_attention_forward(cfg, w, query, k_in, v_in, masks);
        } else {
          mha::multi_head_attention_reference(cfg, w, query, k_in, v_in, masks);
        }
        finding("validation failed but a forward path did not throw");
      } catch (const mha::error& e2) {
        if (typeid(e) != typeid(e2)) finding("the two paths throw different error types");
      }
    }
    return 0;
  }

  // Valid inputs: a float32 overflow inside the computation (projections, scores, score + mask,
  // output) is a value_error. Near the float32 range the two precisions may overflow at
  // different places, so one path may throw while the other returns; both results are still
  // checked on their own.
  mha::AttentionResult fast, ref;
  bool fast_ok = true, ref_ok = true;
  try {
    fast = mha::multi_head_attention_forward(cfg, w, query, k_in, v_in, masks);
  } catch (const mha::value_error&) {
    fast_ok = false;
  }
  try {
    ref = mha::multi_head_attention_reference(cfg, w, query, k_in, v_in, masks);
  } catch (const mha::value_error&) {
    ref_ok = false;
  }
  if (fast_ok) {
    mha_fuzz::check_result(fast, h, n, m, d);
    mha_fuzz::check_masked_rows(fast, masks, h, n, m);
  }
  if (ref_ok) {
    mha_fuzz::check_result(ref, h, n, m, d);
    mha_fuzz::check_masked_rows(ref, masks, h, n, m);
  }
  if (fast_ok && ref_ok) compare(cfg, w, query, k_in, v_in, masks, fast, ref);
  return 0;
}
