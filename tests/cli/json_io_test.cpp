// mha_formats in process: parse_json_text, parse_forward_request (every error class, with the exact
// error type and a message naming the key and the values), float_to_json's round trip, and the
// response layout. The hand-checked case (d = 2):
//   query = [[1, 0], [0, 1]], in_proj_weight = three 2x2 identities, out_proj_weight = I.
//   h = 1: scores = [[1, 0], [0, 1]] / sqrt(2); weights row 0 = softmax([0.70711, 0])
//          = [0.66976, 0.33024]; V = I so output = weights.
//   h = 2 (d_head = 1): head 0 sees column 0: row 0 scores [1, 0] -> [0.73106, 0.26894],
//          row 1 scores [0, 0] -> [0.5, 0.5]; head 1 is the mirror image.
//          output column 0 = head 0 weights @ [1, 0] = [0.73106, 0.5]; column 1 = [0.5, 0.73106].
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <functional>
#include <initializer_list>
#include <limits>
#include <random>
#include <string>
#include <typeinfo>

#include "mha/experiment_json.hpp"
#include "mha/json_io.hpp"

namespace {

using nlohmann::json;

/// Runs `f`, which must throw exactly E with every part in its message.
template <class E>
::testing::AssertionResult throws(const std::function<void()>& f,
                                  std::initializer_list<const char*> parts) {
  try {
    f();
  } catch (const E& e) {
    const std::string msg = e.what();
    for (const char* part : parts) {
      if (msg.find(part) == std::string::npos) {
        return ::testing::AssertionFailure() << "message \"" << msg << "\" lacks \"" << part << "\"";
      }
    }
    if (msg.find('\n') != std::string::npos) {
      return ::testing::AssertionFailure() << "message \"" << msg << "\" spans several lines";
    }
    return ::testing::AssertionSuccess() << msg;
  } catch (const std::exception& e) {
    return ::testing::AssertionFailure()
           << "threw " << typeid(e).name() << " (" << e.what() << "), expected " << typeid(E).name();
  }
  return ::testing::AssertionFailure() << "did not throw";
}

template <class E>
::testing::AssertionResult request_throws(const json& request,
                                          std::initializer_list<const char*> parts) {
  return throws<E>([&] { (void)mha::parse_forward_request(request); }, parts);
}

json identity2(int num_heads) {
  return {{"num_heads", num_heads},
          {"query", {{1, 0}, {0, 1}}},
          {"in_proj_weight", {{1, 0}, {0, 1}, {1, 0}, {0, 1}, {1, 0}, {0, 1}}},
          {"out_proj_weight", {{1, 0}, {0, 1}}}};
}

/// A valid d = 4, h = 2, n = 3 self-attention request with biases; tests break one thing at a time.
json valid4() {
  json w = json::array();
  for (int r = 0; r < 12; ++r) {
    json row = json::array();
    for (int c = 0; c < 4; ++c) row.push_back(0.1 * ((r * 4 + c) % 7) - 0.3);
    w.push_back(row);
  }
  return {{"num_heads", 2},
          {"query", {{0.5, -1, 2, 0}, {1, 1, -0.25, 3}, {0, 0.75, 1, -2}}},
          {"in_proj_weight", w},
          {"in_proj_bias", {0.1, 0, 0, 0.2, 0, 0, -0.1, 0, 0, 0, 0.3, 0}},
          {"out_proj_weight", {{1, 0, 0, 0.5}, {0, 1, 0, 0}, {0, 0, 1, 0}, {0.25, 0, 0, 1}}},
          {"out_proj_bias", {0, 0.5, 0, -0.5}}};
}

/// A valid cross-attention request: n = 2, m = 3, d = 4, kdim = 3, vdim = 5, separate weights.
json cross() {
  auto filled = [](int rows, int cols, double scale) {
    json m = json::array();
    for (int r = 0; r < rows; ++r) {
      json row = json::array();
      for (int c = 0; c < cols; ++c) row.push_back(scale * ((r + 2 * c) % 5 - 2));
      m.push_back(row);
    }
    return m;
  };
  return {{"num_heads", 2},
          {"query", filled(2, 4, 0.5)},
          {"key", filled(3, 3, 0.25)},
          {"value", filled(3, 5, 1.0)},
          {"q_proj_weight", filled(4, 4, 0.1)},
          {"k_proj_weight", filled(4, 3, 0.2)},
          {"v_proj_weight", filled(4, 5, 0.3)},
          {"out_proj_weight", filled(4, 4, 0.4)}};
}

// ---------------------------------------------------------------------------------------------
// Valid requests

TEST(ParseForwardRequest, HandCheckedOneHead) {
  const mha::ForwardRequest req = mha::parse_forward_request(identity2(1));
  EXPECT_EQ(req.config.d_model, 2);
  EXPECT_EQ(req.config.num_heads, 1);
  EXPECT_TRUE(req.self_attention());
  EXPECT_TRUE(req.weights.is_fused());
  EXPECT_EQ(req.parameter_count(), 16);  // 4 d^2, no bias
  const mha::AttentionResult r = mha::run_forward(req);
  const float a = 1.0f / (1.0f + std::exp(-1.0f / std::sqrt(2.0f)));  // 0.66976
  EXPECT_NEAR(r.attn_weights(0, 0, 0), a, 1e-6);
  EXPECT_NEAR(r.attn_weights(0, 0, 1), 1 - a, 1e-6);
  EXPECT_NEAR(r.attn_weights(0, 1, 1), a, 1e-6);
  EXPECT_NEAR(r.output(0, 0), a, 1e-6);
  EXPECT_NEAR(r.output(1, 0), 1 - a, 1e-6);
  EXPECT_NEAR(0.6697615, a, 1e-7);
}

TEST(ParseForwardRequest, HandCheckedTwoHeadsResponse) {
  const mha::ForwardRequest req = mha::parse_forward_request(identity2(2));
  const json res = mha::response_to_json(mha::run_forward(req), req.config, req.parameter_count());
  const double s = 1.0 / (1.0 + std::exp(-1.0));  // softmax([1, 0])[0] = 0.7310586
  const json& w = res.at("attn_weights");
  ASSERT_EQ(w.size(), 2u);
  EXPECT_NEAR(w[0][0][0].get<double>(), s, 1e-6);
  EXPECT_NEAR(w[0][0][1].get<double>(), 1 - s, 1e-6);
  EXPECT_NEAR(w[0][1][0].get<double>(), 0.5, 1e-6);
  EXPECT_NEAR(w[1][0][0].get<double>(), 0.5, 1e-6);
  EXPECT_NEAR(w[1][1][1].get<double>(), s, 1e-6);
  EXPECT_NEAR(res["output"][0][0].get<double>(), s, 1e-6);
  EXPECT_NEAR(res["output"][0][1].get<double>(), 0.5, 1e-6);
  EXPECT_NEAR(res["output"][1][0].get<double>(), 0.5, 1e-6);
  EXPECT_NEAR(res["output"][1][1].get<double>(), s, 1e-6);
  EXPECT_EQ(res.at("fully_masked_rows"), json::array());
  EXPECT_EQ(res.at("num_heads"), 2);
  EXPECT_EQ(res.at("d_model"), 2);
  EXPECT_EQ(res.at("d_head"), 1);
  EXPECT_EQ(res.at("kdim"), 2);
  EXPECT_EQ(res.at("vdim"), 2);
  EXPECT_EQ(res.at("n"), 2);
  EXPECT_EQ(res.at("m"), 2);
  EXPECT_EQ(res.at("parameter_count"), 16);
}

TEST(ParseForwardRequest, ValuesArriveExactly) {
  json j = valid4();
  j["query"][1][2] = 0.1;  // stored as float32(0.1)
  const mha::ForwardRequest req = mha::parse_forward_request(j);
  EXPECT_EQ(req.query(1, 2), 0.1f);
  EXPECT_EQ(req.query(2, 3), -2.0f);
  EXPECT_EQ(req.weights.in_proj_bias.size(), 12);
  EXPECT_EQ(req.weights.in_proj_bias(10), 0.3f);
  EXPECT_EQ(req.weights.out_proj_bias(3), -0.5f);
  EXPECT_EQ(req.weights.out_proj_weight(0, 3), 0.5f);
  EXPECT_EQ(req.parameter_count(), 4 * 16 + 4 * 4);  // PyTorch: 4d^2 + 4d with bias
}

TEST(ParseForwardRequest, CrossAttentionSeparateWeights) {
  const mha::ForwardRequest req = mha::parse_forward_request(cross());
  EXPECT_FALSE(req.self_attention());
  EXPECT_FALSE(req.weights.is_fused());
  EXPECT_EQ(req.config.key_dim(), 3);
  EXPECT_EQ(req.config.value_dim(), 5);
  EXPECT_EQ(req.key.rows(), 3);
  EXPECT_EQ(req.parameter_count(), 16 + 12 + 20 + 16);
  const json res = mha::response_to_json(mha::run_forward(req), req.config, req.parameter_count());
  EXPECT_EQ(res.at("n"), 2);
  EXPECT_EQ(res.at("m"), 3);
  EXPECT_EQ(res.at("kdim"), 3);
  EXPECT_EQ(res.at("vdim"), 5);
  EXPECT_EQ(res.at("attn_weights")[1][1].size(), 3u);
  // kdim / vdim may be stated; they are checked against the key and value widths.
  json j = cross();
  j["kdim"] = 3;
  j["vdim"] = 5;
  EXPECT_NO_THROW((void)mha::parse_forward_request(j));
}

TEST(ParseForwardRequest, MasksOfEveryKind) {
  json j = valid4();
  j["attn_mask"] = {{false, true, false}, {false, false, false}, {true, true, true}};
  j["key_padding_mask"] = {false, false, true};
  j["is_causal"] = true;
  mha::ForwardRequest req = mha::parse_forward_request(j);
  EXPECT_EQ(req.masks.attn_mask_kind, mha::AttentionMasks::Kind::boolean);
  EXPECT_EQ(req.masks.attn_mask.heads(), 1);
  EXPECT_EQ(req.masks.attn_mask(0, 0, 1), 1.0f);
  EXPECT_EQ(req.masks.attn_mask(0, 1, 1), 0.0f);
  EXPECT_EQ(req.masks.key_padding_mask_kind, mha::AttentionMasks::Kind::boolean);
  EXPECT_EQ(req.masks.key_padding_mask, (std::vector<float>{0, 0, 1}));
  EXPECT_TRUE(req.masks.is_causal);
  // Row 2 is fully masked by the boolean mask: reported for both heads.
  const json res = mha::response_to_json(mha::run_forward(req), req.config, req.parameter_count());
  EXPECT_EQ(res.at("fully_masked_rows"), json({{0, 2}, {1, 2}}));
  EXPECT_EQ(res["attn_weights"][1][2], json({0.0, 0.0, 0.0}));

  json f = valid4();
  f["attn_mask"] = {{0, "-inf", 0.5}, {-1.5, 0, "-Infinity"}, {0, 0, 0}};
  req = mha::parse_forward_request(f);
  EXPECT_EQ(req.masks.attn_mask_kind, mha::AttentionMasks::Kind::additive);
  EXPECT_EQ(req.masks.attn_mask(0, 0, 1), -std::numeric_limits<float>::infinity());
  EXPECT_EQ(req.masks.attn_mask(0, 1, 2), -std::numeric_limits<float>::infinity());
  EXPECT_EQ(req.masks.attn_mask(0, 0, 2), 0.5f);
  EXPECT_EQ(req.masks.attn_mask(0, 1, 0), -1.5f);

  json p = valid4();  // per head (h, n, m)
  p["attn_mask"] = {{{false, true, true}, {false, false, true}, {false, false, false}},
                    {{false, false, false}, {false, false, false}, {true, false, false}}};
  req = mha::parse_forward_request(p);
  EXPECT_EQ(req.masks.attn_mask.heads(), 2);
  EXPECT_EQ(req.masks.attn_mask(1, 2, 0), 1.0f);
  EXPECT_EQ(req.masks.attn_mask(0, 2, 0), 0.0f);

  json one = valid4();  // (1, n, m): shared by every head, like (n, m)
  one["attn_mask"] = {{{0, "-inf", 0}, {0, 0, 0}, {0, 0, 0}}};
  req = mha::parse_forward_request(one);
  EXPECT_EQ(req.masks.attn_mask.heads(), 1);
  EXPECT_EQ(req.masks.attn_mask(0, 0, 1), -std::numeric_limits<float>::infinity());
  const json r1 = mha::response_to_json(mha::run_forward(req), req.config, req.parameter_count());
  EXPECT_EQ(r1["attn_weights"][1][0][1], 0.0);  // both heads masked
  EXPECT_EQ(r1["attn_weights"][0][0][1], 0.0);
}

TEST(ParseForwardRequest, FloatKeyPaddingMaskIsAddedToTheScores) {
  // Numbers (nn.MultiheadAttention's float key_padding_mask): added to every head's scores of
  // that key; "-inf" masks it. Booleans keep their meaning (true = ignore the key).
  json j = valid4();
  j["key_padding_mask"] = {0.5, "-inf", -1.25};
  mha::ForwardRequest req = mha::parse_forward_request(j);
  EXPECT_EQ(req.masks.key_padding_mask_kind, mha::AttentionMasks::Kind::additive);
  EXPECT_EQ(req.masks.key_padding_mask,
            (std::vector<float>{0.5f, -std::numeric_limits<float>::infinity(), -1.25f}));
  const mha::AttentionResult masked = mha::run_forward(req, {true});
  j.erase("key_padding_mask");
  const mha::AttentionResult plain = mha::run_forward(mha::parse_forward_request(j), {true});
  for (mha::Index h = 0; h < 2; ++h) {
    for (mha::Index i = 0; i < 3; ++i) {
      EXPECT_FLOAT_EQ(masked.scores(h, i, 0), plain.scores(h, i, 0) + 0.5f);
      EXPECT_EQ(masked.attn_weights(h, i, 1), 0.0f);
      EXPECT_FLOAT_EQ(masked.scores(h, i, 2), plain.scores(h, i, 2) - 1.25f);
    }
  }
  j["key_padding_mask"] = {0.5, true, 0};
  EXPECT_TRUE(request_throws<mha::parse_error>(
      j, {"key_padding_mask[1] is", "the first entry is a number"}));
  j["key_padding_mask"] = {0.5, "nan", 0};
  EXPECT_TRUE(request_throws<mha::value_error>(
      j, {"key_padding_mask[1]", "a float key_padding_mask may hold finite numbers or \"-inf\""}));
}

TEST(ParseForwardRequest, NullOptionalKeysAreAbsent) {
  json j = valid4();
  j["attn_mask"] = nullptr;
  j["key_padding_mask"] = nullptr;
  j["in_proj_bias"] = nullptr;
  j["is_causal"] = nullptr;
  const mha::ForwardRequest req = mha::parse_forward_request(j);
  EXPECT_EQ(req.masks.attn_mask_kind, mha::AttentionMasks::Kind::none);
  EXPECT_TRUE(req.masks.key_padding_mask.empty());
  EXPECT_EQ(req.weights.in_proj_bias.size(), 0);
  EXPECT_FALSE(req.masks.is_causal);
  EXPECT_EQ(req.parameter_count(), 4 * 16 + 4);  // out_proj_bias only
}

TEST(ParseForwardRequest, ParsedFromTextRoundTrip) {
  const std::string text = valid4().dump();
  const mha::ForwardRequest a = mha::parse_forward_request(mha::parse_json_text(text));
  const mha::ForwardRequest b = mha::parse_forward_request(valid4());
  EXPECT_EQ(a.query, b.query);
  EXPECT_EQ(a.weights.in_proj_weight, b.weights.in_proj_weight);
  const json ra = mha::response_to_json(mha::run_forward(a), a.config, a.parameter_count());
  const json rb = mha::response_to_json(mha::run_forward(b), b.config, b.parameter_count());
  EXPECT_EQ(ra, rb);
  // The response survives text: every float reads back as the float32 the core produced.
  const json back = mha::parse_json_text(ra.dump());
  const mha::AttentionResult r = mha::run_forward(a);
  for (mha::Index i = 0; i < r.output.rows(); ++i)
    for (mha::Index c = 0; c < r.output.cols(); ++c)
      EXPECT_EQ(static_cast<float>(back["output"][static_cast<std::size_t>(i)][static_cast<std::size_t>(c)].get<double>()),
                r.output(i, c));
}

// ---------------------------------------------------------------------------------------------
// Errors: JSON text

TEST(ParseJsonText, Malformed) {
  EXPECT_TRUE(throws<mha::parse_error>([] { (void)mha::parse_json_text("{\"num_heads\": 2,}"); },
                                       {"malformed JSON", "line 1, column"}));
  EXPECT_TRUE(throws<mha::parse_error>([] { (void)mha::parse_json_text(""); },
                                       {"malformed JSON"}));
  EXPECT_TRUE(throws<mha::parse_error>([] { (void)mha::parse_json_text("{} {}"); },
                                       {"malformed JSON", "end of input"}));
  EXPECT_TRUE(throws<mha::parse_error>([] { (void)mha::parse_json_text("{\"q\": NaN}"); },
                                       {"malformed JSON"}));
}

TEST(ParseJsonText, OverflowingNumber) {
  EXPECT_TRUE(throws<mha::parse_error>(
      [] { (void)mha::parse_json_text("{\"query\": [[1e999, 0]]}"); }, {"1e999"}));
}

TEST(ParseJsonText, DuplicateKey) {
  EXPECT_TRUE(throws<mha::parse_error>(
      [] { (void)mha::parse_json_text("{\"num_heads\": 1, \"query\": [[1]], \"query\": [[2]]}"); },
      {"duplicate key \"query\""}));
  // The same key in two different objects is fine.
  EXPECT_NO_THROW((void)mha::parse_json_text("[{\"a\": 1}, {\"a\": 2}]"));
}

// ---------------------------------------------------------------------------------------------
// Errors: request structure

TEST(RequestErrors, NotAnObject) {
  EXPECT_TRUE(request_throws<mha::parse_error>(json::array({1, 2}), {"JSON object", "array"}));
}

TEST(RequestErrors, UnknownKey) {
  json j = valid4();
  j["average_attn_weights"] = false;
  EXPECT_TRUE(request_throws<mha::parse_error>(j, {"unknown key \"average_attn_weights\""}));
}

TEST(RequestErrors, MissingKeys) {
  for (const char* key : {"num_heads", "query", "out_proj_weight"}) {
    json j = valid4();
    j.erase(key);
    EXPECT_TRUE(request_throws<mha::parse_error>(j, {"missing key", key})) << key;
  }
  json j = valid4();
  j.erase("in_proj_weight");
  EXPECT_TRUE(request_throws<mha::parse_error>(j, {"missing key \"in_proj_weight\""}));
}

TEST(RequestErrors, NumHeadsType) {
  json j = valid4();
  j["num_heads"] = 2.0;
  EXPECT_TRUE(request_throws<mha::parse_error>(j, {"num_heads must be an integer", "2.0"}));
  j["num_heads"] = "2";
  EXPECT_TRUE(request_throws<mha::parse_error>(j, {"num_heads must be an integer", "\"2\""}));
}

TEST(RequestErrors, NumHeadsValue) {
  json j = valid4();
  j["num_heads"] = 0;
  EXPECT_TRUE(request_throws<mha::config_error>(j, {"num_heads=0"}));
  j["num_heads"] = -3;
  EXPECT_TRUE(request_throws<mha::config_error>(j, {"num_heads=-3"}));
  j["num_heads"] = 300;
  EXPECT_TRUE(request_throws<mha::limit_error>(j, {"num_heads=300", "256"}));
}

TEST(RequestErrors, NotDivisible) {
  json j;
  j["num_heads"] = 3;
  j["query"] = json::array({json::array({0, 1, 2, 3, 4, 5, 6, 7, 8, 9})});
  j["in_proj_weight"] = json::array();
  j["out_proj_weight"] = json::array();
  EXPECT_TRUE(request_throws<mha::config_error>(j, {"d_model=10 is not divisible by num_heads=3"}));
}

TEST(RequestErrors, QueryWrongTypes) {
  json j = valid4();
  j["query"] = 5;
  EXPECT_TRUE(request_throws<mha::parse_error>(j, {"query must be", "the number 5"}));
  j["query"] = {1, 2, 3};
  EXPECT_TRUE(request_throws<mha::parse_error>(j, {"query[0] must be an array", "the number 1"}));
  j = valid4();
  j["query"][1][0] = "x";
  EXPECT_TRUE(request_throws<mha::parse_error>(j, {"query[1][0] must be a number", "\"x\""}));
  j["query"][1][0] = true;
  EXPECT_TRUE(request_throws<mha::parse_error>(j, {"query[1][0] must be a number", "true"}));
  j["query"][1][0] = nullptr;
  EXPECT_TRUE(request_throws<mha::parse_error>(j, {"query[1][0] must be a number", "null"}));
}

TEST(RequestErrors, RaggedArray) {
  json j = valid4();
  j["query"][2] = {1, 2, 3};
  EXPECT_TRUE(request_throws<mha::parse_error>(j, {"query[2] has 3 values, expected 4"}));
  j = valid4();
  j["in_proj_weight"][7].push_back(1.0);
  EXPECT_TRUE(request_throws<mha::parse_error>(j, {"in_proj_weight[7] has 5 values, expected 4"}));
  j = valid4();
  j["attn_mask"] = {{{false, false, false}, {false, false, false}, {false, false, false}},
                    {{false, false, false}, {false, false}, {false, false, false}}};
  EXPECT_TRUE(request_throws<mha::parse_error>(j, {"attn_mask[1][1] has 2 values, expected 3"}));
}

TEST(RequestErrors, EmptyArrays) {
  json j = valid4();
  j["query"] = json::array();
  EXPECT_TRUE(request_throws<mha::shape_error>(j, {"query is empty"}));
  j["query"] = {json::array(), json::array()};
  EXPECT_TRUE(request_throws<mha::shape_error>(j, {"query[0] is empty"}));
  j = valid4();
  j["key_padding_mask"] = json::array();
  EXPECT_TRUE(request_throws<mha::shape_error>(j, {"key_padding_mask is empty"}));
}

TEST(RequestErrors, NonFiniteAndOutOfFloat32) {
  json j = valid4();
  j["query"][0][1] = std::numeric_limits<double>::infinity();  // JSON built in process
  EXPECT_TRUE(request_throws<mha::value_error>(j, {"query[0][1] is inf", "finite"}));
  j = valid4();
  j["out_proj_weight"][3][2] = 1e39;
  EXPECT_TRUE(request_throws<mha::value_error>(j, {"out_proj_weight[3][2] = 1e+39", "float32"}));
  j = valid4();
  j["in_proj_bias"][4] = -std::numeric_limits<double>::quiet_NaN();
  EXPECT_TRUE(request_throws<mha::value_error>(j, {"in_proj_bias[4] is", "nan"}));
}

TEST(RequestErrors, KeyWithoutValue) {
  json j = cross();
  j.erase("value");
  EXPECT_TRUE(request_throws<mha::parse_error>(j, {"\"key\" given without \"value\""}));
  j = cross();
  j.erase("key");
  EXPECT_TRUE(request_throws<mha::parse_error>(j, {"\"value\" given without \"key\""}));
}

TEST(RequestErrors, ShapeMismatches) {
  json j = cross();
  j["value"].push_back({1, 2, 3, 4, 5});
  EXPECT_TRUE(request_throws<mha::shape_error>(j, {"key has m=3 rows but value has 4"}));
  j = cross();
  j["kdim"] = 6;
  EXPECT_TRUE(request_throws<mha::shape_error>(j, {"kdim=6", "key has 3 columns"}));
  j = valid4();
  j["vdim"] = 5;
  EXPECT_TRUE(request_throws<mha::shape_error>(j, {"vdim=5", "query has 4 columns"}));
  j = valid4();
  j["in_proj_weight"].erase(j["in_proj_weight"].begin());
  EXPECT_TRUE(request_throws<mha::shape_error>(j, {"in_proj_weight is (11, 4)", "(12, 4)"}));
  j = valid4();
  j["in_proj_bias"].erase(j["in_proj_bias"].begin());
  EXPECT_TRUE(request_throws<mha::shape_error>(j, {"in_proj_bias has 11 values", "12"}));
  j = valid4();
  j["out_proj_bias"] = {1, 2, 3};
  EXPECT_TRUE(request_throws<mha::shape_error>(j, {"out_proj_bias has 3 values", "4"}));
  j = cross();
  j["k_proj_weight"] = j["q_proj_weight"];
  EXPECT_TRUE(request_throws<mha::shape_error>(j, {"k_proj_weight is (4, 4)", "(4, 3)"}));
  // in_proj_weight cannot serve kdim != d_model.
  j = cross();
  j.erase("q_proj_weight");
  j.erase("k_proj_weight");
  j.erase("v_proj_weight");
  j["in_proj_weight"] = valid4()["in_proj_weight"];
  EXPECT_TRUE(request_throws<mha::shape_error>(j, {"kdim=3", "vdim=5", "d_model=4"}));
}

TEST(RequestErrors, WeightForms) {
  json j = valid4();
  j["q_proj_weight"] = j["out_proj_weight"];
  EXPECT_TRUE(request_throws<mha::parse_error>(j, {"either in_proj_weight or", "not both"}));
  j = cross();
  j.erase("v_proj_weight");
  EXPECT_TRUE(request_throws<mha::parse_error>(j, {"missing key \"v_proj_weight\""}));
}

TEST(RequestErrors, AttnMask) {
  json j = valid4();
  j["attn_mask"] = {{false, true}, {false, false}};
  EXPECT_TRUE(request_throws<mha::shape_error>(j, {"attn_mask is (2, 2)", "(3, 3)", "(2, 3, 3)"}));
  j["attn_mask"] = {{{false, false, false}, {false, false, false}, {false, false, false}},
                    {{false, false, false}, {false, false, false}, {false, false, false}},
                    {{false, false, false}, {false, false, false}, {false, false, false}}};
  EXPECT_TRUE(request_throws<mha::shape_error>(j, {"attn_mask is (3, 3, 3)", "(2, 3, 3)"}));
  j["attn_mask"] = {{false, true, 0}, {false, false, false}, {false, false, false}};
  EXPECT_TRUE(request_throws<mha::parse_error>(j, {"attn_mask[0][2] is the number 0", "only booleans"}));
  j["attn_mask"] = {{0, 1, 0}, {false, 0, 0}, {0, 0, 0}};
  EXPECT_TRUE(request_throws<mha::parse_error>(j, {"attn_mask[1][0] is false", "only numbers"}));
  for (const char* bad : {"inf", "+inf", "Infinity", "nan", "NaN"}) {
    j["attn_mask"] = {{0, 0, 0}, {0, 0, bad}, {0, 0, 0}};
    EXPECT_TRUE(request_throws<mha::value_error>(j, {"attn_mask[1][2] is", bad, "never +inf or NaN"}))
        << bad;
  }
  j["attn_mask"] = {{0, 0, 0}, {0, 0, 0}, {"minus infinity", 0, 0}};
  EXPECT_TRUE(request_throws<mha::parse_error>(j, {"attn_mask[2][0]", "\"minus infinity\"", "\"-inf\""}));
  j["attn_mask"] = {{0, 0, 0}, {0, 0, 0}, {0, 0, std::numeric_limits<double>::infinity()}};
  EXPECT_TRUE(request_throws<mha::value_error>(j, {"attn_mask[2][2] is inf"}));
  j["attn_mask"] = {{0, 0, 0}, {0, 0, 0}, {0, 0, -1e300}};
  EXPECT_TRUE(request_throws<mha::value_error>(j, {"attn_mask[2][2] = -1e+300", "float32"}));
  j["attn_mask"] = {{0, 0, 0}, {0, 0, 0}, {0, {0}, 0}};
  EXPECT_TRUE(request_throws<mha::parse_error>(j, {"attn_mask[2][1] must be a number", "array"}));
}

TEST(RequestErrors, KeyPaddingMaskAndCausal) {
  json j = valid4();
  j["key_padding_mask"] = {false, 1, false};
  EXPECT_TRUE(request_throws<mha::parse_error>(
      j, {"key_padding_mask[1] is", "the first entry is a boolean"}));
  j["key_padding_mask"] = {false, false};
  EXPECT_TRUE(request_throws<mha::shape_error>(j, {"key_padding_mask has 2 values", "m = 3"}));
  j = valid4();
  j["is_causal"] = "yes";
  EXPECT_TRUE(request_throws<mha::parse_error>(j, {"is_causal must be true or false", "\"yes\""}));
}

TEST(RequestErrors, Limits) {
  json j = valid4();
  j["num_heads"] = 1;
  j["query"] = json::array();
  for (int i = 0; i < 4097; ++i) j["query"].push_back({0.0});
  EXPECT_TRUE(request_throws<mha::limit_error>(j, {"query has 4097 entries", "4096", "max_tokens"}));
  j["query"] = json::array({json::array()});
  for (int i = 0; i < 4097; ++i) j["query"][0].push_back(0.0);
  EXPECT_TRUE(request_throws<mha::limit_error>(j, {"query[0] has 4097 entries", "max_d_model"}));
  // h * n * m = 256 * 513 * 513 > 2^26 attention weights, caught before any weight is read.
  j["num_heads"] = 256;
  j["query"] = json::array();
  const json row(std::vector<double>(256, 0.0));
  for (int i = 0; i < 513; ++i) j["query"].push_back(row);
  EXPECT_TRUE(request_throws<mha::limit_error>(j, {"num_heads * n * m = 256 * 513 * 513", "67108864"}));
}

// ---------------------------------------------------------------------------------------------
// Serialising

TEST(FloatToJson, ShortestRoundTrip) {
  EXPECT_EQ(mha::float_to_json(0.1f).dump(), "0.1");
  EXPECT_EQ(mha::float_to_json(0.5f).dump(), "0.5");
  EXPECT_EQ(mha::float_to_json(-3.0f).dump(), "-3.0");
  EXPECT_EQ(mha::float_to_json(0.0f).dump(), "0.0");
  EXPECT_EQ(mha::float_to_json(1.0f / 3.0f).dump(), "0.33333334");
  EXPECT_TRUE(mha::float_to_json(std::numeric_limits<float>::infinity()).is_null());
}

TEST(FloatToJson, EveryFloatReadsBack) {
  // Random bit patterns over the whole finite range, plus the extremes: dump -> text ->
  // double -> float32 must give the same float back (what numpy / JS readers do).
  std::mt19937 gen(12345);
  std::vector<float> values = {std::numeric_limits<float>::max(), std::numeric_limits<float>::min(),
                               std::numeric_limits<float>::denorm_min(), -std::numeric_limits<float>::max(),
                               16777217.0f, 1e-45f, 3.4028235e38f};
  for (int i = 0; i < 200000; ++i) {
    const std::uint32_t bits = gen();
    float f;
    std::memcpy(&f, &bits, sizeof f);
    if (std::isfinite(f)) values.push_back(f);
  }
  int failures = 0;
  for (float f : values) {
    const std::string text = mha::float_to_json(f).dump();
    const float back = static_cast<float>(json::parse(text).get<double>());
    if (back != f && ++failures <= 5) ADD_FAILURE() << f << " printed as " << text;
  }
  EXPECT_EQ(failures, 0);
}

TEST(ExperimentToJson, CarriesDrawsAndResponse) {
  const mha::NumpyExperiment e = mha::make_numpy_experiment(7, 5, 8, 2);
  const mha::ExperimentOptions opt{true, true};
  const json res = mha::experiment_to_json(7, e, opt, mha::run_numpy_experiment(e, opt));
  EXPECT_EQ(res.at("seed"), 7);
  EXPECT_EQ(res.at("causal"), true);
  EXPECT_EQ(res.at("positional"), true);
  EXPECT_EQ(res.at("parameter_count"), 256);
  EXPECT_EQ(res.at("X")[0][0].get<double>(), e.x_f64(0, 0));  // exact float64 draws
  EXPECT_EQ(res.at("Wo")[7][7].get<double>(), e.Wo(7, 7));
  EXPECT_EQ(res.at("positional_encoding")[0][1].get<double>(), 1.0);  // cos(0)
  EXPECT_EQ(res.at("attn_weights")[1][0], json({1.0, 0.0, 0.0, 0.0, 0.0}));  // causal row 0
}

}  // namespace
