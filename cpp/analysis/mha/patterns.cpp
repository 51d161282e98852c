// Head patterns, combinations, masks and cell explanations (patterns.hpp; docs/patterns.md).
#include "mha/patterns.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <iterator>
#include <limits>
#include <unordered_map>

#include "mha/detail/format.hpp"

namespace mha {
namespace {

/// Sum of row (k, i), in double.
double row_sum(const HeadStack& w, Index k, Index i) {
  double s = 0.0;
  const float* p = w.data() + (k * w.rows() + i) * w.cols();
  for (Index j = 0; j < w.cols(); ++j) s += p[j];
  return s;
}

/// Mean of values added with add(); nullopt when none was.
struct Mean {
  double sum = 0.0;
  Index count = 0;
  void add(double x) {
    sum += x;
    ++count;
  }
  std::optional<double> get() const {
    return count == 0 ? std::nullopt : std::optional<double>(sum / double(count));
  }
};

/// Inclusive code point ranges of the punctuation class (is_punctuation_token), sorted.
struct CodeRange {
  std::uint32_t first, last;
};
constexpr CodeRange kPunctuation[] = {
#include "punctuation_table.inc"
};

/// The next code point of UTF-8 `s` at `pos` (advanced past it); nullopt for a malformed,
/// overlong or surrogate sequence, or one beyond U+10FFFF.
std::optional<std::uint32_t> next_code_point(std::string_view s, std::size_t& pos) {
  const auto byte = [&](std::size_t k) { return static_cast<std::uint8_t>(s[k]); };
  const std::uint8_t b0 = byte(pos);
  std::size_t len = 0;
  std::uint32_t cp = 0, min = 0;
  if (b0 < 0x80) {
    ++pos;
    return b0;
  } else if ((b0 & 0xE0) == 0xC0) {
    len = 2, cp = b0 & 0x1Fu, min = 0x80;
  } else if ((b0 & 0xF0) == 0xE0) {
    len = 3, cp = b0 & 0x0Fu, min = 0x800;
  } else if ((b0 & 0xF8) == 0xF0) {
    len = 4, cp = b0 & 0x07u, min = 0x10000;
  } else {
    return std::nullopt;
  }
  if (pos + len > s.size()) return std::nullopt;
  for (std::size_t k = 1; k < len; ++k) {
    if ((byte(pos + k) & 0xC0) != 0x80) return std::nullopt;
    cp = (cp << 6) | (byte(pos + k) & 0x3Fu);
  }
  if (cp < min || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) return std::nullopt;
  pos += len;
  return cp;
}

bool is_punctuation_code_point(std::uint32_t cp) {
  const auto it = std::upper_bound(std::begin(kPunctuation), std::end(kPunctuation), cp,
                                   [](std::uint32_t c, const CodeRange& r) { return c < r.first; });
  return it != std::begin(kPunctuation) && cp <= std::prev(it)->last;
}

/// The tokens of a head as small integers (equal strings, equal ids; kUnmatched for a token of
/// HeadTokens::unmatched, equal to no id), for the token scores.
constexpr int kUnmatched = -1;
struct TokenIds {
  std::vector<int> keys;          ///< (m), empty when no tokens are given
  std::vector<int> queries;       ///< (n), empty when the query tokens are unknown
  std::vector<bool> punctuation;  ///< (m) is_punctuation_token of each key
};

TokenIds token_ids(const HeadTokens& t, Index n, Index m) {
  TokenIds ids;
  if (t.keys.empty()) return ids;
  std::unordered_map<std::string, int> index;
  for (const auto& u : t.unmatched) index.emplace(u, kUnmatched);
  int next = 0;
  const auto id = [&](const std::string& s) {
    const auto [it, added] = index.emplace(s, next);
    if (added) ++next;
    return it->second;
  };
  for (const auto& k : t.keys) {
    ids.keys.push_back(id(k));
    ids.punctuation.push_back(is_punctuation_token(k));
  }
  if (!t.queries.empty()) {
    for (const auto& q : t.queries) ids.queries.push_back(id(q));
  } else if (n == m) {
    ids.queries = ids.keys;
  }
  return ids;
}

/// The token scores of rows (n) of probabilities over m keys (see HeadScoreValues).
void score_tokens(const RowMatrixXd& a, const std::vector<bool>& scored, const TokenIds& ids,
                  HeadScoreValues& s) {
  if (ids.keys.empty()) return;
  const Index n = a.rows(), m = a.cols();
  const bool queries = !ids.queries.empty();
  Mean duplicate, induction, punctuation;
  for (Index i = 0; i < n; ++i) {
    if (!scored[static_cast<std::size_t>(i)]) continue;
    double p = 0.0;
    for (Index j = 0; j < m; ++j) {
      if (ids.punctuation[static_cast<std::size_t>(j)]) p += a(i, j);
    }
    punctuation.add(p);
    if (!queries) continue;
    const int q = ids.queries[static_cast<std::size_t>(i)];
    if (q == kUnmatched) continue;  // no earlier copy, no induction key
    double d = 0.0, ind = 0.0;
    bool has_d = false, has_ind = false;
    for (Index j = 0; j < std::min(i, m); ++j) {
      if (ids.keys[static_cast<std::size_t>(j)] == q) {
        d += a(i, j);
        has_d = true;
      }
    }
    for (Index k = 1; k <= std::min(i - 1, m - 1); ++k) {
      if (ids.keys[static_cast<std::size_t>(k - 1)] == q) {
        ind += a(i, k);
        has_ind = true;
      }
    }
    if (has_d) duplicate.add(d);
    if (has_ind) induction.add(ind);
  }
  s.punctuation = punctuation.get();
  if (queries) {
    s.duplicate_token = duplicate.get();
    s.induction = induction.get();
  }
}

/// Scores of one head given as a row accessor: rows (n) of probabilities over m keys, already
/// normalised; `scored[i]` false for an all-zero row.
HeadScoreValues score_rows(const RowMatrixXd& a, const std::vector<bool>& scored) {
  const Index n = a.rows(), m = a.cols();
  HeadScoreValues s;
  Mean prev, diag, band, first, dist, ent, peak;
  std::vector<double> col_sum(static_cast<std::size_t>(m), 0.0);
  Index rows_scored = 0;
  for (Index i = 0; i < n; ++i) {
    if (!scored[static_cast<std::size_t>(i)]) continue;
    ++rows_scored;
    if (i >= 1 && i - 1 < m) prev.add(a(i, i - 1));
    if (i < m) diag.add(a(i, i));
    if (i >= 1) first.add(a(i, 0));
    double b = 0.0, d = 0.0, e = 0.0, mx = 0.0;
    for (Index j = 0; j < m; ++j) {
      const double x = a(i, j);
      if (j >= i - 1 && j <= i + 1) b += x;
      d += x * double(std::abs(i - j));
      if (x > 0.0) e -= x * std::log2(x);
      mx = std::max(mx, x);
      if (j != i) col_sum[static_cast<std::size_t>(j)] += x;
    }
    band.add(b);
    dist.add(d);
    ent.add(e);
    peak.add(mx);
  }
  s.previous_token = prev.get();
  s.diagonal = diag.get();
  s.local_band = band.get();
  s.first_token = first.get();
  s.mean_distance = dist.get();
  s.entropy_bits = ent.get();
  s.max_weight = peak.get();
  if (rows_scored > 0) {
    const Index span = std::max(n, m) - 1;
    s.mean_distance_normalized = span == 0 ? 0.0 : *s.mean_distance / double(span);
    s.entropy_normalized = m == 1 ? 0.0 : *s.entropy_bits / std::log2(double(m));
    // Vertical stripe: rows other than the key's own position.
    for (Index j = 0; j < m; ++j) {
      const Index rows = rows_scored - ((j < n && scored[static_cast<std::size_t>(j)]) ? 1 : 0);
      if (rows == 0) continue;
      const double mean = col_sum[static_cast<std::size_t>(j)] / double(rows);
      if (!s.vertical_stripe || mean > *s.vertical_stripe) {
        s.vertical_stripe = mean;
        s.stripe_key = j;
      }
    }
  }
  return s;
}

bool passes(const std::optional<double>& score, const std::optional<double>& baseline,
            double threshold, double margin) {
  if (!score) return false;
  const double base = baseline.value_or(0.0);
  return *score >= threshold && *score >= base + margin;
}

}  // namespace

std::vector<std::string> head_labels(const HeadScoreValues& s, const HeadScoreValues& b,
                                     const HeadScoreThresholds& t) {
  const bool previous = passes(s.previous_token, b.previous_token, t.previous_token, t.margin);
  const bool positional = !previous && passes(s.local_band, b.local_band, t.local_band, t.margin);
  const bool stripe = passes(s.vertical_stripe, b.vertical_stripe, t.vertical_stripe, t.margin);
  const bool long_range = !stripe && passes(s.mean_distance_normalized, b.mean_distance_normalized,
                                            t.long_range, t.margin);
  std::vector<std::string> labels;
  if (previous) labels.emplace_back("previous-token");
  if (positional) labels.emplace_back("positional");
  if (stripe) labels.emplace_back("vertical-stripe");
  if (long_range) labels.emplace_back("long-range");
  if (passes(s.duplicate_token, b.duplicate_token, t.duplicate_token, t.margin))
    labels.emplace_back("duplicate-token");
  if (passes(s.induction, b.induction, t.induction, t.margin)) labels.emplace_back("induction");
  if (passes(s.punctuation, b.punctuation, t.punctuation, t.margin))
    labels.emplace_back("punctuation");
  return labels;
}

bool is_punctuation_token(std::string_view token) {
  if (token.empty()) return false;
  std::size_t pos = 0;
  while (pos < token.size()) {
    const auto cp = next_code_point(token, pos);
    if (!cp || !is_punctuation_code_point(*cp)) return false;
  }
  return true;
}

std::vector<HeadScores> score_heads(const HeadStack& weights, const HeadScoreThresholds& t,
                                    const std::string& what) {
  return score_heads(weights, HeadTokens{}, t, what);
}

std::vector<HeadScores> score_heads(const HeadStack& weights, const HeadTokens& tokens,
                                    const HeadScoreThresholds& t, const std::string& what) {
  validate_attention_weights(weights, what);
  const Index h = weights.heads(), n = weights.rows(), m = weights.cols();
  if (!tokens.keys.empty() && static_cast<Index>(tokens.keys.size()) != m) {
    throw shape_error("tokens has " + std::to_string(tokens.keys.size()) + " entries, " + what +
                      " has " + std::to_string(m) + " keys");
  }
  if (!tokens.queries.empty() && static_cast<Index>(tokens.queries.size()) != n) {
    throw shape_error("query tokens has " + std::to_string(tokens.queries.size()) + " entries, " +
                      what + " has " + std::to_string(n) + " queries");
  }
  const TokenIds ids = token_ids(tokens, n, m);
  std::vector<HeadScores> out;
  out.reserve(static_cast<std::size_t>(h));
  for (Index k = 0; k < h; ++k) {
    HeadScores hs;
    hs.head = k;
    RowMatrixXd a(n, m);
    std::vector<bool> scored(static_cast<std::size_t>(n), false);
    bool causal = n == m && n > 1;
    for (Index i = 0; i < n; ++i) {
      const double s = row_sum(weights, k, i);
      scored[static_cast<std::size_t>(i)] = s > 0.0;
      if (s > 0.0) ++hs.rows_scored;
      for (Index j = 0; j < m; ++j) {
        const double x = weights(k, i, j);
        a(i, j) = s > 0.0 ? x / s : 0.0;
        if (j > i && x != 0.0f) causal = false;
      }
    }
    hs.causal = causal;
    hs.scores = score_rows(a, scored);
    score_tokens(a, scored, ids, hs.scores);
    // The baseline: uniform over each scored row's allowed keys (all m, or j <= i when causal).
    RowMatrixXd u = RowMatrixXd::Zero(n, m);
    for (Index i = 0; i < n; ++i) {
      if (!scored[static_cast<std::size_t>(i)]) continue;
      const Index allowed = causal ? i + 1 : m;
      for (Index j = 0; j < allowed; ++j) u(i, j) = 1.0 / double(allowed);
    }
    hs.uniform_baseline = score_rows(u, scored);
    score_tokens(u, scored, ids, hs.uniform_baseline);

    hs.labels = head_labels(hs.scores, hs.uniform_baseline, t);
    out.push_back(std::move(hs));
  }
  return out;
}

RowMatrixXd js_distance_matrix(const HeadStack& weights, const std::string& what) {
  validate_attention_weights(weights, what);
  const Index h = weights.heads(), n = weights.rows(), m = weights.cols();
  RowMatrixXd sums(h, n);
  for (Index k = 0; k < h; ++k) {
    for (Index i = 0; i < n; ++i) sums(k, i) = row_sum(weights, k, i);
  }
  RowMatrixXd d = RowMatrixXd::Zero(h, h);
  for (Index a = 0; a < h; ++a) {
    for (Index b = a + 1; b < h; ++b) {
      double total = 0.0;
      Index rows = 0;
      for (Index i = 0; i < n; ++i) {
        const double sa = sums(a, i), sb = sums(b, i);
        if (sa == 0.0 && sb == 0.0) continue;
        ++rows;
        if (sa == 0.0 || sb == 0.0) {
          total += 1.0;
          continue;
        }
        double jsd = 0.0;
        for (Index j = 0; j < m; ++j) {
          const double p = weights(a, i, j) / sa, q = weights(b, i, j) / sb;
          const double mid = p + q;  // 2 M
          if (p > 0.0) jsd += 0.5 * p * std::log2(2.0 * p / mid);
          if (q > 0.0) jsd += 0.5 * q * std::log2(2.0 * q / mid);
        }
        total += std::sqrt(std::clamp(jsd, 0.0, 1.0));
      }
      d(a, b) = d(b, a) = rows == 0 ? 0.0 : total / double(rows);
    }
  }
  return d;
}

RowMatrixXf mean_over_heads(const HeadStack& weights, const std::string& what) {
  validate_attention_weights(weights, what);
  RowMatrixXd sum = RowMatrixXd::Zero(weights.rows(), weights.cols());
  for (Index k = 0; k < weights.heads(); ++k) sum += weights.head(k).cast<double>();
  return (sum / double(weights.heads())).cast<float>();
}

RowMatrixXf max_over_heads(const HeadStack& weights, const std::string& what) {
  validate_attention_weights(weights, what);
  RowMatrixXf out = weights.head(0);
  for (Index k = 1; k < weights.heads(); ++k) out = out.cwiseMax(weights.head(k));
  return out;
}

RowMatrixXd attention_rollout(const std::vector<HeadStack>& layers) {
  if (layers.empty()) throw shape_error("attention rollout needs at least one layer, got none");
  const Index n = layers[0].rows();
  RowMatrixXd rollout;
  for (std::size_t l = 0; l < layers.size(); ++l) {
    const std::string what = "layer " + std::to_string(l);
    const HeadStack& w = layers[l];
    if (w.rows() != w.cols()) {
      throw shape_error("attention rollout needs self-attention: " + what + " has " +
                        std::to_string(w.rows()) + " queries and " + std::to_string(w.cols()) +
                        " keys");
    }
    if (w.rows() != n) {
      throw shape_error("attention rollout: " + what + " has " + std::to_string(w.rows()) +
                        " tokens, layer 0 has " + std::to_string(n));
    }
    validate_attention_weights(w, what);
    RowMatrixXd a = RowMatrixXd::Zero(n, n);
    for (Index k = 0; k < w.heads(); ++k) a += w.head(k).cast<double>();
    a = 0.5 * a / double(w.heads()) + 0.5 * RowMatrixXd::Identity(n, n);
    for (Index i = 0; i < n; ++i) a.row(i) /= a.row(i).sum();  // >= 0.5: never zero
    rollout = l == 0 ? a : RowMatrixXd(a * rollout);
  }
  return rollout;
}

CellExplanation explain_cell(const AttentionResult& r, const AttentionMasks& masks, Index head,
                             Index i, Index j) {
  const HeadStack& w = r.attn_weights;
  const Index h = w.heads(), n = w.rows(), m = w.cols();
  if (r.scores.empty() || r.q.size() == 0) {
    throw shape_error(
        "explain_cell needs the forward pass's intermediates (q, k, v, scores, head_outputs): "
        "run it with keep_intermediates");
  }
  const Index d = r.q.cols();
  if (h < 1 || d % h != 0 || r.q.rows() != n || r.k.rows() != m || r.v.rows() != m ||
      r.k.cols() != d || r.v.cols() != d || r.scores.heads() != h || r.scores.rows() != n ||
      r.scores.cols() != m || r.head_outputs.rows() != n || r.head_outputs.cols() != d) {
    throw shape_error(
        "explain_cell: the intermediates disagree with attn_weights (" + std::to_string(h) + ", " +
        std::to_string(n) + ", " + std::to_string(m) + "): q (" + std::to_string(r.q.rows()) +
        ", " + std::to_string(d) + "), k (" + std::to_string(r.k.rows()) + ", " +
        std::to_string(r.k.cols()) + "), scores (" + std::to_string(r.scores.heads()) + ", " +
        std::to_string(r.scores.rows()) + ", " + std::to_string(r.scores.cols()) + ")");
  }
  const auto check = [](const char* name, Index value, Index size) {
    if (value < 0 || value >= size) {
      throw shape_error(std::string("explain_cell: ") + name + "=" + std::to_string(value) +
                        " is outside [0, " + std::to_string(size) + ")");
    }
  };
  check("head", head, h);
  check("i", i, n);
  check("j", j, m);
  masks.validate(h, n, m);

  CellExplanation c;
  c.head = head;
  c.i = i;
  c.j = j;
  c.d_head = d / h;
  const Index c0 = head * c.d_head;
  for (Index t = 0; t < c.d_head; ++t) {
    c.q_i.push_back(r.q(i, c0 + t));
    c.k_j.push_back(r.k(j, c0 + t));
    c.v_j.push_back(r.v(j, c0 + t));
    c.dot += c.q_i.back() * c.k_j.back();
    c.head_output_i.push_back(r.head_outputs(i, c0 + t));
  }
  c.scale = 1.0 / std::sqrt(double(c.d_head));
  c.scaled = c.dot * c.scale;
  c.mask_term = masks.term(head, i, j);
  c.score = r.scores(head, i, j);
  c.weight = w(head, i, j);

  const double ninf = -std::numeric_limits<double>::infinity();
  c.row_max = ninf;
  for (Index t = 0; t < m; ++t) c.row_max = std::max(c.row_max, double(r.scores(head, i, t)));
  c.row_fully_masked = c.row_max == ninf;
  if (!c.row_fully_masked) {
    for (Index t = 0; t < m; ++t) {
      const double s = r.scores(head, i, t);
      c.row_sum_shifted += std::exp(s - c.row_max);
      c.row_sum_unshifted += std::exp(s);
    }
    c.exp_shifted = std::exp(c.score - c.row_max);
    c.exp_unshifted = std::exp(c.score);
    c.weight_recomputed = c.exp_shifted / c.row_sum_shifted;
  }
  for (Index t = 0; t < c.d_head; ++t)
    c.contribution.push_back(c.weight * c.v_j[static_cast<std::size_t>(t)]);
  return c;
}

double relative_change(const MatrixRef& base, const MatrixRef& changed) {
  if (base.rows() != changed.rows() || base.cols() != changed.cols()) {
    throw shape_error("relative_change: shapes differ, (" + std::to_string(base.rows()) + ", " +
                      std::to_string(base.cols()) + ") and (" + std::to_string(changed.rows()) +
                      ", " + std::to_string(changed.cols()) + ")");
  }
  if (!base.allFinite() || !changed.allFinite()) {
    throw value_error("relative_change: the outputs hold NaN or inf");
  }
  const double norm = base.cast<double>().norm();
  if (norm == 0.0) {
    throw value_error(
        "relative_change: the unablated output is all zero, so a relative change "
        "is undefined");
  }
  return (changed.cast<double>() - base.cast<double>()).norm() / norm;
}

AblationEffect ablation_effect(const MultiheadAttention& layer, const MatrixRef& query,
                               const MatrixRef& key, const MatrixRef& value,
                               const AttentionMasks& masks,
                               const std::vector<std::uint8_t>& ablated_heads) {
  ForwardOptions plain(false);
  ForwardOptions off(false);
  off.ablated_heads = ablated_heads;
  AblationEffect e;
  e.output = layer.forward(query, key, value, masks, plain).output;
  e.ablated_output = layer.forward(query, key, value, masks, off).output;
  e.relative_change = relative_change(e.output, e.ablated_output);
  return e;
}

}  // namespace mha
