// The English language model (cpp/models/mha/english_lm.*): agreement with PyTorch on two tiny
// random models (tests/fixtures/english_lm_golden_tiny.json, scripts/fixtures/
// make_english_lm_golden.py) and, when present, on the trained web/english_lm.safetensors; the
// tokenizer against the page's own tokenize() (tests/fixtures/english_tokenize.json,
// scripts/fixtures/make_tokenize_golden.mjs); and every loader error on broken copies of a file.
// Tolerances: logits and next_token_logprob 1e-3 absolute, attention weights 1e-4 absolute,
// probabilities 1e-4 absolute, perplexity 1e-3 relative; ids, words and tokens exactly.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <fstream>
#include <iterator>
#include <map>
#include <stdexcept>
#include <string>
#include <vector>

#include "fixture_util.hpp"
#include "mha/english_lm.hpp"
#include "mha/english_tokenizer.hpp"
#include "mha/safetensors.hpp"

namespace {

using mha_test::json;
using mha_test::load_fixture;
using mha_test::message_of;

const std::string repo_root = std::string(MHA_FIXTURES_DIR) + "/../..";

std::vector<std::uint8_t> read_bytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw std::runtime_error("cannot open " + path);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

bool exists(const std::string& path) { return std::ifstream(path).good(); }

/// Writes the file's checksum (safetensors_content_xxh64, "xxh64" left out) over its
/// "xxh64":"<16 hex>" value, so an edited file reaches the checks behind the checksum.
void restamp_checksum(std::vector<std::uint8_t>& bytes) {
  const std::string hash = mha::safetensors_content_xxh64(mha::Safetensors::parse(bytes), "xxh64");
  const std::string key = "\"xxh64\":\"";
  const auto at = std::search(bytes.begin(), bytes.end(), key.begin(), key.end());
  ASSERT_NE(at, bytes.end());
  std::copy(hash.begin(), hash.end(), at + static_cast<std::ptrdiff_t>(key.size()));
}

std::vector<mha::LMHead> ablation_of(const json& c) {
  std::vector<mha::LMHead> out;
  for (const auto& a : c.at("ablate"))
    out.push_back({a.at(0).get<mha::Index>(), a.at(1).get<mha::Index>()});
  return out;
}

/// Runs every case of a golden file against its model and compares (tolerances at the top).
void check_golden(const json& doc) {
  std::map<std::string, mha::EnglishLM> models;
  for (const auto& [key, entry] : doc.at("models").items()) {
    const mha::EnglishLM m =
        mha::EnglishLM::load(read_bytes(repo_root + "/" + entry.at("file").get<std::string>()));
    EXPECT_EQ(m.checksum(), entry.at("xxh64").get<std::string>());
    EXPECT_EQ(m.vocab(), entry.at("vocab").get<std::vector<std::string>>());
    EXPECT_EQ(m.config().num_layers, entry.at("config").at("num_layers").get<mha::Index>());
    models.emplace(key, m);
  }
  double worst_logits = 0, worst_weights = 0, worst_logprob = 0;
  for (const auto& c : doc.at("cases")) {
    const std::string text = c.at("text").get<std::string>();
    SCOPED_TRACE("text \"" + text + "\" on " + c.at("model").get<std::string>());
    const mha::EnglishLM& m = models.at(c.at("model").get<std::string>());
    const mha::EnglishLMRun r = m.run(text, 5, ablation_of(c));
    EXPECT_EQ(r.tokens.tokens, c.at("tokens").get<std::vector<std::string>>());
    EXPECT_EQ(r.tokens.word_index, c.at("word_index").get<std::vector<int>>());
    EXPECT_EQ(r.tokens.words, c.at("words").get<std::vector<std::string>>());
    EXPECT_EQ(r.tokens.unknown, c.at("unknown").get<std::vector<bool>>());
    EXPECT_EQ(r.tokens.ids, c.at("ids").get<std::vector<int>>());
    EXPECT_EQ(r.tokens.truncated_tokens, c.at("truncated_tokens").get<mha::Index>());

    // The golden logits write null for -inf (<unk> and <bos>, never predicted): -inf exactly.
    const json& shape = c.at("logits").at("shape");
    const json& data = c.at("logits").at("data");
    ASSERT_EQ(r.logits.rows(), shape.at(0).get<mha::Index>());
    ASSERT_EQ(r.logits.cols(), shape.at(1).get<mha::Index>());
    for (mha::Index i = 0; i < r.logits.size(); ++i) {
      const json& want = data.at(static_cast<std::size_t>(i));
      const float got = r.logits.data()[i];
      if (want.is_null()) {
        EXPECT_TRUE(std::isinf(got) && got < 0) << "logit " << i << " is " << got;
      } else {
        worst_logits = std::max(worst_logits, std::abs(double(got) - want.get<double>()));
      }
    }

    const std::vector<double> weights = mha_test::flat(c.at("attn_weights"));
    std::vector<double> ours;
    for (const auto& s : r.attn_weights) ours.insert(ours.end(), s.data(), s.data() + s.size());
    ASSERT_EQ(ours.size(), weights.size());
    for (std::size_t i = 0; i < ours.size(); ++i) {
      worst_weights = std::max(worst_weights, std::abs(ours[i] - weights[i]));
    }

    const auto logprob = c.at("next_token_logprob").get<std::vector<double>>();
    ASSERT_EQ(r.next_token_logprob.size(), logprob.size());
    for (std::size_t i = 0; i < logprob.size(); ++i) {
      worst_logprob = std::max(worst_logprob, std::abs(r.next_token_logprob[i] - logprob[i]));
    }
    if (c.at("perplexity").is_null()) {
      EXPECT_TRUE(std::isnan(r.perplexity));
    } else {
      const double p = c.at("perplexity").get<double>();
      EXPECT_NEAR(r.perplexity, p, 1e-3 * p);
    }
    const json& top = c.at("next_token");
    ASSERT_EQ(r.next_token.size(), top.size());
    for (std::size_t i = 0; i < top.size(); ++i) {
      EXPECT_NEAR(r.next_token[i].probability, top[i].at("probability").get<double>(), 1e-4);
    }
    EXPECT_EQ(r.next_token[0].token, top[0].at("token").get<std::string>());
  }
  EXPECT_LE(worst_logits, 1e-3);
  EXPECT_LE(worst_weights, 1e-4);
  EXPECT_LE(worst_logprob, 1e-3);
}

TEST(EnglishLMGolden, TinyModelsMatchPyTorch) {
  check_golden(load_fixture("english_lm_golden_tiny.json"));
}

TEST(EnglishLMGolden, TrainedModelMatchesPyTorch) {
  const std::string model = repo_root + "/web/english_lm.safetensors";
  const std::string golden = std::string(MHA_FIXTURES_DIR) + "/english_lm_golden.json";
  if (!exists(model) || !exists(golden)) {
    GTEST_SKIP() << "web/english_lm.safetensors or tests/fixtures/english_lm_golden.json is absent "
                    "(make it with scripts/fixtures/make_english_lm_golden.py --model "
                    "web/english_lm.safetensors --out tests/fixtures/english_lm_golden.json)";
  }
  check_golden(load_fixture("english_lm_golden.json"));
}

TEST(EnglishTokenizer, SplitsAsThePageDoes) {
  const json doc = load_fixture("english_tokenize.json");
  for (const auto& c : doc.at("cases")) {
    const std::string text = c.at("text").get<std::string>();
    EXPECT_EQ(mha::english_tokenize(text), c.at("tokens").get<std::vector<std::string>>()) << text;
  }
}

TEST(EnglishTokenizer, LookupFormAndInvalidUtf8) {
  EXPECT_EQ(mha::english_lookup_form("Don\xE2\x80\x99t"), "don't");
  EXPECT_EQ(mha::english_lookup_form("\xC3\x89mile"), "\xC3\x89mile");  // only ASCII lower-cased
  EXPECT_EQ(message_of<mha::value_error>([] { mha::english_tokenize("ab\xFF"); }),
            "text is not valid UTF-8: byte 0xFF at offset 2");
  EXPECT_NE(message_of<mha::value_error>([] { mha::english_tokenize("\xC0\xAF"); })  // overlong
                .find("offset 0"),
            std::string::npos);
  EXPECT_NE(
      message_of<mha::value_error>([] { mha::english_tokenize("x\xED\xA0\x80"); })  // surrogate
          .find("byte 0xED at offset 1"),
      std::string::npos);
  EXPECT_NE(message_of<mha::value_error>([] { mha::english_tokenize("\xE2\x80"); })  // truncated
                .find("not valid UTF-8"),
            std::string::npos);
}

// ------------------------------------------------------------------------------------------------
// Runs: empty text, truncation, errors

const std::string tiny_path =
    std::string(MHA_FIXTURES_DIR) + "/english_lm_tiny_relbias_mlp.safetensors";

TEST(EnglishLMRun, EmptyTextIsBosAloneAndLongTextKeepsTheFirstMaxLen) {
  const mha::EnglishLM m = mha::EnglishLM::load(read_bytes(tiny_path));
  const mha::EnglishLMRun empty = m.run("", 3);
  EXPECT_EQ(empty.tokens.ids, std::vector<int>{1});
  EXPECT_EQ(empty.logits.rows(), 1);
  EXPECT_TRUE(empty.next_token_logprob.empty());
  EXPECT_TRUE(std::isnan(empty.perplexity));
  ASSERT_EQ(empty.next_token.size(), 3u);
  EXPECT_GE(empty.next_token[0].probability, empty.next_token[1].probability);
  EXPECT_FLOAT_EQ(empty.attn_weights[0](0, 0, 0), 1.0f);  // the bos row attends to itself

  std::string text;
  for (int i = 0; i < 30; ++i) text += "cat ";
  const std::size_t pieces = m.tokenizer().encode(text).ids.size();
  ASSERT_GT(pieces, 23u);
  const mha::EnglishLMRun r = m.run(text);
  EXPECT_EQ(r.tokens.ids.size(), 24u);  // max_len, <bos> included
  EXPECT_EQ(r.tokens.truncated_tokens, static_cast<mha::Index>(pieces - 23));
  EXPECT_EQ(r.tokens.word_index.size(), 24u);
  EXPECT_EQ(r.tokens.words.size(), static_cast<std::size_t>(r.tokens.word_index.back() + 1));
  EXPECT_EQ(r.tokens.unknown, std::vector<bool>(24, false));
  // Causal: nothing above the diagonal; every row sums to 1.
  for (const auto& s : r.attn_weights) {
    for (mha::Index h = 0; h < s.heads(); ++h) {
      for (mha::Index i = 0; i < s.rows(); ++i) {
        double sum = 0;
        for (mha::Index j = 0; j < s.cols(); ++j) {
          if (j > i) {
            EXPECT_EQ(s(h, i, j), 0.0f);
          }
          sum += s(h, i, j);
        }
        EXPECT_NEAR(sum, 1.0, 1e-5);
      }
    }
  }
}

// A generator bias of fp16's largest value (65504) on the last token: every other token gets a
// log-probability near -65504, and the perplexity overflows double to +inf (not NaN).
TEST(EnglishLMRun, PerplexityOverflowIsInfinity) {
  std::vector<std::uint8_t> bytes = read_bytes(tiny_path);
  bytes[bytes.size() - 2] = 0xFF;  // generator.bias[V - 1] = 0x7BFF, the last tensor of the file
  bytes[bytes.size() - 1] = 0x7B;
  restamp_checksum(bytes);
  const mha::EnglishLM m = mha::EnglishLM::load(bytes);
  const mha::EnglishLMRun r = m.run("the cat the cat");
  EXPECT_TRUE(std::isinf(r.perplexity) && r.perplexity > 0) << r.perplexity;
  for (const double lp : r.next_token_logprob) EXPECT_LT(lp, -60000.0);
  EXPECT_EQ(r.next_token[0].token, m.vocab().back());
  EXPECT_DOUBLE_EQ(r.next_token[0].probability, 1.0);
}

TEST(EnglishLMRun, BadArgumentsAreClearErrors) {
  const mha::EnglishLM m = mha::EnglishLM::load(read_bytes(tiny_path));
  EXPECT_EQ(message_of<mha::value_error>([&] {
              m.run("the cat", 5, {{2, 0}});
            }),
            "cannot ablate layer 2 head 0: the model has 2 layers of 4 heads");
  EXPECT_EQ(message_of<mha::value_error>([&] {
              m.run("the cat", 5, {{0, 4}});
            }),
            "cannot ablate layer 0 head 4: the model has 2 layers of 4 heads");
  EXPECT_NE(message_of<mha::value_error>([&] { m.run("the cat", 0); }).find("top_k=0"),
            std::string::npos);
  // 300 pieces, of which <unk> and <bos> are never predicted: 298 candidates.
  EXPECT_NE(message_of<mha::value_error>([&] { m.run("the cat", 299); }).find("top_k=299"),
            std::string::npos);
  EXPECT_EQ(m.run("the cat", 298).next_token.size(), 298u);
  EXPECT_NE(message_of<mha::value_error>([&] { m.run("the \xFF"); }).find("not valid UTF-8"),
            std::string::npos);
  EXPECT_NE(message_of<mha::value_error>([&] {
              m.forward({1, 300});
            }).find("token id 300"),
            std::string::npos);
  EXPECT_NE(message_of<mha::shape_error>([&] { m.forward({}); }).find("at least one"),
            std::string::npos);
}

// ------------------------------------------------------------------------------------------------
// Loader errors, on edited copies of a tiny model

/// A model file split into its header JSON and data section, edited and joined again with a
/// fresh checksum (unless `keep_checksum`).
struct EditableFile {
  json header;
  std::vector<std::uint8_t> data;

