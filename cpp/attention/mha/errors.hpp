// Typed errors thrown by the mha core. Every message names the values involved
// (expected and actual shapes, the offending configuration), so that a user who sees
// only the text — on stderr, or as a JS Error — knows what to fix.
#pragma once

#include <stdexcept>
#include <string>

namespace mha {

/// Base of every error the core throws on bad input.
class error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

/// A configuration that cannot work: d_model % num_heads != 0, num_heads <= 0, d_model <= 0, ...
class config_error : public error {
 public:
  using error::error;
};

/// A tensor whose shape disagrees with the configuration or with another tensor, or is empty.
class shape_error : public error {
 public:
  using error::error;
};

/// A value that cannot be computed with: NaN or ±Inf in embeddings or weights, NaN or +Inf in a
/// float mask.
class value_error : public error {
 public:
  using error::error;
};

/// A size beyond the documented limits (mha::limits), rejected before anything is allocated.
class limit_error : public error {
 public:
  using error::error;
};

/// Outside data (JSON, files) that cannot be read: malformed syntax, wrong types, missing keys.
class parse_error : public error {
 public:
  using error::error;
};

}  // namespace mha
