// The head report card (head_report.hpp; docs/patterns.md "Head report card").
#include "mha/head_report.hpp"

#include <algorithm>
#include <cmath>
#include <map>
#include <unordered_map>

namespace mha {
namespace {

/// What each score measures, its protocol and the paper's figure (docs/patterns.md).
struct Kind {
  const char* name;
  const char* protocol;
  const char* figure;
};
const Kind kKinds[] = {
    {"previous_token_argmax",
     "Voita et al. 2019: share of rows whose largest weight is on key i-1 (counted rows i >= 1; a "
     "tie at the maximum counts 1/ties)",
     "Voita et al. 2019: a positional head puts its largest weight on one offset in >= 90% of rows"},
    {"previous_token", "Clark et al. 2019: mean weight on key i-1 (counted rows i >= 1)",
     "Clark et al. 2019 (BERT-base): a few heads put > 50% of their attention on the previous "
     "token"},
    {"local_band", "module 03's neighbourhood: mean weight on keys |i-j| <= 1 (counted rows)", ""},
    {"argmax_offset",
     "Voita et al. 2019: share of rows whose largest weight is at the head's most frequent offset "
     "j-i (counted rows; ties split)",
     "Voita et al. 2019: a positional head puts its largest weight on one offset in >= 90% of rows"},
    {"punctuation",
     "Clark et al. 2019: mean share of a row's weight on punctuation tokens (counted rows)",
     "Clark et al. 2019 (BERT-base): over half of the attention of layers 6-10 is on [SEP]; deep "
     "heads attend to periods and commas"},
    {"first_token",
     "Gu et al. 2024 (attention sink), Clark et al. 2019 ([CLS]): mean weight on key 0 (counted "
     "rows i >= 1)",
     "Gu et al. 2024: with a <bos>, a trained model's no-op attention goes to the first token"},
    {"induction",
     "Olsson et al. 2022 prefix matching: mean weight on the tokens right after earlier "
     "occurrences of the row's token (counted rows that have one)",
     ""},
    {"same_token",
     "content: mean weight on earlier occurrences of the row's token at distance >= 2 (counted "
     "rows that have one), as the duplicate-token heads of Wang et al. 2022",
     ""},
    {"coreference",
     "from the pronoun's row(s) (mean over its pieces), share of probes whose summed weight on the "
     "antecedent (title + name) exceeds that on the other name; chance 0.5",
     "Clark et al. 2019 (BERT-base, CoNLL-2012, argmax on the antecedent's head word): head 5-4 "
     "65%, nearest mention 27%"},
};
constexpr std::size_t kNumKinds = sizeof(kKinds) / sizeof(kKinds[0]);
enum KindIndex : std::size_t {
  kPrevArgmax,
  kPrev,
  kBand,
  kOffset,
  kPunct,
  kFirst,
  kInduction,
  kSame,
  kCoref
};

/// A pooled mean and its chance: sums over rows, and the number of rows.
struct Acc {
  double value = 0.0, chance = 0.0;
  Index count = 0;
  void add(double v, double c) {
    value += v;
    chance += c;
    ++count;
  }
};

/// Everything one head accumulates over the examples.
struct HeadAcc {
  Acc acc[kNumKinds];
  std::map<Index, std::pair<double, double>> offsets;  ///< offset -> (argmax credit, chance)
  Index offset_rows = 0;
  Index coref_hits = 0, coref_probes = 0;
};

std::string where(std::size_t e, std::size_t l) {
  return "example " + std::to_string(e) + ", layer " + std::to_string(l);
}

void check_word_index(const std::vector<Index>& word_index, std::size_t n, const std::string& what) {
  if (word_index.size() != n) {
    throw shape_error(what + ": word_index has " + std::to_string(word_index.size()) +
                      " entries, the attention has " + std::to_string(n) + " tokens");
  }
  for (std::size_t i = 0; i < n; ++i) {
    const Index prev = i == 0 ? 0 : word_index[i - 1];
    const Index w = word_index[i];
    if ((i == 0 && w != 0) || (i > 0 && w != prev && w != prev + 1)) {
      throw value_error(what + ": word_index[" + std::to_string(i) + "] = " + std::to_string(w) +
                        " after " + (i == 0 ? std::string("the start") : std::to_string(prev)) +
                        "; word indices start at 0 and grow in steps of 0 or 1");
    }
  }
}

/// Token indices -> the sorted distinct words they belong to.
std::vector<Index> to_words(const std::vector<Index>& tokens, const std::vector<Index>& word_index) {
  std::vector<Index> out;
  for (const Index t : tokens) out.push_back(word_index[static_cast<std::size_t>(t)]);
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

void check_probe(const CoreferenceProbe& p, Index n, const std::string& what) {
  const auto span = [&](const std::vector<Index>& s, const char* name) {
    if (s.empty()) throw value_error(what + ": the probe's " + name + " span holds no token");
    for (const Index t : s) {
      if (t < 0 || t >= n) {
        throw value_error(what + ": the probe's " + name + " token " + std::to_string(t) +
                          " is outside [0, " + std::to_string(n) + ")");
      }
    }
  };
  span(p.pronoun, "pronoun");
  span(p.antecedent, "antecedent");
  span(p.other, "other");
  const Index first = *std::min_element(p.pronoun.begin(), p.pronoun.end());
  const Index last_mention = std::max(*std::max_element(p.antecedent.begin(), p.antecedent.end()),
                                      *std::max_element(p.other.begin(), p.other.end()));
  if (first <= last_mention) {
    throw value_error(what + ": the pronoun (token " + std::to_string(first) +
                      ") must come after both mentions (the last ends at token " +
                      std::to_string(last_mention) + ")");
  }
}

/// Scores one head of one example into `h`. `a` is the (n, n) head, `ids` the token ids (equal
/// strings, equal ids), `punct` is_punctuation_token of each token.
void score_head(const Eigen::Map<const RowMatrixXf>& a, const std::vector<int>& ids,
                const std::vector<bool>& punct, const std::optional<CoreferenceProbe>& probe,
                HeadAcc& h) {
  const Index n = a.rows();
  bool causal = n > 1;
  for (Index i = 0; i < n && causal; ++i) {
    for (Index j = i + 1; j < n; ++j) {
      if (a(i, j) != 0.0f) {
        causal = false;
        break;
      }
    }
  }
  std::vector<double> row(static_cast<std::size_t>(n));
  for (Index i = 0; i < n; ++i) {
    const Index visible = causal ? i + 1 : n;
    double sum = 0.0;
    for (Index j = 0; j < n; ++j) sum += a(i, j);
    if (sum <= 0.0 || visible < 2) continue;
    double mx = 0.0;
    for (Index j = 0; j < n; ++j) {
      row[static_cast<std::size_t>(j)] = a(i, j) / sum;
      mx = std::max(mx, row[static_cast<std::size_t>(j)]);
    }
    const auto at = [&](Index j) { return row[static_cast<std::size_t>(j)]; };
    Index ties = 0;
    for (Index j = 0; j < visible; ++j) ties += at(j) == mx ? 1 : 0;
    const double u = 1.0 / double(visible);
    if (i >= 1) {
      h.acc[kPrevArgmax].add(at(i - 1) == mx ? 1.0 / double(ties) : 0.0, u);
      h.acc[kPrev].add(at(i - 1), u);
      h.acc[kFirst].add(at(0), u);
    }
    double band = 0.0;
    Index band_keys = 0;
    for (Index j = std::max<Index>(0, i - 1); j <= std::min(visible - 1, i + 1); ++j) {
      band += at(j);
      ++band_keys;
    }
    h.acc[kBand].add(band, band_keys * u);
    for (Index j = 0; j < visible; ++j) {
      auto& o = h.offsets[j - i];
      if (at(j) == mx) o.first += 1.0 / double(ties);
      o.second += u;
    }
    ++h.offset_rows;
    double p = 0.0;
    Index p_keys = 0;
    for (Index j = 0; j < visible; ++j) {
      if (punct[static_cast<std::size_t>(j)]) {
        p += at(j);
        ++p_keys;
      }
    }
    h.acc[kPunct].add(p, p_keys * u);
    const int q = ids[static_cast<std::size_t>(i)];
    double ind = 0.0, same = 0.0;
    Index ind_keys = 0, same_keys = 0;
    for (Index k = 1; k <= std::min(i - 1, visible - 1); ++k) {
      if (ids[static_cast<std::size_t>(k - 1)] == q) {
        ind += at(k);
        ++ind_keys;
      }
    }
    for (Index j = 0; j <= std::min(i - 2, visible - 1); ++j) {
      if (ids[static_cast<std::size_t>(j)] == q) {
        same += at(j);
        ++same_keys;
      }
    }
    if (ind_keys > 0) h.acc[kInduction].add(ind, ind_keys * u);
    if (same_keys > 0) h.acc[kSame].add(same, same_keys * u);
  }
  if (probe) {
    double on_antecedent = 0.0, on_other = 0.0;
    Index rows = 0;
    for (const Index i : probe->pronoun) {
      double sum = 0.0;
      for (Index j = 0; j < n; ++j) sum += a(i, j);
      if (sum <= 0.0) continue;
      for (const Index j : probe->antecedent) on_antecedent += a(i, j) / sum;
      for (const Index j : probe->other) on_other += a(i, j) / sum;
      ++rows;
    }
    ++h.coref_probes;
    if (rows > 0 && on_antecedent > on_other) ++h.coref_hits;
  }
}

CardScore card_score(std::size_t kind, const HeadAcc& h) {
  CardScore s;
  s.name = kKinds[kind].name;
  s.protocol = kKinds[kind].protocol;
  s.figure = kKinds[kind].figure;
  if (kind == kOffset) {
    s.count = h.offset_rows;
    if (h.offset_rows > 0) {
      // The most frequent offset; on a tie the one nearest the diagonal, then the earlier one.
      auto best = h.offsets.end();
      for (auto it = h.offsets.begin(); it != h.offsets.end(); ++it) {
        if (best == h.offsets.end() || it->second.first > best->second.first ||
            (it->second.first == best->second.first &&
             std::abs(it->first) < std::abs(best->first))) {
          best = it;
        }
      }
      s.offset = best->first;
      s.value = best->second.first / double(h.offset_rows);
      s.chance = best->second.second / double(h.offset_rows);
    }
  } else if (kind == kCoref) {
    s.count = h.coref_probes;
    if (h.coref_probes > 0) {
      s.value = double(h.coref_hits) / double(h.coref_probes);
      s.chance = 0.5;
    }
  } else {
    const Acc& a = h.acc[kind];
    s.count = a.count;
    if (a.count > 0) {
      s.value = a.value / double(a.count);
      s.chance = a.chance / double(a.count);
    }
  }
  return s;
}

bool passes(const CardScore& s, double threshold, double margin) {
  return s.value && *s.value >= threshold && *s.value >= s.chance.value_or(0.0) + margin;
}

std::vector<std::string> card_labels(const std::vector<CardScore>& s, const HeadScoreThresholds& t) {
  HeadScoreValues v, chance;
  const auto put = [&](std::optional<double> HeadScoreValues::*field, std::size_t kind) {
    v.*field = s[kind].value;
    chance.*field = s[kind].chance;
  };
  put(&HeadScoreValues::previous_token, kPrev);
  put(&HeadScoreValues::local_band, kBand);
  put(&HeadScoreValues::duplicate_token, kSame);
  put(&HeadScoreValues::induction, kInduction);
  put(&HeadScoreValues::punctuation, kPunct);
  std::vector<std::string> labels = head_labels(v, chance, t);
  if (passes(s[kFirst], t.vertical_stripe, t.margin)) labels.emplace_back("first-token");
  if (passes(s[kCoref], 0.5, t.margin)) labels.emplace_back("coreference");
  return labels;
}

}  // namespace

const std::vector<std::string>& head_report_kinds() {
  static const std::vector<std::string> kinds = [] {
    std::vector<std::string> k;
    for (const Kind& kind : kKinds) k.emplace_back(kind.name);
    return k;
  }();
  return kinds;
}

HeadStack by_word_stack(const HeadStack& s, const std::vector<Index>& word_index) {
  const Index n = s.rows();
  check_word_index(word_index, static_cast<std::size_t>(n), "by word");
  if (s.cols() != n) {
    throw shape_error("by word: the attention is not square, (" + std::to_string(s.heads()) +
                      ", " + std::to_string(n) + ", " + std::to_string(s.cols()) + ")");
  }
  const Index w = n == 0 ? 0 : word_index.back() + 1;
  HeadStack out(s.heads(), w, w);
  for (Index k = 0; k < s.heads(); ++k) {
    RowMatrixXd sum = RowMatrixXd::Zero(w, w);
    std::vector<Index> rows(static_cast<std::size_t>(w), 0);
    for (Index i = 0; i < n; ++i) {
      const Index u = word_index[static_cast<std::size_t>(i)];
      double total = 0.0;
      for (Index j = 0; j < n; ++j) total += s(k, i, j);
      if (total <= 0.0) continue;
      ++rows[static_cast<std::size_t>(u)];
      for (Index j = 0; j < n; ++j) sum(u, word_index[static_cast<std::size_t>(j)]) += s(k, i, j);
    }
    for (Index u = 0; u < w; ++u) {
      const Index r = rows[static_cast<std::size_t>(u)];
      for (Index v = 0; v < w; ++v) out(k, u, v) = r == 0 ? 0.0f : float(sum(u, v) / double(r));
    }
  }
  return out;
}

std::vector<std::string> by_word_tokens(const std::vector<std::string>& tokens,
                                        const std::vector<Index>& word_index) {
  check_word_index(word_index, tokens.size(), "by word");
  std::vector<std::string> words;
  for (std::size_t i = 0; i < tokens.size(); ++i) {
    if (static_cast<std::size_t>(word_index[i]) == words.size()) words.emplace_back();
    std::string piece = tokens[i];
    for (std::size_t p; (p = piece.find("\xE2\x96\x81")) != std::string::npos;) piece.erase(p, 3);
    piece.erase(std::remove(piece.begin(), piece.end(), ' '), piece.end());
    words.back() += piece;
  }
  return words;
}

HeadReportCard head_report(const std::vector<ReportExample>& examples,
                           const HeadScoreThresholds& thresholds) {
  if (examples.empty()) throw shape_error("the head report needs at least one example, got none");
  HeadReportCard card;
  card.examples = static_cast<Index>(examples.size());
  card.by_word = !examples[0].word_index.empty();
  card.num_layers = static_cast<Index>(examples[0].layers.size());
  if (card.num_layers == 0) throw shape_error("example 0 has no layer of attention");
  card.num_heads = examples[0].layers[0].heads();
  const Index L = card.num_layers, H = card.num_heads;
  std::vector<HeadAcc> acc(static_cast<std::size_t>(L * H));
  Index nearer = 0;
  for (std::size_t e = 0; e < examples.size(); ++e) {
    const ReportExample& ex = examples[e];
    const std::string name = "example " + std::to_string(e);
    if (static_cast<Index>(ex.layers.size()) != L) {
      throw shape_error(name + " has " + std::to_string(ex.layers.size()) +
                        " layers, example 0 has " + std::to_string(L));
    }
    if (ex.word_index.empty() == card.by_word) {
      throw shape_error(name + (card.by_word ? " has no word_index" : " has a word_index") +
                        ", example 0 " + (card.by_word ? "has one" : "has none") +
                        ": give it for every example or for none");
    }
    const Index n = ex.layers[0].rows();
    if (static_cast<Index>(ex.tokens.size()) != n) {
      throw shape_error(name + ": tokens has " + std::to_string(ex.tokens.size()) +
                        " entries, the attention has " + std::to_string(n) + " tokens");
    }
    if (card.by_word) check_word_index(ex.word_index, static_cast<std::size_t>(n), name);
    std::optional<CoreferenceProbe> probe = ex.probe;
    if (probe) {
      check_probe(*probe, n, name);
      if (card.by_word) {
        probe = CoreferenceProbe{to_words(probe->pronoun, ex.word_index),
                                 to_words(probe->antecedent, ex.word_index),
                                 to_words(probe->other, ex.word_index)};
        check_probe(*probe, ex.word_index.back() + 1, name + " (by word)");
      }
      ++card.probes;
      if (probe->antecedent.back() > probe->other.back()) ++nearer;
    }
    const std::vector<std::string> tokens =
        card.by_word ? by_word_tokens(ex.tokens, ex.word_index) : ex.tokens;
    std::vector<int> ids;
    std::vector<bool> punct;
    std::unordered_map<std::string, int> index;
    for (const auto& t : tokens) {
      ids.push_back(index.emplace(t, static_cast<int>(index.size())).first->second);
      punct.push_back(is_punctuation_token(t));
    }
    for (Index l = 0; l < L; ++l) {
      const HeadStack& raw = ex.layers[static_cast<std::size_t>(l)];
      const std::string what = where(e, static_cast<std::size_t>(l));
      if (raw.heads() != H) {
        throw shape_error(what + " has " + std::to_string(raw.heads()) + " heads, example 0 has " +
                          std::to_string(H));
      }
      if (raw.rows() != n || raw.cols() != n) {
        throw shape_error(what + " has shape (" + std::to_string(raw.heads()) + ", " +
                          std::to_string(raw.rows()) + ", " + std::to_string(raw.cols()) +
                          "), expected self-attention over its " + std::to_string(n) + " tokens");
      }
      validate_attention_weights(raw, what);
      const HeadStack stack = card.by_word ? by_word_stack(raw, ex.word_index) : raw;
      for (Index k = 0; k < H; ++k) {
        score_head(stack.head(k), ids, punct, probe, acc[static_cast<std::size_t>(l * H + k)]);
      }
    }
  }
  if (card.probes > 0) card.nearer_name = double(nearer) / double(card.probes);
  for (Index l = 0; l < L; ++l) {
    for (Index k = 0; k < H; ++k) {
      HeadCard hc;
      hc.layer = l;
      hc.head = k;
      for (std::size_t kind = 0; kind < kNumKinds; ++kind) {
        hc.scores.push_back(card_score(kind, acc[static_cast<std::size_t>(l * H + k)]));
      }
      hc.labels = card_labels(hc.scores, thresholds);
      card.heads.push_back(std::move(hc));
    }
  }
  for (std::size_t kind = 0; kind < kNumKinds; ++kind) {
    const HeadCard* best = nullptr;
    for (const HeadCard& hc : card.heads) {
      const CardScore& s = hc.scores[kind];
      if (s.value && (!best || *s.value > *best->scores[kind].value)) best = &hc;
    }
    if (!best) continue;
    const CardScore& s = best->scores[kind];
    card.best.push_back(BestHead{s.name, best->layer, best->head, *s.value, s.chance, s.offset});
  }
  return card;
}

}  // namespace mha