  explicit EditableFile(const std::vector<std::uint8_t>& bytes) {
    std::uint64_t n = 0;
    for (int i = 7; i >= 0; --i) n = (n << 8) | bytes[static_cast<std::size_t>(i)];
    header = json::parse(bytes.begin() + 8, bytes.begin() + 8 + static_cast<std::ptrdiff_t>(n));
    data.assign(bytes.begin() + 8 + static_cast<std::ptrdiff_t>(n), bytes.end());
  }
  json config() const { return json::parse(header["__metadata__"]["config"].get<std::string>()); }
  void set_config(const json& c) { header["__metadata__"]["config"] = c.dump(); }
  std::vector<std::uint8_t> bytes(bool keep_checksum = false) {
    const std::string h = header.dump();
    std::string out;
    for (int i = 0; i < 8; ++i) out.push_back(static_cast<char>((h.size() >> (8 * i)) & 0xFF));
    out += h;
    out.append(data.begin(), data.end());
    std::vector<std::uint8_t> b(out.begin(), out.end());
    // A container the parser refuses has no checksum to fix: the loader reports the container.
    if (!keep_checksum && header.contains("__metadata__") &&
        header["__metadata__"].contains("xxh64")) {
      try {
        restamp_checksum(b);
      } catch (const mha::parse_error&) {
      }
    }
    return b;
  }
};

template <typename E>
std::string load_error(std::vector<std::uint8_t> bytes) {
  return message_of<E>([&] { mha::EnglishLM::load(std::move(bytes)); });
}

TEST(EnglishLMLoad, EveryBrokenFileIsAClearError) {
  const std::vector<std::uint8_t> good = read_bytes(tiny_path);
  ASSERT_NO_THROW(mha::EnglishLM::load(good));
  {  // a flipped data byte: the checksum names both hashes
    std::vector<std::uint8_t> b = good;
    b[b.size() - 3] ^= 0x40;
    const std::string m = load_error<mha::parse_error>(b);
    EXPECT_NE(m.find("checksum mismatch: the metadata says xxh64 "), std::string::npos) << m;
    EXPECT_NE(m.find(", the file's data, tensor entries and metadata hash to "), std::string::npos)
        << m;
  }
  {  // truncated file
    std::vector<std::uint8_t> b(good.begin(),
                                good.begin() + static_cast<std::ptrdiff_t>(good.size() / 2));
    EXPECT_FALSE(load_error<mha::parse_error>(b).empty());
    EXPECT_FALSE(load_error<mha::parse_error>({1, 2, 3}).empty());
  }
  {  // wrong format, wrong version
    EditableFile f(good);
    f.header["__metadata__"]["format"] = "mha-lab-date-model";
    EXPECT_EQ(load_error<mha::parse_error>(f.bytes()),
              "wrong format \"mha-lab-date-model\": expected \"mha-lab-english-lm\"");
    EditableFile g(good);
    g.header["__metadata__"]["format_version"] = "1";
    EXPECT_EQ(load_error<mha::parse_error>(g.bytes()),
              "unsupported format_version \"1\": this build reads version 3");
  }
  {  // an unknown config key, a missing one, a wrong type, heads that do not divide d_model
    EditableFile f(good);
    json c = f.config();
    c["dropout"] = 0.1;
    f.set_config(c);
    EXPECT_NE(load_error<mha::parse_error>(f.bytes()).find("config has an unknown key \"dropout\""),
              std::string::npos);
    c.erase("dropout");
    c.erase("num_layers");
    f.set_config(c);
    EXPECT_EQ(load_error<mha::parse_error>(f.bytes()), "config has no \"num_layers\"");
    c["num_layers"] = 2;
    c["relative_bias"] = "yes";
    f.set_config(c);
    EXPECT_NE(
        load_error<mha::parse_error>(f.bytes()).find("\"relative_bias\" must be true or false"),
        std::string::npos);
    c["relative_bias"] = true;
    c["num_heads"] = 3;
    f.set_config(c);
    EXPECT_NE(load_error<mha::config_error>(f.bytes()).find("not divisible by num_heads=3"),
              std::string::npos);
  }
  {  // a tensor of the wrong shape: max_len 20 makes relative_bias (4, 24) wrong
    EditableFile f(good);
    json c = f.config();
    c["max_len"] = 20;
    f.set_config(c);
    EXPECT_EQ(load_error<mha::shape_error>(f.bytes()),
              "\"layers.0.self_attn.relative_bias\" has shape (4, 24), expected (4, 20)");
    EditableFile g(good);  // the same bytes declared transposed
    g.header["layers.1.linear1.weight"]["shape"] = {16, 32};
    EXPECT_EQ(load_error<mha::shape_error>(g.bytes()),
              "\"layers.1.linear1.weight\" has shape (16, 32), expected (32, 16)");
  }
  {  // a tensor the config does not call for, and a missing one
    EditableFile f(good);
    json c = f.config();
    c["relative_bias"] = false;
    f.set_config(c);
    EXPECT_NE(load_error<mha::parse_error>(f.bytes()).find(
                  "unexpected tensor \"layers.0.self_attn.relative_bias\""),
              std::string::npos);
    EditableFile g(good);
    g.header.erase("generator.bias");
    EXPECT_NE(load_error<mha::parse_error>(g.bytes()).find("generator.bias"), std::string::npos);
  }
  {  // the vocabulary: wrong length, wrong specials
    EditableFile f(good);
    json v = json::parse(f.header["__metadata__"]["vocab"].get<std::string>());
    v.erase(v.size() - 1);
    f.header["__metadata__"]["vocab"] = v.dump();
    EXPECT_EQ(load_error<mha::parse_error>(f.bytes()),
              "vocab has 299 entries, config vocab_size is 300");
    v.push_back("<unk>");
    f.header["__metadata__"]["vocab"] = v.dump();
    EXPECT_EQ(load_error<mha::parse_error>(f.bytes()), "vocab has \"<unk>\" twice");
  }
  {  // the tokenizer: absent, not the vocabulary's pieces, <bos> not a control piece
    EditableFile f(good);
    f.header["__metadata__"].erase("tokenizer");
    EXPECT_NE(load_error<mha::parse_error>(f.bytes()).find("tokenizer"), std::string::npos);
    EditableFile g(good);
    json v = json::parse(g.header["__metadata__"]["vocab"].get<std::string>());
    std::swap(v[280], v[281]);
    g.header["__metadata__"]["vocab"] = v.dump();
    EXPECT_EQ(load_error<mha::parse_error>(g.bytes()),
              "the tokenizer's 300 pieces are not the vocab's 300 entries in the same order");
    EditableFile h(good);
    json t = json::parse(h.header["__metadata__"]["tokenizer"].get<std::string>());
    t["types"][1] = "normal";
    h.header["__metadata__"]["tokenizer"] = t.dump();
    EXPECT_EQ(load_error<mha::parse_error>(h.bytes()),
              "the tokenizer's pieces 0 and 1 must be <unk> of type unknown and <bos> of type "
              "control");
    EditableFile k(good);
    t = json::parse(k.header["__metadata__"]["tokenizer"].get<std::string>());
    t["type"] = "wordpiece";
    k.header["__metadata__"]["tokenizer"] = t.dump();
    EXPECT_FALSE(load_error<mha::parse_error>(k.bytes()).empty());
  }
}

// The checksum covers the metadata and the tensor entries as well as the data: an edited header
// that still parses and passes every other check is refused, naming both hashes.
TEST(EnglishLMLoad, ChecksumCoversConfigVocabularyAndTensorEntries) {
  const std::vector<std::uint8_t> good = read_bytes(tiny_path);
  const mha::EnglishLM original = mha::EnglishLM::load(good);
  const std::string mismatch = "checksum mismatch: the metadata says xxh64 " + original.checksum() +
                               ", the file's data, tensor entries and metadata hash to ";
  const auto expect_mismatch = [&](const std::vector<std::uint8_t>& bytes, const char* what) {
    const std::string m = load_error<mha::parse_error>(bytes);
    EXPECT_EQ(m.rfind(mismatch, 0), 0u) << what << ": " << m;
    EXPECT_EQ(m.size(), mismatch.size() + 16) << what << ": " << m;
    EXPECT_EQ(m.find(original.checksum(), mismatch.size()), std::string::npos) << what;
  };

  {  // two pieces swapped in the vocabulary and the tokenizer alike: loads when re-stamped,
     // and then reads differently
    EditableFile f(good);
    json v = json::parse(f.header["__metadata__"]["vocab"].get<std::string>());
    json t = json::parse(f.header["__metadata__"]["tokenizer"].get<std::string>());
    const auto the = std::find(v.begin(), v.end(), "\u2581the");
    ASSERT_NE(the, v.end());
    const auto at = static_cast<std::size_t>(std::distance(v.begin(), the));
    std::swap(v[at], v[at + 1]);
    std::swap(t["pieces"][at], t["pieces"][at + 1]);
    f.header["__metadata__"]["vocab"] = v.dump();
    f.header["__metadata__"]["tokenizer"] = t.dump();
    expect_mismatch(f.bytes(/*keep_checksum=*/true), "vocab swap");
    const mha::EnglishLM swapped = mha::EnglishLM::load(f.bytes());
    EXPECT_EQ(original.encode(" the").ids, (std::vector<int>{1, static_cast<int>(at)}));
    EXPECT_NE(swapped.encode(" the").ids, original.encode(" the").ids);
    EXPECT_NE(swapped.checksum(), original.checksum());
  }
  {  // a config value changed (a valid config: only the LayerNorm epsilon)
    EditableFile f(good);
    json c = f.config();
    c["layer_norm_eps"] = 1e-3;
    f.set_config(c);
    expect_mismatch(f.bytes(true), "config change");
    EXPECT_NO_THROW(mha::EnglishLM::load(f.bytes()));
  }
  {  // one byte of the metadata flipped in place: "<0x41>" becomes "<0x40>" in the vocabulary
    std::vector<std::uint8_t> b = good;
    const std::string piece = "\\\"<0x41>\\\"";  // as the header's JSON writes it inside "vocab"
    const auto at = std::search(b.begin(), b.end(), piece.begin(), piece.end());
    ASSERT_NE(at, b.end());
    at[6] = static_cast<std::uint8_t>(at[6] ^ 0x01);  // '1' -> '0'
    expect_mismatch(b, "flipped metadata byte");
  }
  {  // a metadata key added (the training record is covered too)
    EditableFile f(good);
    f.header["__metadata__"]["note"] = "x";
    expect_mismatch(f.bytes(true), "added metadata key");
  }
  {  // two tensors of the same shape exchange their data_offsets
    EditableFile f(good);
    std::swap(f.header["layers.0.norm1.weight"]["data_offsets"],
              f.header["layers.0.norm1.bias"]["data_offsets"]);
    expect_mismatch(f.bytes(true), "swapped data_offsets");
  }
}

// The shipped model carries the version and checksum this build reads, and the head roles on
// the page were measured on exactly this file.
TEST(EnglishLMLoad, ShippedModelLoads) {
  const std::string model = repo_root + "/web/english_lm.safetensors";
  const std::string heads = repo_root + "/web/english_lm_heads.json";
  if (!exists(model)) GTEST_SKIP() << "web/english_lm.safetensors is absent";
  const mha::EnglishLM m = mha::EnglishLM::load(read_bytes(model));
  EXPECT_EQ(m.vocab().size(), static_cast<std::size_t>(m.config().vocab_size));
  if (exists(heads)) {
    std::ifstream in(heads);
    EXPECT_EQ(json::parse(in).at("model").at("xxh64").get<std::string>(), m.checksum());
  }
}

}  // namespace
