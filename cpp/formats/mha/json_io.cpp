// JSON responses: float32 values that read back exactly, matrices, weight stacks, the
// `mha forward` response. Format: json_io.hpp and docs/cli.md.
// Shape legend: n = query tokens, m = key tokens, d = d_model, h = num_heads.
#include "mha/json_io.hpp"

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <limits>
#include <string>
#include <utility>
#include <vector>

namespace mha {

using nlohmann::json;

// -----------------------------------------------------------------------------------------------
// Serialising

json float_to_json(float x) {
  if (!std::isfinite(x)) return json(nullptr);
  // A round-trip decimal for the float (Grisu2: at most 9 digits, almost always the fewest),
  // stored as the nearest double: nlohmann then prints that double's shortest form, i.e. the
  // same digits. Checked for random bit patterns over the whole float range in
  // tests/cli/json_io_test.cpp (and once for 3e7 floats, including all of [1, 2), by hand).
  // std::to_chars(float) would do this, but Emscripten 3.1's libc++ lacks it, so: nlohmann's own
  // Grisu2, which its serializer applies to float number types (fast, ~0.4 us), else the shortest
  // "%.*g" that reads back (~4 us).
  char buf[64] = {};
#if defined(NLOHMANN_JSON_VERSION_MAJOR) && NLOHMANN_JSON_VERSION_MAJOR == 3 && \
    defined(NLOHMANN_JSON_VERSION_MINOR) && NLOHMANN_JSON_VERSION_MINOR >= 9
  char* end = nlohmann::detail::to_chars(buf, buf + sizeof buf - 1, x);
  *end = '\0';
#else
  for (int digits = 1; digits <= 9; ++digits) {
    std::snprintf(buf, sizeof buf, "%.*g", digits, static_cast<double>(x));
    if (std::strtof(buf, nullptr) == x) break;
  }
#endif
  return json(std::strtod(buf, nullptr));
}

json matrix_to_json(const RowMatrixXf& matrix) {
  json rows = json::array();
  for (Index r = 0; r < matrix.rows(); ++r) {
    json row = json::array();
    for (Index c = 0; c < matrix.cols(); ++c) row.push_back(float_to_json(matrix(r, c)));
    rows.push_back(std::move(row));
  }
  return rows;
}

json matrix_to_json(const RowMatrixXd& matrix) {
  json rows = json::array();
  for (Index r = 0; r < matrix.rows(); ++r) {
    json row = json::array();
    for (Index c = 0; c < matrix.cols(); ++c) {
      const double x = matrix(r, c);
      row.push_back(std::isfinite(x) ? json(x) : json(nullptr));
    }
    rows.push_back(std::move(row));
  }
  return rows;
}

json head_stack_to_json(const HeadStack& stack) {
  json heads = json::array();
  for (Index i = 0; i < stack.heads(); ++i)
    heads.push_back(matrix_to_json(RowMatrixXf(stack.head(i))));
  return heads;
}

json response_to_json(const AttentionResult& result, const AttentionConfig& config,
                      Index parameter_count) {
  const Index h = result.attn_weights.heads();
  const Index n = result.attn_weights.rows();
  json fully_masked = json::array();
  for (Index i = 0; i < h; ++i) {
    for (Index r = 0; r < n; ++r) {
      if (result.fully_masked_rows[static_cast<std::size_t>(i * n + r)] != 0) {
        fully_masked.push_back(json::array({i, r}));
      }
    }
  }
  json response = json::object();
  response["output"] = matrix_to_json(result.output);
  response["attn_weights"] = head_stack_to_json(result.attn_weights);
  response["fully_masked_rows"] = std::move(fully_masked);
  response["num_heads"] = config.num_heads;
  response["d_model"] = config.d_model;
  response["d_head"] = config.d_head();
  response["kdim"] = config.key_dim();
  response["vdim"] = config.value_dim();
  response["n"] = n;
  response["m"] = result.attn_weights.cols();
  response["parameter_count"] = parameter_count;
  return response;
}

}  // namespace mha
