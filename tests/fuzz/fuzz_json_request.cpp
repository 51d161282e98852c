// libFuzzer target: bytes -> mha::parse_json_text -> mha::parse_forward_request -> the forward
// pass -> mha::response_to_json -> text. Every input reaches both parsers whole; only the
// forward pass is skipped for requests too big to run thousands of times a second.
//
// Expected outcomes: a typed mha::error (bad JSON, bad request), or a response whose numbers are
// all finite and whose weights obey the contract (mha_fuzz::check_result). Findings: a crash,
// a sanitizer report (ASan, UBSan, LeakSanitizer), an exception that is not an mha::error (it
// escapes and terminates), NaN/inf in an output or in the parsed weights.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "fuzz_common.hpp"
#include "mha/json_io.hpp"

namespace {

/// Multiply-adds of one forward pass (projections, scores, weighted sum, out_proj): requests
/// above the budget are parsed and validated but not run, to keep executions fast.
constexpr mha::Index kMaxForwardWork = mha::Index{1} << 18;

void check_request(const mha::ForwardRequest& req) {
  const auto& w = req.weights;
  for (const auto* m : {&w.in_proj_weight, &w.q_proj_weight, &w.k_proj_weight, &w.v_proj_weight,
                        &w.out_proj_weight, &req.query, &req.key, &req.value}) {
    mha_fuzz::require_finite("a parsed matrix holds NaN or inf", *m);
  }
  mha_fuzz::require_finite("in_proj_bias holds NaN or inf", w.in_proj_bias);
  mha_fuzz::require_finite("out_proj_bias holds NaN or inf", w.out_proj_bias);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  try {
    const nlohmann::json doc = mha::parse_json_text(text);
    const mha::ForwardRequest req = mha::parse_forward_request(doc);
    check_request(req);
    const mha::Index h = req.config.num_heads, d = req.config.d_model;
    const mha::Index n = req.query.rows();
    const mha::Index m = req.self_attention() ? n : req.key.rows();
    const mha::Index kv = req.config.key_dim() + req.config.value_dim();
    const mha::Index work = n * d * d + m * d * kv + 2 * h * n * m * (d / h) + n * d * d;
    if (work > kMaxForwardWork) return 0;

    mha::ForwardOptions options;
    options.keep_intermediates = true;
    const mha::AttentionResult result = mha::run_forward(req, options);
    mha_fuzz::check_result(result, h, n, m, d);
    mha_fuzz::check_masked_rows(result, req.masks, h, n, m);
    const nlohmann::json response =
        mha::response_to_json(result, req.config, req.parameter_count());
    const std::string out = response.dump();
    // Every number the core produced is finite, so the response holds no null.
    if (out.find("null") != std::string::npos) mha_fuzz::finding("the response holds null");
    // The response is itself strict JSON (no duplicate keys, nothing trailing).
    (void)mha::parse_json_text(out);
  } catch (const mha::error&) {
    // Bad input, answered with a typed error: the expected outcome.
  }
  return 0;
}
