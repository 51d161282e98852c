// safetensors reader: see safetensors.hpp. Every offset is validated before any tensor byte is
// read.
#include "mha/safetensors.hpp"

#include <nlohmann/json.hpp>

#define XXH_INLINE_ALL
#include <xxhash.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <set>
#include <utility>

#include "mha/detail/half.hpp"
#include "mha/json_strict.hpp"

namespace mha {

namespace {

using json = nlohmann::json;

constexpr std::uint64_t max_u64 = std::numeric_limits<std::uint64_t>::max();

std::string in_quotes(const std::string& s) { return "\"" + s + "\""; }

std::uint64_t unsigned_field(const json& v, const std::string& what) {
  if (v.is_number_unsigned()) return v.get<std::uint64_t>();
  if (v.is_number_integer() && v.get<std::int64_t>() >= 0) {
    return static_cast<std::uint64_t>(v.get<std::int64_t>());
  }
  throw parse_error("safetensors header: " + what + " must be a non-negative integer, got " +
                    v.dump());
}

SafetensorInfo parse_entry(const std::string& name, const json& entry, std::uint64_t data_size) {
  const std::string where = "tensor " + in_quotes(name);
  if (!entry.is_object()) {
    throw parse_error("safetensors header: " + where + " must be an object, got " +
                      std::string(entry.type_name()));
  }
  for (const char* key : {"dtype", "shape", "data_offsets"}) {
    if (!entry.contains(key)) {
      throw parse_error("safetensors header: " + where + " has no \"" + key + "\"");
    }
  }
  SafetensorInfo info;
  info.name = name;
  const json& dtype = entry.at("dtype");
  if (!dtype.is_string())
    throw parse_error("safetensors header: " + where + " dtype must be a string");
  info.dtype = dtype.get<std::string>();
  const std::size_t elem = safetensors_dtype_size(info.dtype);
  if (elem == 0) {
    throw parse_error("safetensors header: " + where + " has unknown dtype " +
                      in_quotes(info.dtype));
  }
  const json& shape = entry.at("shape");
  if (!shape.is_array())
    throw parse_error("safetensors header: " + where + " shape must be an array");
  std::uint64_t elements = 1;
  bool overflow = false;
  for (const auto& s : shape) {
    const std::uint64_t dim = unsigned_field(s, where + " shape entry");
    if (dim > std::uint64_t{std::numeric_limits<std::int64_t>::max()}) overflow = true;
    info.shape.push_back(static_cast<std::int64_t>(dim));
    if (dim != 0 && elements > max_u64 / dim) overflow = true;
    if (!overflow) elements *= dim;
  }
  const json& offsets = entry.at("data_offsets");
  if (!offsets.is_array() || offsets.size() != 2) {
    throw parse_error("safetensors header: " + where + " data_offsets must be [begin, end]");
  }
  info.begin = unsigned_field(offsets[0], where + " data_offsets[0]");
  info.end = unsigned_field(offsets[1], where + " data_offsets[1]");
  if (info.begin > info.end || info.end > data_size) {
    throw parse_error("safetensors header: " + where + " data_offsets [" +
                      std::to_string(info.begin) + ", " + std::to_string(info.end) +
                      "] are out of range: the data section has " + std::to_string(data_size) +
                      " bytes");
  }
  if (overflow || elements > max_u64 / elem || elements * elem != info.end - info.begin) {
    throw parse_error("safetensors header: " + where + " is " + info.dtype + " " +
                      info.shape_str() + " but data_offsets [" + std::to_string(info.begin) + ", " +
                      std::to_string(info.end) + "] span " + std::to_string(info.end - info.begin) +
                      " bytes");
  }
  return info;
}

std::string dims_str(const std::vector<std::int64_t>& shape) {
  std::string s = "(";
  for (std::size_t i = 0; i < shape.size(); ++i) {
    if (i > 0) s += ", ";
    s += std::to_string(shape[i]);
  }
  return s + ")";
}

}  // namespace

std::size_t safetensors_dtype_size(const std::string& dtype) {
  if (dtype == "F64" || dtype == "I64" || dtype == "U64") return 8;
  if (dtype == "F32" || dtype == "I32" || dtype == "U32") return 4;
  if (dtype == "F16" || dtype == "BF16" || dtype == "I16" || dtype == "U16") return 2;
  if (dtype == "I8" || dtype == "U8" || dtype == "BOOL" || dtype == "F8_E4M3" ||
      dtype == "F8_E5M2") {
    return 1;
  }
  return 0;
}

std::string xxh64_hex(const std::uint8_t* data, std::size_t size) {
  const XXH64_hash_t hash = XXH64(data, size, 0);
  char text[17];
  std::snprintf(text, sizeof text, "%016llx", static_cast<unsigned long long>(hash));
  return text;
}

std::string safetensors_content_xxh64(const Safetensors& file, const std::string& checksum_key) {
  // Everything after the data section, serialised into one buffer (a few kB to a few hundred kB:
  // the vocabulary dominates), then hashed after the data section.
  std::string entries;
  const auto u64 = [&entries](std::uint64_t x) {
    for (int i = 0; i < 8; ++i) entries.push_back(static_cast<char>((x >> (8 * i)) & 0xFF));
  };
  const auto str = [&entries, &u64](const std::string& s) {
    u64(s.size());
    entries += s;
  };
  // std::map<std::string, ...> orders keys as char_traits<char>::compare, i.e. as unsigned bytes.
  for (const auto& [name, info] : file.tensors()) {
    str(name);
    str(info.dtype);
    u64(info.shape.size());
    for (const auto dim : info.shape) u64(static_cast<std::uint64_t>(dim));
    u64(info.begin);
    u64(info.end);
  }
  for (const auto& [key, value] : file.metadata()) {
    if (key == checksum_key) continue;
    str(key);
    str(value);
  }
  XXH64_state_t state;
  XXH64_reset(&state, 0);
  XXH64_update(&state, file.data_section(), file.data_section_size());
  XXH64_update(&state, entries.data(), entries.size());
  char text[17];
  std::snprintf(text, sizeof text, "%016llx",
                static_cast<unsigned long long>(XXH64_digest(&state)));
  return text;
}

std::uint64_t SafetensorInfo::elements() const {
  std::uint64_t n = 1;
  for (const auto dim : shape) n *= static_cast<std::uint64_t>(dim);
  return n;
}

std::string SafetensorInfo::shape_str() const { return dims_str(shape); }

Safetensors Safetensors::parse(std::vector<std::uint8_t> bytes) {
  const std::size_t size = bytes.size();
  if (size < 8) {
    throw parse_error("truncated file: it has " + std::to_string(size) +
                      " bytes; a safetensors file starts with an 8-byte header length");
  }
  std::uint64_t n = 0;
  for (int i = 7; i >= 0; --i) n = (n << 8) | bytes[static_cast<std::size_t>(i)];
  if (n == 0 || n > max_header_bytes) {
    throw parse_error("bad header length " + std::to_string(n) +
                      ": a safetensors header has 1 to " + std::to_string(max_header_bytes) +
                      " bytes");
  }
  if (n > size - 8) {
    throw parse_error("truncated file or bad header length: the header claims " +
                      std::to_string(n) + " bytes but only " + std::to_string(size - 8) +
                      " follow the 8-byte length");
  }
  Safetensors st;
  st.data_start_ = 8 + static_cast<std::size_t>(n);
  const std::uint64_t data_size = size - st.data_start_;
  const json header =
      parse_json_strict(std::string_view(reinterpret_cast<const char*>(bytes.data()) + 8,
                                         static_cast<std::size_t>(n)),
                        "safetensors header");
  if (!header.is_object()) {
    throw parse_error("safetensors header must be a JSON object, got " +
                      std::string(header.type_name()));
  }
  for (const auto& [key, value] : header.items()) {
    if (key == "__metadata__") {
      if (!value.is_object()) throw parse_error("safetensors __metadata__ must be an object");
      for (const auto& [mkey, mvalue] : value.items()) {
        if (!mvalue.is_string()) {
          throw parse_error("safetensors __metadata__ value " + in_quotes(mkey) +
                            " must be a string, got " + std::string(mvalue.type_name()));
        }
        st.metadata_[mkey] = mvalue.get<std::string>();
      }
      continue;
    }
    st.tensors_.emplace(key, parse_entry(key, value, data_size));
  }
  // No two tensors may share a byte (empty tensors occupy none).
  std::vector<const SafetensorInfo*> by_offset;
  for (const auto& [name, info] : st.tensors_) {
    if (info.end > info.begin) by_offset.push_back(&info);
  }
  std::sort(by_offset.begin(), by_offset.end(),
            [](const SafetensorInfo* a, const SafetensorInfo* b) { return a->begin < b->begin; });
  for (std::size_t i = 1; i < by_offset.size(); ++i) {
    const SafetensorInfo& prev = *by_offset[i - 1];
    const SafetensorInfo& cur = *by_offset[i];
    if (cur.begin < prev.end) {
      throw parse_error("safetensors header: tensors " + in_quotes(prev.name) + " [" +
                        std::to_string(prev.begin) + ", " + std::to_string(prev.end) + ") and " +
                        in_quotes(cur.name) + " [" + std::to_string(cur.begin) + ", " +
                        std::to_string(cur.end) + ") overlap");
    }
  }
  st.bytes_ = std::move(bytes);
  return st;
}

const std::string& Safetensors::metadata(const std::string& key) const {
  const auto it = metadata_.find(key);
  if (it == metadata_.end()) throw parse_error("missing metadata key " + in_quotes(key));
  return it->second;
}

const SafetensorInfo& Safetensors::info(const std::string& name) const {
  const auto it = tensors_.find(name);
  if (it == tensors_.end()) throw parse_error("missing tensor " + in_quotes(name));
  return it->second;
}

std::vector<float> Safetensors::floats(const std::string& name,
                                       const std::vector<std::int64_t>& expected_shape,
                                       bool require_finite) const {
  const SafetensorInfo& t = info(name);
  if (!expected_shape.empty() && t.shape != expected_shape) {
    throw shape_error(in_quotes(name) + " has shape " + t.shape_str() + ", expected " +
                      dims_str(expected_shape));
  }
  if (t.dtype != "F16" && t.dtype != "BF16" && t.dtype != "F32") {
    throw parse_error(in_quotes(name) + " has dtype " + t.dtype + ", expected F16, BF16 or F32");
  }
  // Offsets were checked against the data section in parse(); elements() cannot overflow here.
  const std::size_t count = static_cast<std::size_t>(t.elements());
  const std::uint8_t* p = data_section() + t.begin;
  std::vector<float> out(count);
  for (std::size_t i = 0; i < count; ++i) {
    if (t.dtype == "F32") {
      std::uint32_t bits = 0;
      for (int b = 3; b >= 0; --b) bits = (bits << 8) | p[4 * i + static_cast<std::size_t>(b)];
      std::memcpy(&out[i], &bits, sizeof bits);
    } else {
      const auto bits =
          static_cast<std::uint16_t>(p[2 * i] | (static_cast<unsigned>(p[2 * i + 1]) << 8));
      if (t.dtype == "F16") {
        out[i] = detail::half_bits_to_float(bits);
      } else {  // BF16: the upper half of a float32
        const std::uint32_t wide = std::uint32_t{bits} << 16;
        std::memcpy(&out[i], &wide, sizeof wide);
      }
    }
    if (require_finite && !std::isfinite(out[i])) {
      const std::string what = std::isnan(out[i]) ? "NaN" : (out[i] > 0 ? "+inf" : "-inf");
      throw value_error(in_quotes(name) + " holds " + what + " at flat index " + std::to_string(i) +
                        "; every weight must be finite");
    }
  }
  return out;
}

RowMatrixXf Safetensors::matrix(const std::string& name, Index rows, Index cols,
                                bool require_finite) const {
  const std::vector<float> v = floats(name, {rows, cols}, require_finite);
  return Eigen::Map<const RowMatrixXf>(v.data(), rows, cols);
}

VectorXf Safetensors::vector(const std::string& name, Index length, bool require_finite) const {
  const std::vector<float> v = floats(name, {length}, require_finite);
  return Eigen::Map<const VectorXf>(v.data(), length);
}

}  // namespace mha
