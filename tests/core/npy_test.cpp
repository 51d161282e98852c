// Files from other models (npy.hpp): the strict .npy reader (every version, dtype and each way a
// file can be wrong), attention tensors in .npy and safetensors, and nn.MultiheadAttention
// weights saved as safetensors by scripts/fixtures/make_pattern_fixtures.py, run through our core and
// compared with PyTorch's output (tolerance: 1e-5 absolute on the output, 1e-6 on the weights;
// float32 on both sides, same weights bit for bit).
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include <cstdint>
#include <cstring>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "fixture_util.hpp"
#include "mha/npy.hpp"
#include "mha/patterns.hpp"

namespace {

using Bytes = std::vector<std::uint8_t>;
using mha::Index;
using mha_test::message_of;

Bytes read_file(const std::string& name) {
  std::ifstream in(std::string(MHA_FIXTURES_DIR) + "/" + name, std::ios::binary);
  if (!in) throw std::runtime_error("cannot open fixture " + name);
  return Bytes(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

/// A .npy file as numpy.save writes it: magic, version, header length, header padded with spaces
/// to a multiple of 64 and ended by '\n', then `data`.
Bytes npy(const std::string& dict, const Bytes& data, int major = 1) {
  const std::size_t len_bytes = major == 1 ? 2 : 4;
  std::string header = dict;
  const std::size_t pre = 8 + len_bytes;
  while ((pre + header.size() + 1) % 64 != 0) header += ' ';
  header += '\n';
  std::string text = "\x93NUMPY";
  text += static_cast<char>(major);
  text += '\0';
  for (std::size_t b = 0; b < len_bytes; ++b) text += static_cast<char>(header.size() >> (8 * b));
  text += header;
  text.append(data.begin(), data.end());
  return Bytes(text.begin(), text.end());
}

Bytes f32_bytes(const std::vector<float>& v) {
  Bytes out(v.size() * 4);
  std::memcpy(out.data(), v.data(), out.size());  // the test machines are little-endian
  return out;
}

Bytes f64_bytes(const std::vector<double>& v) {
  Bytes out(v.size() * 8);
  std::memcpy(out.data(), v.data(), out.size());
  return out;
}

std::string dict(const std::string& descr, const std::string& shape,
                 const char* fortran = "False") {
  return "{'descr': '" + descr + "', 'fortran_order': " + fortran + ", 'shape': " + shape + ", }";
}

mha::FloatTensor read(const Bytes& b) { return mha::read_npy(b.data(), b.size(), "x.npy"); }

std::string parse_message(const Bytes& b) {
  return message_of<mha::parse_error>([&] { read(b); });
}

TEST(Npy, ReadsWhatNumpySaves) {
  const mha::FloatTensor t = read(read_file("torch_mha_layer_x.npy"));
  EXPECT_EQ(t.shape, (std::vector<std::int64_t>{5, 8}));
  EXPECT_EQ(t.dtype, "<f4");
  const auto doc = mha_test::load_fixture("torch_mha_layer.json");
  const auto x = mha_test::flat(doc.at("x"));
  ASSERT_EQ(t.data.size(), x.size());
  for (std::size_t i = 0; i < x.size(); ++i) EXPECT_EQ(t.data[i], static_cast<float>(x[i])) << i;
}

TEST(Npy, VersionsAndDtypes) {
  const std::vector<float> v = {0.25f, 0.75f, 1.0f, 0.0f};
  for (int major : {1, 2, 3}) {
    const mha::FloatTensor t = read(npy(dict("<f4", "(2, 2)"), f32_bytes(v), major));
    EXPECT_EQ(t.data, v) << major;
  }
  EXPECT_EQ(read(npy(dict("<f8", "(4,)"), f64_bytes({0.25, 0.75, 1.0, 0.0}))).data, v);
  // float16: 1.0 = 0x3c00, 0.5 = 0x3800, -2 = 0xc000
  const mha::FloatTensor h = read(npy(dict("<f2", "(3,)"), {0x00, 0x3c, 0x00, 0x38, 0x00, 0xc0}));
  EXPECT_EQ(h.data, (std::vector<float>{1.0f, 0.5f, -2.0f}));
  // A scalar and an empty array.
  EXPECT_EQ(read(npy(dict("<f4", "()"), f32_bytes({3.0f}))).data, std::vector<float>{3.0f});
  EXPECT_TRUE(read(npy(dict("<f4", "(0, 3)"), {})).data.empty());
  // Double quotes and keys in another order are still a dict literal.
  EXPECT_EQ(read(npy("{\"shape\": (1,), \"fortran_order\": False, \"descr\": \"<f4\"}",
                     f32_bytes({2.0f})))
                .data,
            std::vector<float>{2.0f});
}

TEST(Npy, ErrorsNameTheField) {
  const Bytes ok_data = f32_bytes({1, 2, 3, 4});
  EXPECT_MESSAGE_HAS(parse_message(Bytes{'P', 'K', 3, 4, 0, 0, 0, 0, 0}), "not a .npy file");
  EXPECT_MESSAGE_HAS(parse_message(Bytes{}), "not a .npy file");
  Bytes v4 = npy(dict("<f4", "(4,)"), ok_data);
  v4[6] = 4;
  EXPECT_MESSAGE_HAS(parse_message(v4), "unsupported .npy format version 4.0");
  Bytes lie = npy(dict("<f4", "(4,)"), ok_data);
  lie[8] = 0xff;  // header length beyond the file
  lie[9] = 0x7f;
  EXPECT_MESSAGE_HAS(parse_message(lie), "the header length says 32767 bytes");
  EXPECT_MESSAGE_HAS(parse_message(Bytes{0x93, 'N', 'U', 'M', 'P', 'Y', 1, 0, 5}),
                     "ends inside the header length");
  EXPECT_MESSAGE_HAS(parse_message(npy(dict("<f4", "(2, 2)", "True"), ok_data)),
                     "fortran_order is True");
  EXPECT_MESSAGE_HAS(parse_message(npy(dict(">f4", "(4,)"), ok_data)), "dtype '>f4' is big-endian");
  EXPECT_MESSAGE_HAS(parse_message(npy(dict("|O", "(4,)"), ok_data)), "a pickle");
  EXPECT_MESSAGE_HAS(parse_message(npy(dict("<i8", "(2,)"), ok_data)),
                     "dtype '<i8' is not a float type");
  EXPECT_MESSAGE_HAS(parse_message(npy(dict("=f4", "(4,)"), ok_data)), "byte order");
  EXPECT_MESSAGE_HAS(
      parse_message(
          npy("{'descr': [('a', '<f4')], 'fortran_order': False, 'shape': (4,), }", ok_data)),
      "structured dtypes");
  EXPECT_MESSAGE_HAS(parse_message(npy("{'descr': '<f4', 'shape': (4,), }", ok_data)),
                     "lacks the key 'fortran_order'");
  EXPECT_MESSAGE_HAS(
      parse_message(
          npy("{'descr': '<f4', 'fortran_order': False, 'shape': (4,), 'x': 1}", ok_data)),
      "unknown key 'x'");
  EXPECT_MESSAGE_HAS(
      parse_message(
          npy("{'descr': '<f4', 'descr': '<f4', 'fortran_order': False, 'shape': (4,)}", ok_data)),
      "duplicate key 'descr'");
  EXPECT_MESSAGE_HAS(parse_message(npy(dict("<f4", "(4)"), ok_data)), "(n,), not (n)");
  EXPECT_MESSAGE_HAS(parse_message(npy(dict("<f4", "(-4,)"), ok_data)), "non-negative integer");
  EXPECT_MESSAGE_HAS(parse_message(npy(dict("<f4", "(4,)") + " x", ok_data)),
                     "unexpected text after the dict");
  EXPECT_MESSAGE_HAS(parse_message(npy("__import__('os')", ok_data)), "a dict literal");
  EXPECT_MESSAGE_HAS(parse_message(npy(dict("<f4", "(5,)"), ok_data)),
                     "the data is 16 bytes, shape (5) of <f4 needs 20 (truncated file)");
  EXPECT_MESSAGE_HAS(parse_message(npy(dict("<f4", "(3,)"), ok_data)), "(trailing bytes)");
  EXPECT_MESSAGE_HAS(
      message_of<mha::limit_error>([&] { read(npy(dict("<f4", "(100000, 100000)"), {})); }),
      "more than the limit of 67108864 values");
  EXPECT_MESSAGE_HAS(
      message_of<mha::limit_error>([&] { read(npy(dict("<f4", "(99999999999999999999,)"), {})); }),
      "too large");
  EXPECT_MESSAGE_HAS(message_of<mha::value_error>([&] {
                       read(npy(dict("<f4", "(4,)"), f32_bytes({1, std::nanf(""), 3, 4})));
                     }),
                     "x.npy: value at flat index 1 is NaN");
  EXPECT_MESSAGE_HAS(
      message_of<mha::value_error>([&] { read(npy(dict("<f8", "(1,)"), f64_bytes({1e300}))); }),
      "does not fit float32");
}

TEST(Npy, AttentionLayers) {
  // (L=2, h=1, n=2, m=2): uniform, then previous-token.
  const mha::FloatTensor t =
      read(npy(dict("<f4", "(2, 1, 2, 2)"), f32_bytes({.5f, .5f, .5f, .5f, 1, 0, 1, 0})));
  const auto layers = mha::attention_layers(t, "attn");
  ASSERT_EQ(layers.size(), 2u);
  EXPECT_EQ(layers[1](0, 1, 0), 1.0f);
  // (h, n, m) and (L, 1, h, n, m) work too.
  EXPECT_EQ(mha::attention_layers(read(npy(dict("<f4", "(1, 2, 2)"), f32_bytes({1, 0, 0, 1}))), "a")
                .size(),
            1u);
  EXPECT_EQ(
      mha::attention_layers(read(npy(dict("<f4", "(1, 1, 1, 2, 2)"), f32_bytes({1, 0, 0, 1}))), "a")
          .size(),
      1u);
  EXPECT_MESSAGE_HAS(
      message_of<mha::shape_error>([] {
        mha::attention_layers(read(npy(dict("<f4", "(2, 2)"), f32_bytes({1, 0, 0, 1}))), "attn");
      }),
      "attn has shape (2, 2); expected (heads, n, m)");
  EXPECT_MESSAGE_HAS(
      message_of<mha::shape_error>([] {
        mha::attention_layers(read(npy(dict("<f4", "(1, 2, 1, 1, 1)"), f32_bytes({1, 1}))), "attn");
      }),
      "batch 1");
  EXPECT_MESSAGE_HAS(message_of<mha::value_error>([] {
                       mha::attention_layers(
                           read(npy(dict("<f4", "(2, 1, 1, 2)"), f32_bytes({.5f, .5f, .5f, .25f}))),
                           "attn");
                     }),
                     "attn layer 1: head 0, row 0 sums to 0.75");
}

/// A safetensors file: 8-byte header length, the JSON header, then `data`.
Bytes safetensors(const std::string& header, const Bytes& data) {
  std::string text;
  for (int b = 0; b < 8; ++b) text += static_cast<char>(header.size() >> (8 * b));
  text += header;
  text.append(data.begin(), data.end());
  return Bytes(text.begin(), text.end());
}

TEST(Npy, SafetensorsAttention) {
  const Bytes f64 = f64_bytes({1, 0, 0.5, 0.5});
  const auto file = mha::Safetensors::parse(
      safetensors(R"({"attn":{"dtype":"F64","shape":[1,2,2],"data_offsets":[0,32]}})", f64));
  const mha::FloatTensor t = mha::safetensors_attention(file);
  EXPECT_EQ(t.data, (std::vector<float>{1, 0, 0.5f, 0.5f}));
  EXPECT_EQ(mha::attention_layers(t, "attn").size(), 1u);
  const auto two = mha::Safetensors::parse(safetensors(
      R"({"a":{"dtype":"F32","shape":[1],"data_offsets":[0,4]},"b":{"dtype":"I32","shape":[1],"data_offsets":[4,8]}})",
      f32_bytes({1, 2})));
  EXPECT_MESSAGE_HAS(message_of<mha::parse_error>([&] { mha::safetensors_attention(two); }),
                     "holds 2 tensors (a, b); name the attention tensor");
  EXPECT_MESSAGE_HAS(message_of<mha::parse_error>([&] { mha::safetensors_attention(two, "c"); }),
                     "no tensor \"c\" (it holds: a, b)");
  EXPECT_MESSAGE_HAS(message_of<mha::parse_error>([&] { mha::safetensors_attention(two, "b"); }),
                     "has dtype I32, expected F32, F64, F16 or BF16");
  EXPECT_EQ(mha::safetensors_attention(two, "a").data, std::vector<float>{1});
}

TEST(Npy, MultiheadAttentionFromPyTorchStateDict) {
  const auto doc = mha_test::load_fixture("torch_mha_layer.json");
  const auto file = mha::Safetensors::parse(read_file("torch_mha_layer.safetensors"));
  const mha::MultiheadAttention layer = mha::load_multihead_attention(file);  // num_heads: metadata
  EXPECT_EQ(layer.config().d_model, 8);
  EXPECT_EQ(layer.config().num_heads, 2);
  EXPECT_TRUE(layer.has_bias());
  const mha::RowMatrixXf x = mha::tensor_matrix(read(read_file("torch_mha_layer_x.npy")), "x");
  const mha::AttentionResult r = layer.forward(x);
  const auto out = mha_test::flat(doc.at("output"));
  const auto w = mha_test::flat(doc.at("attn_weights"));
  const auto dev_out = mha_test::compare(r.output.data(), out.data(), out.size(), 1e-5, 0.0);
  const auto dev_w = mha_test::compare(r.attn_weights.data(), w.data(), w.size(), 1e-6, 0.0);
  mha_test::report("nn.MultiheadAttention from safetensors: output", dev_out);
  mha_test::report("nn.MultiheadAttention from safetensors: attn_weights", dev_w);
  EXPECT_TRUE(mha_test::close(dev_out));
  EXPECT_TRUE(mha_test::close(dev_w));
  // num_heads given explicitly wins over the metadata; a wrong one is a config error.
  EXPECT_EQ(mha::load_multihead_attention(file, 4).config().num_heads, 4);
  EXPECT_MESSAGE_HAS(message_of<mha::config_error>([&] { mha::load_multihead_attention(file, 3); }),
                     "not divisible by num_heads=3");
  EXPECT_MESSAGE_HAS(
      message_of<mha::parse_error>([&] { mha::load_multihead_attention(file, 2, "encoder."); }),
      "missing tensor \"encoder.out_proj.weight\"");
}

TEST(Npy, MultiheadAttentionStateDictErrors) {
  const Bytes w = f32_bytes(std::vector<float>(4, 0.5f));
  const auto no_heads = mha::Safetensors::parse(
      safetensors(R"({"out_proj.weight":{"dtype":"F32","shape":[2,2],"data_offsets":[0,16]}})", w));
  EXPECT_MESSAGE_HAS(message_of<mha::parse_error>([&] { mha::load_multihead_attention(no_heads); }),
                     "num_heads is not part of a state_dict");
  EXPECT_MESSAGE_HAS(
      message_of<mha::parse_error>([&] { mha::load_multihead_attention(no_heads, 1); }),
      "missing tensor \"in_proj_weight\"");
  const auto kv = mha::Safetensors::parse(safetensors(
      R"({"bias_k":{"dtype":"F32","shape":[1,1,2],"data_offsets":[0,8]},"out_proj.weight":{"dtype":"F32","shape":[2,2],"data_offsets":[8,24]}})",
      f32_bytes(std::vector<float>(6, 0.5f))));
  EXPECT_MESSAGE_HAS(message_of<mha::parse_error>([&] { mha::load_multihead_attention(kv, 1); }),
                     "add_bias_kv=True is not supported");
  const auto odd = mha::Safetensors::parse(
      safetensors(R"({"weight":{"dtype":"F32","shape":[2,2],"data_offsets":[0,16]}})", w));
  EXPECT_MESSAGE_HAS(message_of<mha::parse_error>([&] { mha::load_multihead_attention(odd, 1); }),
                     "unknown tensor \"weight\"");
  const auto bad_shape = mha::Safetensors::parse(
      safetensors(R"({"out_proj.weight":{"dtype":"F32","shape":[4],"data_offsets":[0,16]}})", w));
  EXPECT_MESSAGE_HAS(
      message_of<mha::shape_error>([&] { mha::load_multihead_attention(bad_shape, 1); }),
      "\"out_proj.weight\" has shape (4); expected (n, d)");
}

}  // namespace
