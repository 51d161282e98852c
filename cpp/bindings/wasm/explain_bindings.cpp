// Embind exports for the page's explain views: head-pattern scores, Jensen–Shannon distances,
// mean / max / rollout combinations, sliding-window masks, one cell's explanation and head
// ablation (mha/patterns.hpp). Pure computations on arrays the page already holds. In the full module
// (mha_wasm.js) only: their ~25 KB gzipped do not fit the core module's first-load budget, so the
// page loads them on demand (web/src/compute/wasm_modules.js, loadFullModule). File loading lives in
// load_bindings.cpp. Reference: docs/js-api.md "Head patterns and explanations".
//
// Shape legend: h = num_heads, n = query tokens, m = key tokens, d = d_model, d_head = d / h,
// L = layers. Arrays are flat row-major: attn_weights (h*n*m), a matrix (n*m).
#include <emscripten/bind.h>
#include <emscripten/val.h>

#include <cstdint>
#include <string>
#include <vector>

#include "js_convert.hpp"
#include "mha/head_report.hpp"
#include "mha/head_report_io.hpp"
#include "mha/patterns.hpp"

namespace {

using namespace mha_js;

const std::vector<std::string> kStackKeys = {"attn_weights", "num_heads", "n", "m"};

/// {attn_weights: h*n*m, num_heads, n, m?} -> a (h, n, m) stack (m defaults to n).
mha::HeadStack read_stack(const val& req, const char* key = "attn_weights") {
  const Index h = static_cast<Index>(integer(req, "num_heads", 1, mha::limits::max_num_heads));
  const Index n = static_cast<Index>(integer(req, "n", 1, mha::limits::max_tokens));
  const Index m =
      has(req, "m") ? static_cast<Index>(integer(req, "m", 1, mha::limits::max_tokens)) : n;
  // 64-bit: h * n * m reaches 2^32 within the per-dimension limits and Index is 32-bit here.
  const std::int64_t entries = std::int64_t{h} * n * m;
  if (entries > mha::limits::max_weight_entries) {
    throw mha::limit_error(std::string(key) + ": num_heads*n*m = " + std::to_string(entries) +
                           " exceeds the limit of " +
                           std::to_string(mha::limits::max_weight_entries) + " weights");
  }
  const mha::RowMatrixXf flat = matrix(req, key, 1, h * n * m, "num_heads*n*m");
  mha::HeadStack s(h, n, m);
  std::copy(flat.data(), flat.data() + flat.size(), s.data());
  return s;
}

val optional_number(const std::optional<double>& x) { return x ? val(*x) : val::null(); }

val score_values_to_js(const mha::HeadScoreValues& s) {
  val o = val::object();
  o.set("previous_token", optional_number(s.previous_token));
  o.set("diagonal", optional_number(s.diagonal));
  o.set("local_band", optional_number(s.local_band));
  o.set("vertical_stripe", optional_number(s.vertical_stripe));
  o.set("stripe_key", static_cast<double>(s.stripe_key));
  o.set("first_token", optional_number(s.first_token));
  o.set("mean_distance", optional_number(s.mean_distance));
  o.set("mean_distance_normalized", optional_number(s.mean_distance_normalized));
  o.set("entropy_bits", optional_number(s.entropy_bits));
  o.set("entropy_normalized", optional_number(s.entropy_normalized));
  o.set("max_weight", optional_number(s.max_weight));
  o.set("duplicate_token", optional_number(s.duplicate_token));
  o.set("induction", optional_number(s.induction));
  o.set("punctuation", optional_number(s.punctuation));
  return o;
}

val float64_copy(const double* data, Index size) {
  return val::global("Float64Array")
      .new_(emscripten::typed_memory_view(static_cast<std::size_t>(size), data));
}

mha::HeadScoreThresholds read_thresholds(const val& req) {
  mha::HeadScoreThresholds t;
  if (!has(req, "thresholds")) return t;
  const val o = req["thresholds"];
  static const std::vector<std::string> keys = {
      "previous_token",  "local_band", "vertical_stripe", "long_range",
      "duplicate_token", "induction",  "punctuation",     "margin"};
  expect_request(o, "thresholds", {&keys});
  for (const auto& [key, field] :
       {std::pair{"previous_token", &t.previous_token}, std::pair{"local_band", &t.local_band},
        std::pair{"vertical_stripe", &t.vertical_stripe}, std::pair{"long_range", &t.long_range},
        std::pair{"duplicate_token", &t.duplicate_token}, std::pair{"induction", &t.induction},
        std::pair{"punctuation", &t.punctuation}, std::pair{"margin", &t.margin}}) {
    if (!has(o, key)) continue;
    if (o[key].typeOf().as<std::string>() != "number" || !std::isfinite(o[key].as<double>())) {
      throw mha::parse_error(std::string("thresholds.") + key + " must be a finite number");
    }
    *field = o[key].as<double>();
  }
  return t;
}

/// req[key]: an array of `count` strings (any number when `count` is negative), or {} when the
/// key is absent or null.
/// Throws parse_error naming the key and entry (not an array, not a string), shape_error when the
/// length is not `count`.
std::vector<std::string> token_list(const val& req, const char* key, Index count,
                                    const char* dimension) {
  if (!has(req, key) || req[key].isNull()) return {};
  if (!req[key].isArray())
    throw mha::parse_error(std::string(key) + " must be an array of strings");
  const val a = req[key];
  const std::size_t length = a["length"].as<std::size_t>();
  if (count >= 0 && static_cast<Index>(length) != count) {
    throw mha::shape_error(std::string(key) + " has " + std::to_string(length) +
                           " entries, attn_weights has " + std::to_string(count) + " " + dimension);
  }
  std::vector<std::string> out;
  out.reserve(length);
  for (std::size_t i = 0; i < length; ++i) {
    if (a[i].typeOf().as<std::string>() != "string") {
      throw mha::parse_error(std::string(key) + "[" + std::to_string(i) +
                             "] must be a string, got " + js_repr(a[i]));
    }
    out.push_back(a[i].as<std::string>());
  }
  return out;
}

/// mod.headPatterns({attn_weights, num_heads, n, m?, tokens?, query_tokens?, unmatched_tokens?,
/// thresholds?}) -> {heads, js_distance, thresholds}. tokens (m strings) and query_tokens (n
/// strings) give the token scores (mha::HeadTokens); without them those scores are null.
/// unmatched_tokens (strings, any number): tokens that are no repeat of anything
/// (HeadTokens::unmatched, e.g. a model's "<unk>").
val head_patterns(val req) {
  return guarded([&] {
    static const std::vector<std::string> extra = {"thresholds", "tokens", "query_tokens",
                                                   "unmatched_tokens"};
    expect_request(req, "the headPatterns request", {&kStackKeys, &extra});
    const mha::HeadStack s = read_stack(req);
    const mha::HeadScoreThresholds t = read_thresholds(req);
    const mha::HeadTokens tokens{token_list(req, "tokens", s.cols(), "keys"),
                                 token_list(req, "query_tokens", s.rows(), "queries"),
                                 token_list(req, "unmatched_tokens", -1, "")};
    const std::vector<mha::HeadScores> scores = mha::score_heads(s, tokens, t);
    val heads = val::array();
    for (std::size_t k = 0; k < scores.size(); ++k) {
      const mha::HeadScores& hs = scores[k];
      val o = val::object();
      o.set("head", static_cast<double>(hs.head));
      o.set("rows_scored", static_cast<double>(hs.rows_scored));
      o.set("causal", hs.causal);
      o.set("scores", score_values_to_js(hs.scores));
      o.set("uniform_baseline", score_values_to_js(hs.uniform_baseline));
      o.set("labels", string_array(hs.labels));
      heads.set(k, o);
    }
    const mha::RowMatrixXd d = mha::js_distance_matrix(s);
    val th = val::object();
    th.set("previous_token", t.previous_token);
    th.set("local_band", t.local_band);
    th.set("vertical_stripe", t.vertical_stripe);
    th.set("long_range", t.long_range);
    th.set("duplicate_token", t.duplicate_token);
    th.set("induction", t.induction);
    th.set("punctuation", t.punctuation);
    th.set("margin", t.margin);
    val out = val::object();
    out.set("heads", heads);
    out.set("js_distance", float64_copy(d.data(), d.size()));
    out.set("thresholds", th);
    return out;
  });
}

/// A typed-array copy of any row-major Eigen matrix (Float32Array or Float64Array).
val matrix_copy(const mha::RowMatrixXf& a) { return float32_copy(a.data(), a.size()); }
val matrix_copy(const mha::RowMatrixXd& a) { return float64_copy(a.data(), a.size()); }

/// One request {attn_weights, num_heads, n, m?} -> f(stack) as a typed array: jsDistance
/// (Float64Array(h*h)), meanOverHeads and maxOverHeads (Float32Array(n*m)).
template <auto F>
val on_stack(val req, const char* what) {
  return guarded([&] {
    expect_request(req, std::string("the ") + what + " request", {&kStackKeys});
    return matrix_copy(F(read_stack(req), "attn_weights"));
  });
}

val js_distance(val req) { return on_stack<&mha::js_distance_matrix>(req, "jsDistance"); }
val mean_heads(val req) { return on_stack<&mha::mean_over_heads>(req, "meanOverHeads"); }
val max_heads(val req) { return on_stack<&mha::max_over_heads>(req, "maxOverHeads"); }

/// req.layers ([h*n*n weights, ...], with req.num_heads and req.n) as one stack per layer; a bad
/// layer's error names it ("layers[1]: ...").
std::vector<mha::HeadStack> read_layers(const val& req) {
  const val list = req["layers"];
  const auto count = list["length"].as<std::size_t>();
  std::vector<mha::HeadStack> layers;
  for (std::size_t l = 0; l < count; ++l) {
    val one = val::object();
    one.set("attn_weights", list[l]);
    one.set("num_heads", req["num_heads"]);
    one.set("n", req["n"]);
    try {
      layers.push_back(read_stack(one));
    } catch (const mha::error& e) {
      throw mha::shape_error("layers[" + std::to_string(l) + "]: " + e.what());
    }
  }
  return layers;
}

/// mod.attentionRollout({layers: [h*n*n, ...], num_heads, n}) -> Float64Array(n*n).
val attention_rollout(val req) {
  return guarded([&] {
    static const std::vector<std::string> keys = {"layers", "num_heads", "n"};
    expect_request(req, "the attentionRollout request", {&keys});
    if (!has(req, "layers") || !req["layers"].isArray()) {
      throw mha::parse_error("layers must be an array of per-layer weights (num_heads*n*n each)");
    }
    const mha::RowMatrixXd r = mha::attention_rollout(read_layers(req));
    return float64_copy(r.data(), r.size());
  });
}

/// mod.headReport({layers: [h*n*n, ...], num_heads, n, tokens, word_index?}) -> the head report
/// card of one text (mha::head_report, as head_report_to_json writes it; docs/patterns.md "Head
/// report card"). word_index (n integers): the word of each token; the card is then by word.
val head_report(val req) {
  return guarded([&] {
    static const std::vector<std::string> keys = {"layers", "num_heads", "n", "tokens",
                                                  "word_index"};
    expect_request(req, "the headReport request", {&keys});
    if (!has(req, "layers") || !req["layers"].isArray()) {
      throw mha::parse_error("layers must be an array of per-layer weights (num_heads*n*n each)");
    }
    const Index n = static_cast<Index>(integer(req, "n", 1, mha::limits::max_tokens));
    mha::ReportExample ex;
    ex.layers = read_layers(req);
    ex.tokens = token_list(req, "tokens", n, "tokens");
    if (ex.tokens.empty()) throw mha::parse_error("tokens (n strings) are required");
    if (has(req, "word_index") && !req["word_index"].isNull()) {
      const val w = req["word_index"];
      if (!w.isArray()) throw mha::parse_error("word_index must be an array of integers");
      const auto length = w["length"].as<std::size_t>();
      for (std::size_t i = 0; i < length; ++i) {
        if (w[i].typeOf().as<std::string>() != "number" || !std::isfinite(w[i].as<double>()) ||
            std::floor(w[i].as<double>()) != w[i].as<double>()) {
          throw mha::parse_error("word_index[" + std::to_string(i) + "] must be an integer, got " +
                                 js_repr(w[i]));
        }
        ex.word_index.push_back(static_cast<Index>(w[i].as<double>()));
      }
    }
    const std::string text = mha::head_report_to_json(mha::head_report({ex})).dump();
    return val::global("JSON").call<val>("parse", text);
  });
}

/// mod.byWordWeights(weights, n, wordIndex) -> Float32Array(k*w*w): the by-word view of k stacked
/// (n, n) matrices (weights: k*n*n values, e.g. a run's attnWeights, L*h*n*n), each by
/// mha::by_word_stack: W[u, v] = mean over the query pieces i of word u of the sum over the key
/// pieces j of word v of a[i, j]. wordIndex: n integers from 0 in steps of 0 or 1; w is the last + 1.
val by_word_weights(val weights, val n_value, val word_index) {
  return guarded([&] {
    if (n_value.typeOf().as<std::string>() != "number" || !std::isfinite(n_value.as<double>()) ||
        std::floor(n_value.as<double>()) != n_value.as<double>() || n_value.as<double>() < 1 ||
        n_value.as<double>() > mha::limits::max_tokens) {
      throw mha::parse_error("byWordWeights(weights, n, wordIndex): n must be an integer from 1 to " +
                             std::to_string(mha::limits::max_tokens) + ", got " + js_repr(n_value));
    }
    const auto n = static_cast<Index>(n_value.as<double>());
    const std::size_t length = array_length(weights, "weights");
    const std::size_t square = static_cast<std::size_t>(n) * static_cast<std::size_t>(n);
    if (length == 0 || length % square != 0) {
      throw mha::shape_error("weights has " + std::to_string(length) +
                             " values, expected a whole number of n*n = " + std::to_string(square) +
                             " matrices");
    }
    if (length > static_cast<std::size_t>(mha::limits::max_weight_entries)) {
      throw mha::limit_error("weights: " + std::to_string(length) + " values exceed the limit of " +
                             std::to_string(mha::limits::max_weight_entries) + " weights");
    }
    const auto k = static_cast<Index>(length / square);
    mha::HeadStack stack(k, n, n);
    copy_into(weights, stack.data(), length);
    if (!word_index.isArray() && !word_index.instanceof(val::global("Int32Array"))) {
      throw mha::parse_error("wordIndex must be an Int32Array or an array of integers");
    }
    std::vector<Index> words;
    const auto count = word_index["length"].as<std::size_t>();
    for (std::size_t i = 0; i < count; ++i) {
      const val x = word_index[i];
      if (x.typeOf().as<std::string>() != "number" || !std::isfinite(x.as<double>()) ||
          std::floor(x.as<double>()) != x.as<double>()) {
        throw mha::parse_error("wordIndex[" + std::to_string(i) + "] must be an integer, got " +
                               js_repr(x));
      }
      words.push_back(static_cast<Index>(x.as<double>()));
    }
    const mha::HeadStack out = mha::by_word_stack(stack, words);
    return float32_copy(out.data(), out.size());
  });
}

/// mod.slidingWindowMask({n, m?, window, is_causal?}) -> Uint8Array(n*m), 1 = may not attend.
val sliding_window_mask(val req) { return sliding_window_mask_js(req, "the slidingWindowMask request"); }

val doubles(const std::vector<double>& v) {
  return float64_copy(v.data(), static_cast<Index>(v.size()));
}

/// mod.explainCell(result, {head, i, j, attn_mask?, key_padding_mask?, is_causal?}): `result` is
/// what forward / layer.forward / numpyExperiment returned (with its intermediates).
val explain_cell(val result, val cell) {
  return guarded([&] {
    if (result.typeOf().as<std::string>() != "object" || result.isNull()) {
      throw mha::parse_error("explainCell(result, cell): result must be a forward result object");
    }
    static const std::vector<std::string> keys = {
        "head", "i", "j", "attn_mask", "key_padding_mask", "is_causal"};
    expect_request(cell, "explainCell's cell", {&keys});
    for (const char* key : {"q", "k", "v", "scores", "head_outputs"}) {
      if (!has(result, key)) {
        throw mha::shape_error(std::string("explainCell: the result has no ") + key +
                               ": run forward with keep_intermediates (the default) and "
                               "without weights_only");
      }
    }
    const Index h = static_cast<Index>(integer(result, "num_heads", 1, mha::limits::max_num_heads));
    const Index n = static_cast<Index>(integer(result, "n", 1, mha::limits::max_tokens));
    const Index m = static_cast<Index>(integer(result, "m", 1, mha::limits::max_tokens));
    const Index d = static_cast<Index>(integer(result, "d_model", 1, mha::limits::max_d_model));
    mha::AttentionResult r;
    r.q = matrix(result, "q", n, d, "n*d_model");
    r.k = matrix(result, "k", m, d, "m*d_model");
    r.v = matrix(result, "v", m, d, "m*d_model");
    r.head_outputs = matrix(result, "head_outputs", n, d, "n*d_model");
    r.attn_weights = read_stack(result, "attn_weights");
    r.scores = read_stack(result, "scores");
    const mha::AttentionMasks masks = read_masks(cell, h, n, m);
    const mha::CellExplanation c = mha::explain_cell(
        r, masks, static_cast<Index>(integer(cell, "head", 0, mha::limits::max_num_heads)),
        static_cast<Index>(integer(cell, "i", 0, mha::limits::max_tokens)),
        static_cast<Index>(integer(cell, "j", 0, mha::limits::max_tokens)));
    val o = val::object();
    o.set("head", static_cast<double>(c.head));
    o.set("i", static_cast<double>(c.i));
    o.set("j", static_cast<double>(c.j));
    o.set("d_head", static_cast<double>(c.d_head));
    o.set("q_i", doubles(c.q_i));
    o.set("k_j", doubles(c.k_j));
    o.set("v_j", doubles(c.v_j));
    o.set("dot", c.dot);
    o.set("scale", c.scale);
    o.set("scaled", c.scaled);
    o.set("mask_term", c.mask_term);
    o.set("score", c.score);
    o.set("row_max", c.row_max);
    o.set("exp_shifted", c.exp_shifted);
    o.set("row_sum_shifted", c.row_sum_shifted);
    o.set("exp_unshifted", c.exp_unshifted);
    o.set("row_sum_unshifted", c.row_sum_unshifted);
    o.set("weight_recomputed", c.weight_recomputed);
    o.set("weight", c.weight);
    o.set("row_fully_masked", c.row_fully_masked);
    o.set("contribution", doubles(c.contribution));
    o.set("head_output_i", doubles(c.head_output_i));
    return o;
  });
}

/// mod.ablationEffect(request): a forward request (config, weights, inputs, masks) with
/// ablated_heads -> {relative_change, output, ablated_output}.
val ablation_effect(val req) {
  return guarded([&] {
    expect_request(req, "the ablationEffect request", {&kConfigKeys, &kWeightKeys, &kInputKeys});
    if (!has(req, "ablated_heads")) {
      throw mha::parse_error("ablationEffect needs ablated_heads (one entry per head, 1 = off)");
    }
    const mha::AttentionConfig c = read_config(req);
    const mha::MultiheadAttention layer(c, read_weights(req, c));
    const Inputs in = read_inputs(req, c);
    const mha::RowMatrixXf& key = in.self ? in.query : in.key;
    const mha::RowMatrixXf& value = in.self ? in.query : in.value;
    const mha::AttentionMasks masks = read_masks(req, c.num_heads, in.query.rows(), key.rows());
    const mha::AblationEffect e =
        mha::ablation_effect(layer, in.query, key, value, masks, read_options(req).ablated_heads);
    val o = val::object();
    o.set("relative_change", e.relative_change);
    o.set("output", float32_copy(e.output.data(), e.output.size()));
    o.set("ablated_output", float32_copy(e.ablated_output.data(), e.ablated_output.size()));
    return o;
  });
}

}  // namespace

EMSCRIPTEN_BINDINGS(mha_lab_patterns) {
  using namespace emscripten;
  function("headPatterns", &head_patterns);
  function("headReport", &head_report);
  function("byWordWeights", &by_word_weights);
  function("jsDistance", &js_distance);
  function("meanOverHeads", &mean_heads);
  function("maxOverHeads", &max_heads);
  function("attentionRollout", &attention_rollout);
  function("slidingWindowMask", &sliding_window_mask);
  function("explainCell", &explain_cell);
  function("ablationEffect", &ablation_effect);
}
