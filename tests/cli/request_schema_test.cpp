// The request key table (cpp/formats/mha/request_schema.hpp) against the parser that reads it:
// `mha forward`'s parse_forward_request knows exactly the keys the table marks as JSON keys, and
// the JS API's lists come out in the order its messages print.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include <string>
#include <vector>

#include "mha/errors.hpp"
#include "mha/json_io.hpp"
#include "mha/request_schema.hpp"

namespace {

using json = nlohmann::json;

/// The smallest valid request: one head, one token, d_model 1.
json minimal_request() {
  return {{"num_heads", 1},
          {"query", {{1.0}}},
          {"in_proj_weight", {{1.0}, {1.0}, {1.0}}},
          {"out_proj_weight", {{1.0}}}};
}

TEST(RequestSchema, ForwardParserKnowsExactlyTheJsonKeys) {
  int json_keys = 0;
  for (const mha::RequestKey& k : mha::kRequestKeys) {
    json request = minimal_request();
    if (request.contains(k.name)) {
      ++json_keys;
      continue;
    }
    request[k.name] = nullptr;  // a known optional key set to null counts as absent
    if (k.json) {
      ++json_keys;
      EXPECT_NO_THROW(mha::parse_forward_request(request)) << k.name;
    } else {
      try {
        mha::parse_forward_request(request);
        ADD_FAILURE() << k.name << " is not a JSON key but was accepted";
      } catch (const mha::parse_error& e) {
        EXPECT_EQ(std::string(e.what()).rfind(std::string("unknown key \"") + k.name + "\"", 0), 0u)
            << e.what();
      }
    }
  }
  EXPECT_EQ(json_keys, 16);
  EXPECT_EQ(mha::request_keys_sorted(mha::RequestFront::json).size(), 16u);
}

TEST(RequestSchema, JsListsInMessageOrder) {
  using mha::RequestFront;
  using mha::RequestGroup;
  EXPECT_EQ(mha::request_key_names(RequestGroup::config, RequestFront::js),
            (std::vector<std::string>{"d_model", "num_heads", "kdim", "vdim"}));
  EXPECT_EQ(mha::request_key_names(RequestGroup::weights, RequestFront::js),
            (std::vector<std::string>{"in_proj_weight", "q_proj_weight", "k_proj_weight",
                                      "v_proj_weight", "in_proj_bias", "out_proj_weight",
                                      "out_proj_bias"}));
  EXPECT_EQ(mha::request_key_names(RequestGroup::inputs, RequestFront::js),
            (std::vector<std::string>{"n", "m", "query", "key", "value", "attn_mask",
                                      "key_padding_mask", "is_causal", "keep_intermediates",
                                      "weights_only", "ablated_heads"}));
  EXPECT_EQ(mha::request_key_names(RequestGroup::config, RequestFront::json),
            (std::vector<std::string>{"num_heads", "kdim", "vdim"}));
}

}  // namespace
