// mha_lab._core, the pybind11 adapter of the Python package (cpp/bindings/python/mha_lab): numpy
// arrays to the layers' types and back, the layers' errors to ValueError. The package's Python
// side (mha_lab/__init__.py) converts torch tensors and documents the public functions.
//
// Shape legend (attention.hpp): n = query tokens, m = key tokens, d = d_model, h = num_heads,
// L = layers.
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <optional>
#include <string>
#include <vector>

#include "mha/attention.hpp"
#include "mha/english_tokenizer.hpp"
#include "mha/experiment_request.hpp"
#include "mha/head_report_io.hpp"
#include "mha/model_pruning.hpp"
#include "mha/npy.hpp"
#include "mha/patterns_io.hpp"
#include "mha/probes.hpp"
#include "mha/subword_tokenizer.hpp"

namespace py = pybind11;

namespace {

using mha::Index;

/// The array's shape as "(2, 5, 5)".
std::string shape_text(const py::array& a) {
  std::string s = "(";
  for (py::ssize_t i = 0; i < a.ndim(); ++i) {
    if (i > 0) s += ", ";
    s += std::to_string(a.shape(i));
  }
  return s + (a.ndim() == 1 ? ",)" : ")");
}

/// A float32 or float64 array, C-contiguous, every value finite, of rank `rank`, as float32
/// values (float64 rounded to nearest). Throws mha::value_error naming `name` for anything else:
/// another dtype, a strided view, NaN or ±inf (masks check their own values: `finite` false).
std::vector<float> float_values(const py::array& a, const std::string& name, py::ssize_t rank,
                                bool finite = true) {
  const char kind = a.dtype().kind();
  const py::ssize_t item = a.dtype().itemsize();
  if (kind != 'f' || (item != 4 && item != 8)) {
    throw mha::value_error(name + " has dtype " + std::string(py::str(a.dtype())) +
                           "; expected float32 or float64");
  }
  if (a.ndim() != rank) {
    throw mha::shape_error(name + " has shape " + shape_text(a) + ", expected " +
                           std::to_string(rank) + " dimensions");
  }
  if (!(a.flags() & py::array::c_style)) {
    throw mha::value_error(name +
                           " is not C-contiguous (a strided or transposed view); pass "
                           "numpy.ascontiguousarray(" +
                           name + ")");
  }
  if (!a.dtype().attr("isnative").cast<bool>()) {
    throw mha::value_error(name + " is not in native byte order; pass " + name +
                           ".astype(numpy.float32)");
  }
  const auto count = static_cast<std::size_t>(a.size());
  std::vector<float> out(count);
  if (item == 4) {
    std::memcpy(out.data(), a.data(), count * sizeof(float));
  } else {
    const auto* d = static_cast<const double*>(a.data());
    for (std::size_t i = 0; i < count; ++i) out[i] = static_cast<float>(d[i]);
  }
  if (finite) {
    for (std::size_t i = 0; i < count; ++i) {
      if (!std::isfinite(out[i])) {
        throw mha::value_error(name + " holds " + (std::isnan(out[i]) ? "NaN" : "an infinity") +
                               " (or a float64 beyond float32's range) at flat index " +
                               std::to_string(i) + "; every value must be finite");
      }
    }
  }
  return out;
}

mha::RowMatrixXf matrix(const py::array& a, const std::string& name) {
  std::vector<float> v = float_values(a, name, 2);
  mha::RowMatrixXf M(a.shape(0), a.shape(1));
  std::copy(v.begin(), v.end(), M.data());
  return M;
}

mha::VectorXf vector(const std::optional<py::array>& a, const std::string& name) {
  if (!a) return {};
  std::vector<float> v = float_values(*a, name, 1);
  return Eigen::Map<mha::VectorXf>(v.data(), static_cast<Index>(v.size()));
}

/// A numpy array (shape) holding a copy of `count` values at `data`.
template <typename T>
py::array_t<T> to_numpy(const T* data, std::vector<py::ssize_t> shape) {
  py::array_t<T> out(shape);
  std::memcpy(out.mutable_data(), data, static_cast<std::size_t>(out.size()) * sizeof(T));
  return out;
}

template <typename Matrix>
py::array_t<typename Matrix::Scalar> matrix_to_numpy(const Matrix& M) {
  return to_numpy(M.data(), {M.rows(), M.cols()});
}

py::array_t<float> stack_to_numpy(const mha::HeadStack& s) {
  return to_numpy(s.data(), {s.heads(), s.rows(), s.cols()});
}

/// The masks of a forward call: attn_mask bool (n, m) / (h, n, m) or float of those shapes,
/// key_padding_mask bool (m) or float (m), is_causal.
mha::AttentionMasks masks_from(const std::optional<py::array>& attn_mask,
                               const std::optional<py::array>& key_padding_mask, bool is_causal,
                               Index h, Index n, Index m) {
  mha::AttentionMasks masks;
  masks.is_causal = is_causal;
  if (attn_mask) {
    const py::array& a = *attn_mask;
    if (a.ndim() != 2 && a.ndim() != 3) {
      throw mha::shape_error("attn_mask has shape " + shape_text(a) + ", expected (n, m) = (" +
                             std::to_string(n) + ", " + std::to_string(m) +
                             ") or (num_heads, n, m) = (" + std::to_string(h) + ", " +
                             std::to_string(n) + ", " + std::to_string(m) + ")");
    }
    const Index heads = a.ndim() == 2 ? 1 : a.shape(0);
    masks.attn_mask = mha::HeadStack(heads, a.shape(a.ndim() - 2), a.shape(a.ndim() - 1));
    if (a.dtype().kind() == 'b') {
      if (!(a.flags() & py::array::c_style)) {
        throw mha::value_error(
            "attn_mask is not C-contiguous; pass numpy.ascontiguousarray(attn_mask)");
      }
      masks.attn_mask_kind = mha::AttentionMasks::Kind::boolean;
      const auto* b = static_cast<const bool*>(a.data());
      for (py::ssize_t i = 0; i < a.size(); ++i) masks.attn_mask.data()[i] = b[i] ? 1.0f : 0.0f;
    } else {
      masks.attn_mask_kind = mha::AttentionMasks::Kind::additive;
      const std::vector<float> v = float_values(a, "attn_mask", a.ndim(), false);
      std::copy(v.begin(), v.end(), masks.attn_mask.data());
    }
  }
  if (key_padding_mask) {
    const py::array& a = *key_padding_mask;
    if (a.ndim() != 1) {
      throw mha::shape_error("key_padding_mask has shape " + shape_text(a) + ", expected (m,) = (" +
                             std::to_string(m) + ",)");
    }
    if (a.dtype().kind() == 'b') {
      if (!(a.flags() & py::array::c_style)) {
        throw mha::value_error(
            "key_padding_mask is not C-contiguous; pass "
            "numpy.ascontiguousarray(key_padding_mask)");
      }
      const auto* b = static_cast<const bool*>(a.data());
      masks.key_padding_mask.assign(b, b + a.size());
    } else {
      masks.key_padding_mask_kind = mha::AttentionMasks::Kind::additive;
      masks.key_padding_mask = float_values(a, "key_padding_mask", 1, false);
    }
  }
  return masks;
}

/// One forward call (multi_head_attention_forward) with PyTorch's names; see mha_lab.forward.
py::dict forward(
    const py::array& query, const std::optional<py::array>& key,
    const std::optional<py::array>& value, Index num_heads,
    const std::optional<py::array>& in_proj_weight, const std::optional<py::array>& in_proj_bias,
    const py::array& out_proj_weight, const std::optional<py::array>& out_proj_bias,
    const std::optional<py::array>& q_proj_weight, const std::optional<py::array>& k_proj_weight,
    const std::optional<py::array>& v_proj_weight, const std::optional<py::array>& attn_mask,
    const std::optional<py::array>& key_padding_mask, bool is_causal, bool keep_intermediates) {
  const mha::RowMatrixXf q = matrix(query, "query");
  if (key.has_value() != value.has_value()) {
    throw mha::shape_error("give both key and value, or neither (self-attention)");
  }
  const mha::RowMatrixXf k = key ? matrix(*key, "key") : mha::RowMatrixXf();
  const mha::RowMatrixXf v = value ? matrix(*value, "value") : mha::RowMatrixXf();
  const mha::RowMatrixXf W_out = matrix(out_proj_weight, "out_proj_weight");
  mha::AttentionConfig config;
  // d_model is the query's width, as nn.MultiheadAttention's embed_dim: every weight's shape is
  // then checked against it, so a wrong weight is the one the message names.
  config.d_model = q.cols();
  config.num_heads = num_heads;
  config.kdim = key ? k.cols() : 0;
  config.vdim = value ? v.cols() : 0;
  mha::AttentionWeights weights;
  if (in_proj_weight) {
    if (q_proj_weight || k_proj_weight || v_proj_weight) {
      throw mha::shape_error(
          "give in_proj_weight or q_proj_weight, k_proj_weight and "
          "v_proj_weight, not both");
    }
    weights = mha::AttentionWeights::fused(matrix(*in_proj_weight, "in_proj_weight"),
                                           vector(in_proj_bias, "in_proj_bias"), W_out,
                                           vector(out_proj_bias, "out_proj_bias"));
  } else if (q_proj_weight && k_proj_weight && v_proj_weight) {
    weights = mha::AttentionWeights::separate(
        matrix(*q_proj_weight, "q_proj_weight"), matrix(*k_proj_weight, "k_proj_weight"),
        matrix(*v_proj_weight, "v_proj_weight"), vector(in_proj_bias, "in_proj_bias"), W_out,
        vector(out_proj_bias, "out_proj_bias"));
  } else {
    throw mha::shape_error(
        "no input projection: give in_proj_weight (3*d_model, d_model) or "
        "q_proj_weight, k_proj_weight and v_proj_weight");
  }
  const bool self = !key;
  const Index m = self ? q.rows() : k.rows();
  const mha::AttentionMasks masks =
      masks_from(attn_mask, key_padding_mask, is_causal, num_heads, q.rows(), m);
  mha::ForwardOptions options(keep_intermediates);
  mha::AttentionResult r;
  {
    py::gil_scoped_release release;
    r = self ? mha::multi_head_attention_forward(config, weights, q, q, q, masks, options)
             : mha::multi_head_attention_forward(config, weights, q, k, v, masks, options);
  }
  py::dict out;
  out["output"] = matrix_to_numpy(r.output);
  out["attn_weights"] = stack_to_numpy(r.attn_weights);
  out["fully_masked_rows"] =
      to_numpy(r.fully_masked_rows.data(), {r.attn_weights.heads(), r.attn_weights.rows()});
  if (keep_intermediates) {
    out["q"] = matrix_to_numpy(r.q);
    out["k"] = matrix_to_numpy(r.k);
    out["v"] = matrix_to_numpy(r.v);
    out["scores"] = stack_to_numpy(r.scores);
    out["head_outputs"] = matrix_to_numpy(r.head_outputs);
  }
  return out;
}

/// Module 08's experiment as `mha numpy-experiment` reads it (mha::read_experiment_request:
/// float64, everything kept) and runs it (mha::run_experiment).
py::dict numpy_experiment(std::uint32_t seed, Index tokens, Index d_model, Index num_heads,
                          bool is_causal, bool positional) {
  const mha::ExperimentRequest request = mha::read_experiment_request(
      mha::ExperimentArguments{seed, tokens, d_model, num_heads, is_causal, positional});
  mha::NumpyNormalStream stream(request.seed);
  const mha::ExperimentRun run = mha::run_experiment(stream, request);
  const mha::AttentionResult& r = run.result;
  const mha::NumpyExperiment& e = run.experiment;
  py::dict out;
  out["output"] = matrix_to_numpy(r.output);
  out["attn_weights"] = stack_to_numpy(r.attn_weights);
  out["fully_masked_rows"] =
      to_numpy(r.fully_masked_rows.data(), {r.attn_weights.heads(), r.attn_weights.rows()});
  out["X"] = matrix_to_numpy(e.x_f64);
  out["Wq"] = matrix_to_numpy(e.Wq);
  out["Wk"] = matrix_to_numpy(e.Wk);
  out["Wv"] = matrix_to_numpy(e.Wv);
  out["Wo"] = matrix_to_numpy(e.Wo);
  out["q"] = matrix_to_numpy(r.q);
  out["k"] = matrix_to_numpy(r.k);
  out["v"] = matrix_to_numpy(r.v);
  out["scores"] = stack_to_numpy(r.scores);
  out["head_outputs"] = matrix_to_numpy(r.head_outputs);
  if (positional) {
    out["positional_encoding"] =
        matrix_to_numpy(mha::sinusoidal_positional_encoding_f64(tokens, d_model));
  }
  out["parameter_count"] = mha::parameter_count(e.config, false);
  return out;
}

/// Head-pattern scores and labels of (h, n, m) or (L, h, n, m) weights, as `mha patterns`
/// reports them, as JSON text: {"shape", "tokens", "thresholds", "layers": [...]}.
std::string head_patterns_json(const py::array& attn, const std::vector<std::string>& tokens,
                               const std::vector<std::string>& query_tokens) {
  mha::FloatTensor tensor;
  tensor.data = float_values(attn, "attn", attn.ndim());
  for (py::ssize_t i = 0; i < attn.ndim(); ++i) tensor.shape.push_back(attn.shape(i));
  tensor.dtype = attn.dtype().itemsize() == 4 ? "float32" : "float64";
  mha::PatternsInput in;
  in.layers = mha::attention_layers(tensor, "attn");
  in.tokens = tokens;
  in.query_tokens = query_tokens;
  in.shape = tensor.shape;
  return mha::patterns_report_to_json(in).dump();
}

/// An int32 numpy array of shape (rows, cols) (cols 0: one dimension) holding `values`.
py::array_t<std::int32_t> int32_array(const std::vector<std::int32_t>& values, py::ssize_t cols) {
  const auto size = static_cast<py::ssize_t>(values.size());
  py::array_t<std::int32_t> a =
      cols > 0 ? py::array_t<std::int32_t>({size / cols, cols}) : py::array_t<std::int32_t>(size);
  if (size > 0) std::memcpy(a.mutable_data(), values.data(), values.size() * sizeof(std::int32_t));
  return a;
}

/// Spans (k) as a (k, 2) int32 array of code-point offsets (Python's str indices).
py::array_t<std::int32_t> code_point_spans(const std::vector<std::size_t>& units,
                                           const std::vector<mha::ByteSpan>& spans) {
  std::vector<std::int32_t> flat;
  flat.reserve(2 * spans.size());
  for (const mha::ByteSpan& s : spans) {
    flat.push_back(static_cast<std::int32_t>(units[s.begin]));
    flat.push_back(static_cast<std::int32_t>(units[s.end]));
  }
  return int32_array(flat, 2);
}

/// mha::SubwordTokenizer::encode as a dict (p pieces, w words): ids (p,) int32, pieces, spans
/// (p, 2) int32 in code points, word_index (p,) int32, words, word_spans (w, 2) int32.
py::dict subword_encode(const mha::SubwordTokenizer& t, const std::string& text) {
  const mha::SubwordEncoding e = t.encode(text);
  const std::vector<std::size_t> units = mha::text_unit_offsets(text, mha::TextUnit::code_point);
  py::dict out;
  out["ids"] = int32_array(std::vector<std::int32_t>(e.ids.begin(), e.ids.end()), 0);
  out["pieces"] = e.pieces;
  out["spans"] = code_point_spans(units, e.spans);
  out["word_index"] =
      int32_array(std::vector<std::int32_t>(e.word_index.begin(), e.word_index.end()), 0);
  out["words"] = e.words;
  out["word_spans"] = code_point_spans(units, e.word_spans);
  return out;
}

/// (start, end) pairs from a Python sequence of 2-sequences of ints.
using Span = std::pair<Index, Index>;

/// The head report card (mha::head_report) of examples given as dicts {"attn": float array of
/// (h, n, n) or (L, h, n, n), "tokens": [n str], "word_index": [n int] | None, and for a pronoun
/// probe "offsets": [(s, e)] per token, "pronoun", "antecedent", "other": (s, e)}, as JSON text.
std::string head_report_json(const std::vector<py::dict>& examples) {
  std::vector<mha::ReportExample> list;
  for (std::size_t e = 0; e < examples.size(); ++e) {
    const py::dict& d = examples[e];
    const std::string name = "example " + std::to_string(e);
    const py::array attn = d["attn"].cast<py::array>();
    mha::FloatTensor tensor;
    tensor.data = float_values(attn, name + " attn", attn.ndim());
    for (py::ssize_t i = 0; i < attn.ndim(); ++i) tensor.shape.push_back(attn.shape(i));
    mha::ReportExample r;
    r.layers = mha::attention_layers(tensor, name + " attn");
    r.tokens = d["tokens"].cast<std::vector<std::string>>();
    if (d.contains("word_index") && !d["word_index"].is_none()) {
      r.word_index = d["word_index"].cast<std::vector<Index>>();
    }
    if (d.contains("pronoun") && !d["pronoun"].is_none()) {
      const auto offsets = d["offsets"].cast<std::vector<Span>>();
      if (offsets.size() != r.tokens.size()) {
        throw mha::shape_error(name + ": offsets has " + std::to_string(offsets.size()) +
                               " entries, tokens has " + std::to_string(r.tokens.size()));
      }
      r.probe =
          mha::probe_from_offsets(offsets, d["pronoun"].cast<Span>(), d["antecedent"].cast<Span>(),
                                  d["other"].cast<Span>(), name);
    }
    list.push_back(std::move(r));
  }
  return mha::head_report_to_json(mha::head_report(list)).dump();
}

/// mha_lab.prune's core: the greedy curve of the model in `bytes` (prune_model_file) on texts (an
/// English model) or (input, target) examples (a date model), as JSON text.
std::string prune_json(
    const py::bytes& bytes, const std::string& name,
    const std::optional<std::vector<std::string>>& texts,
    const std::optional<std::vector<std::pair<std::string, std::string>>>& pairs) {
  const std::string raw = bytes;
  std::optional<std::vector<mha::DateExample>> examples;
  if (pairs) {
    examples.emplace();
    for (const auto& [input, target] : *pairs) examples->push_back({input, target, "", ""});
  }
  return mha::prune_model_file(std::vector<std::uint8_t>(raw.begin(), raw.end()), name, texts,
                               examples)
      .dump();
}

/// mha_lab.models' core: one model file's summary (describe_model_file) as JSON text.
std::string describe_model_json(const py::bytes& bytes) {
  const std::string raw = bytes;
  return mha::model_summary_to_json(
             mha::describe_model_file(std::vector<std::uint8_t>(raw.begin(), raw.end())))
      .dump();
}

}  // namespace

