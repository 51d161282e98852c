// Reading tensors from files other models export: numpy's .npy format, and attention tensors
// inside a safetensors file (how to write them from PyTorch: docs/export-from-pytorch.md).
//
// The .npy reader is our own because the header is a Python dict literal
// ({'descr': '<f4', 'fortran_order': False, 'shape': (2, 5, 5), }); it accepts exactly what
// numpy.save writes for a little-endian float array in C order and nothing else, and checks every
// field before reading a byte of data. Format: numpy/lib/format.py ("NEP 1"): magic "\x93NUMPY",
// version (major, minor), header length (u16 LE for 1.0, u32 LE for 2.0 and 3.0), the header
// (ASCII; UTF-8 for 3.0) ending in '\n', then the raw data.
//
// The core does no I/O: callers read the file and hand over its bytes.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "mha/attention.hpp"
#include "mha/safetensors.hpp"

namespace mha {

/// A tensor read from a file, widened to float32 (the core's precision), C order (row-major).
struct FloatTensor {
  std::vector<std::int64_t> shape;  ///< () for a scalar
  std::vector<float> data;          ///< product(shape) values
  std::string dtype;                ///< as written in the file: "<f4", "<f8", "<f2", "F32", ...

  /// "(2, 5, 5)" / "(5)" / "()".
  std::string shape_str() const;
};

/// Largest tensor accepted: mha::limits::max_weight_entries elements (2^26, 256 MiB of float32).
/// Largest .npy header accepted: 65535 bytes for 1.0, 1 MiB for 2.0/3.0 (numpy's own reader
/// refuses headers above 10000 bytes unless told otherwise).
constexpr std::size_t max_npy_header_bytes = 1 << 20;

/// Parses a whole .npy file. Accepts format versions 1.0, 2.0 and 3.0; dtypes '<f4', '<f8' and
/// '<f2' (float16, via xtl::half_float); fortran_order False; any shape whose element count is
/// within mha::limits::max_weight_entries. Every value must be finite (and a float64 value must
/// fit float32). `what` names the file in messages.
/// Throws parse_error naming the field: "<what>: not a .npy file (it does not start with
/// \x93NUMPY)", "unsupported .npy format version 4.0", "truncated: the header says 120 bytes, the
/// file has 80 after the preamble", "header is not a dict literal ... at character 17",
/// "missing key 'shape'", "unknown key 'offset'", "dtype '>f4' is big-endian: save with
/// arr.astype('<f4')", "dtype '|O' holds Python objects (a pickle), which are never loaded",
/// "dtype '<i8' is not a float type", "fortran_order is True: save np.ascontiguousarray(arr)",
/// "the data is 96 bytes, shape (5, 5) of <f4 needs 100", trailing bytes;
/// limit_error for a shape beyond mha::limits; value_error "<what>: value at flat index 7 is NaN".
FloatTensor read_npy(const std::uint8_t* data, std::size_t size, const std::string& what = "npy");

/// A safetensors tensor widened to float32: dtypes F32, F64, F16 and BF16. Every value must be
/// finite and (F64) fit float32. Throws parse_error (missing tensor: the message lists the names
/// the file holds; another dtype), limit_error (beyond max_weight_entries), value_error (NaN/inf).
FloatTensor safetensors_tensor(const Safetensors& file, const std::string& name);

/// The attention tensor of a safetensors file: `name`, or, when `name` is empty, the only tensor
/// of the file (parse_error listing the names when there are several or none).
FloatTensor safetensors_attention(const Safetensors& file, const std::string& name = "");

/// Attention weights exported from a model, as layers of (h, n, m) stacks:
///   rank 3 (h, n, m)      -> one layer;   rank 4 (L, h, n, m) -> L layers;
///   rank 5 (L, 1, h, n, m) or rank 4 (1, h, n, m) with a batch of 1 are accepted too (a PyTorch
///   model's output_attentions stacked with torch.stack: (L, batch, h, n, m)).
/// Each layer is validated as attention weights (validate_attention_weights: finite, >= 0, rows
/// summing to 1 within 1e-3 or all 0), named "layer l".
/// Throws shape_error naming the shape when the rank is not 3, 4 or 5 (or a batch is not 1),
/// and as validate_attention_weights.
std::vector<HeadStack> attention_layers(const FloatTensor& tensor, const std::string& what);

/// An nn.MultiheadAttention layer loaded from a safetensors state_dict with PyTorch's names,
/// under an optional `prefix` (e.g. "encoder.layers.0.self_attn."):
///   in_proj_weight (3d, d) | q_proj_weight (d, d), k_proj_weight (d, kdim), v_proj_weight (d,
///   vdim) in_proj_bias (3d) optional;  out_proj.weight (d, d);  out_proj.bias (d) optional.
/// d_model comes from out_proj.weight, kdim/vdim from k/v_proj_weight. num_heads is not part of a
/// state_dict: pass it, or 0 to read the file's __metadata__ "num_heads".
/// Throws parse_error (a missing tensor — the message lists the names found under the prefix —,
/// bias_k/bias_v (add_bias_kv) which the core does not implement, an unknown tensor under the
/// prefix, no num_heads anywhere), shape_error, value_error, config_error as MultiheadAttention.
MultiheadAttention load_multihead_attention(const Safetensors& file, Index num_heads = 0,
                                            const std::string& prefix = "");

/// A (n, d) matrix (e.g. token embeddings) from a tensor of rank 2, or rank 3 with a batch of 1.
/// Throws shape_error naming the shape otherwise; limit_error when n or d is beyond mha::limits.
RowMatrixXf tensor_matrix(const FloatTensor& tensor, const std::string& what);

}  // namespace mha
