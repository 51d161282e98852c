// A reader for the safetensors format (https://github.com/huggingface/safetensors): an 8-byte
// little-endian u64 N, N bytes of JSON header, then the data section. The header maps each tensor
// name to {"dtype", "shape", "data_offsets": [begin, end]} (offsets relative to the start of the
// data section) and may hold "__metadata__", an object of string values.
//
// Everything is validated before a byte of tensor data is read: the header length against the
// file size, the JSON, every entry's dtype, shape and offsets (inside the data section, consistent
// with dtype x shape, no two tensors overlapping). Used by the date model (date_model.hpp) and by
// anything that loads nn.MultiheadAttention weights saved with safetensors.
//
// The core does no I/O: the caller reads the file and hands over its bytes.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "mha/attention.hpp"

namespace mha {

/// One entry of the header.
struct SafetensorInfo {
  std::string name;
  std::string dtype;                ///< "F16", "F32", "BF16", "I64", ... as written in the file
  std::vector<std::int64_t> shape;  ///< () for a scalar
  std::uint64_t begin = 0;          ///< byte offsets in the data section, [begin, end)
  std::uint64_t end = 0;

  /// Number of elements: the product of shape (1 for a scalar).
  std::uint64_t elements() const;
  /// "(3, 4)" / "(5)" / "()".
  std::string shape_str() const;
};

/// A parsed, validated safetensors file that owns its bytes.
class Safetensors {
 public:
  /// Largest header accepted (the format's reference implementation uses 100 MB).
  static constexpr std::uint64_t max_header_bytes = 100'000'000;

  /// Parses and validates `bytes` (a whole file).
  /// Throws mha::parse_error naming the problem:
  ///   truncated file ("the file has 5 bytes; a safetensors file starts with an 8-byte header
  ///   length"); bad header length (0, above max_header_bytes, or beyond the end of the file);
  ///   malformed JSON or a header that is not an object; duplicate keys; an entry without
  ///   dtype/shape/data_offsets or with wrong JSON types; an unknown dtype; a negative shape;
  ///   data_offsets out of range (end beyond the data section, begin > end), inconsistent with
  ///   dtype x shape, or overlapping another tensor; __metadata__ that is not an object of strings.
  static Safetensors parse(std::vector<std::uint8_t> bytes);
  static Safetensors parse(const std::uint8_t* data, std::size_t size) {
    return parse(std::vector<std::uint8_t>(data, data + size));
  }

  /// The __metadata__ strings (empty when the header has none).
  const std::map<std::string, std::string>& metadata() const { return metadata_; }
  /// Throws parse_error "missing metadata key \"<key>\"" when absent.
  const std::string& metadata(const std::string& key) const;

  /// Entries sorted by name.
  const std::map<std::string, SafetensorInfo>& tensors() const { return tensors_; }
  bool contains(const std::string& name) const { return tensors_.count(name) != 0; }
  /// Throws parse_error "missing tensor \"<name>\"".
  const SafetensorInfo& info(const std::string& name) const;

  /// The data section: every byte after the header.
  const std::uint8_t* data_section() const { return bytes_.data() + data_start_; }
  std::size_t data_section_size() const { return bytes_.size() - data_start_; }

  /// A tensor's values widened to float (dtypes F16 via xtl::half_float, BF16, F32).
  /// `expected_shape` (optional, empty = any) is checked first.
  /// Throws parse_error for a missing tensor; shape_error "<name> has shape (3, 4), expected
  /// (4, 4)"; parse_error "<name> has dtype I64, expected F16, BF16 or F32"; value_error
  /// "<name> holds NaN at [7]; every value must be finite" when `require_finite`.
  std::vector<float> floats(const std::string& name,
                            const std::vector<std::int64_t>& expected_shape = {},
                            bool require_finite = true) const;
  /// floats() as a (rows, cols) row-major matrix; the shape must be exactly (rows, cols).
  RowMatrixXf matrix(const std::string& name, Index rows, Index cols,
                     bool require_finite = true) const;
  /// floats() as a vector; the shape must be exactly (length).
  VectorXf vector(const std::string& name, Index length, bool require_finite = true) const;

 private:
  std::vector<std::uint8_t> bytes_;
  std::size_t data_start_ = 0;
  std::map<std::string, std::string> metadata_;
  std::map<std::string, SafetensorInfo> tensors_;
};

/// Bytes per element of a safetensors dtype name, or 0 for an unknown name.
std::size_t safetensors_dtype_size(const std::string& dtype);

/// XXH64 (seed 0) of `size` bytes, as 16 lowercase hex digits (the date model's checksum).
std::string xxh64_hex(const std::uint8_t* data, std::size_t size);

/// XXH64 (seed 0), as 16 lowercase hex digits, of everything a safetensors file means except one
/// metadata value (the checksum itself) and the header's JSON layout (key order, spacing). The
/// hash reads, in this order:
///   1. the data section;
///   2. per tensor, names in ascending byte order: str(name), str(dtype), u64(rank), u64(each
///      dimension), u64(begin), u64(end);
///   3. per __metadata__ key other than `checksum_key`, in ascending byte order: str(key),
///      str(value);
/// where u64(x) is 8 bytes little-endian and str(s) is u64(byte length of s), then the UTF-8
/// bytes of s. The English model's checksum (docs/english-lm-format.md): a changed weight,
/// tensor entry, config or vocabulary changes it.
std::string safetensors_content_xxh64(const Safetensors& file, const std::string& checksum_key);

}  // namespace mha