PYBIND11_MODULE(_core, m) {
  m.doc() = "mha-lab's C++ layers (use the mha_lab package, which wraps this module)";
  // Every error of the layers (config_error, shape_error, value_error, limit_error, parse_error)
  // is a ValueError carrying the layer's message.
  py::register_exception_translator([](std::exception_ptr p) {
    try {
      if (p) std::rethrow_exception(p);
    } catch (const mha::error& e) {
      PyErr_SetString(PyExc_ValueError, e.what());
    }
  });
  m.def("forward", &forward, py::arg("query"), py::arg("key"), py::arg("value"),
        py::arg("num_heads"), py::arg("in_proj_weight"), py::arg("in_proj_bias"),
        py::arg("out_proj_weight"), py::arg("out_proj_bias"), py::arg("q_proj_weight"),
        py::arg("k_proj_weight"), py::arg("v_proj_weight"), py::arg("attn_mask"),
        py::arg("key_padding_mask"), py::arg("is_causal"), py::arg("keep_intermediates"));
  m.def("numpy_experiment", &numpy_experiment, py::arg("seed"), py::arg("tokens"),
        py::arg("d_model"), py::arg("num_heads"), py::arg("is_causal"), py::arg("positional"));
  m.def("head_patterns_json", &head_patterns_json, py::arg("attn"), py::arg("tokens"),
        py::arg("query_tokens"));
  m.def("head_report_json", &head_report_json, py::arg("examples"));
  m.def("prune_json", &prune_json, py::arg("model_bytes"), py::arg("name"), py::arg("texts"),
        py::arg("examples"));
  m.def("describe_model_json", &describe_model_json, py::arg("model_bytes"));
  m.def(
      "induction_probe_json",
      [](std::uint32_t seed, int count) { return mha::induction_probe(seed, count).dump(); },
      py::arg("seed"), py::arg("count"));
  m.def(
      "pronoun_probe_json",
      [](std::uint32_t seed, int count, const std::optional<std::vector<std::string>>& names,
         const std::optional<std::vector<std::string>>& places) {
        return mha::pronoun_probe(seed, count, names ? *names : mha::probe_names(),
                                  places ? *places : mha::probe_places())
            .dump();
      },
      py::arg("seed"), py::arg("count"), py::arg("names"), py::arg("places"));
  // The token rule of the page, the element and the English model (mha::english_tokenize): a str
  // in (as UTF-8; mha_lab.tokenize refuses a lone surrogate first), its tokens out.
  m.def("english_tokenize", &mha::english_tokenize, py::arg("text"));
  m.attr("max_tokens") = mha::limits::max_tokens;
  // The English model's subword tokenizer (mha_lab.SubwordTokenizer wraps it): built from the
  // description's JSON text; encode(text) -> subword_encode's dict.
  py::class_<mha::SubwordTokenizer>(m, "SubwordTokenizer")
      .def(py::init(&mha::SubwordTokenizer::from_json), py::arg("description_json"))
      .def("encode", &subword_encode, py::arg("text"))
      .def_property_readonly("vocab_size", &mha::SubwordTokenizer::vocab_size)
      .def_property_readonly("pieces",
                             [](const mha::SubwordTokenizer& t) { return t.spec().pieces; });
  // The project's version (the file VERSION, read by CMake): mha_lab.__version__.
  m.attr("__version__") = MHA_VERSION;
}
