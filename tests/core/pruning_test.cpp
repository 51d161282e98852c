// Greedy head pruning (cpp/analysis/mha/pruning.hpp) on metrics whose answer is known, and the
// models' pruning metrics and curves (cpp/models/mha/model_pruning.hpp): the English model's loss
// per character against PyTorch's log-probabilities (tests/fixtures/english_lm_golden*.json,
// scripts/fixtures/make_fixtures.py; within 1e-3 nats per token, the tolerance of
// english_lm_test's next_token_logprob), the date model's exact match against its translations,
// every curve step against the metric recomputed by brute force, and model summaries against the
// files' own tensors.
#include <gtest/gtest.h>

#include <cmath>
#include <fstream>
#include <limits>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "fixture_util.hpp"
#include "mha/date_report.hpp"
#include "mha/model_pruning.hpp"
#include "mha/pruning.hpp"

namespace {

using json = nlohmann::json;
using mha::Index;
using mha::PruneHalf;
using mha_test::load_fixture;
using mha_test::message_of;

const std::string kRepo = std::string(MHA_FIXTURES_DIR) + "/../..";

std::vector<std::uint8_t> read_bytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw std::runtime_error("cannot open " + path);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

std::string read_text(const std::string& path) {
  const auto b = read_bytes(path);
  return {b.begin(), b.end()};
}

// ---- greedy_prune -------------------------------------------------------------------------------

TEST(GreedyPrune, RemovesTheCheapestHeadFirstAndMeasuresOnTheOtherHalf) {
  // An additive loss: head k costs cost[k] on the selection half and twice that on the
  // measurement half. Greedy order: cheapest first.
  const std::vector<double> cost = {0.5, 0.1, 0.3, 0.0};
  int selection_calls = 0, measurement_calls = 0;
  const auto steps = mha::greedy_prune(
      4,
      [&](const std::vector<Index>& off, PruneHalf half) {
        double sum = 0;
        for (const Index k : off) sum += cost[static_cast<std::size_t>(k)];
        (half == PruneHalf::selection ? selection_calls : measurement_calls) += 1;
        return 1.0 + (half == PruneHalf::selection ? sum : 2 * sum);
      },
      true);
  ASSERT_EQ(steps.size(), 5u);
  const std::vector<Index> order = {3, 1, 2, 0};
  double sum = 0;
  EXPECT_FALSE(steps[0].removed.has_value());
  EXPECT_EQ(steps[0].heads_left, 4);
  EXPECT_DOUBLE_EQ(steps[0].value, 1.0);
  for (std::size_t s = 1; s < steps.size(); ++s) {
    sum += cost[static_cast<std::size_t>(order[s - 1])];
    EXPECT_EQ(steps[s].removed, order[s - 1]) << "step " << s;
    EXPECT_EQ(steps[s].heads_left, 4 - static_cast<Index>(s));
    EXPECT_DOUBLE_EQ(steps[s].selection_value, 1.0 + sum);
    EXPECT_DOUBLE_EQ(steps[s].value, 1.0 + 2 * sum);
  }
  EXPECT_EQ(selection_calls, 1 + 4 + 3 + 2 + 1);
  EXPECT_EQ(measurement_calls, 5);
}

TEST(GreedyPrune, ReMeasuresAfterEachRemoval) {
  // Heads 0 and 1 are redundant copies: either alone costs nothing, both together cost 1. Head 2
  // costs 0.2. One-shot ranking by single removals would remove 0 and 1 first (total 1.0 after
  // two); greedy re-measurement removes one copy, then head 2, then the other copy.
  const auto metric = [](const std::vector<Index>& off, PruneHalf) {
    const std::set<Index> s(off.begin(), off.end());
    return (s.count(0) && s.count(1) ? 1.0 : 0.0) + (s.count(2) ? 0.2 : 0.0);
  };
  const auto steps = mha::greedy_prune(3, metric, true);
  ASSERT_EQ(steps.size(), 4u);
  EXPECT_EQ(steps[1].removed, 0);  // tie between 0 and 1: the lowest index
  EXPECT_EQ(steps[2].removed, 2);
  EXPECT_EQ(steps[3].removed, 1);
  EXPECT_DOUBLE_EQ(steps[2].value, 0.2);
  EXPECT_DOUBLE_EQ(steps[3].value, 1.2);
}

TEST(GreedyPrune, AnAccuracyKeepsTheHighestValue) {
  const std::vector<double> drop = {0.02, 0.3, 0.0};
  const auto steps = mha::greedy_prune(
      3,
      [&](const std::vector<Index>& off, PruneHalf) {
        double a = 0.9;
        for (const Index k : off) a -= drop[static_cast<std::size_t>(k)];
        return a;
      },
      false);
  EXPECT_EQ(steps[1].removed, 2);
  EXPECT_EQ(steps[2].removed, 0);
  EXPECT_EQ(steps[3].removed, 1);
  EXPECT_NEAR(steps[3].value, 0.9 - 0.32, 1e-12);
}

TEST(GreedyPrune, BadInputIsAClearError) {
  const auto zero = [](const std::vector<Index>&, PruneHalf) { return 0.0; };
  EXPECT_EQ(message_of<mha::value_error>([&] { mha::greedy_prune(0, zero, true); }),
            "pruning needs at least 1 head, got 0");
  const auto nan_after_two = [](const std::vector<Index>& off, PruneHalf) {
    return off.size() >= 2 ? std::numeric_limits<double>::quiet_NaN() : 1.0;
  };
  EXPECT_EQ(message_of<mha::value_error>([&] { mha::greedy_prune(3, nan_after_two, true); }),
            "pruning: the metric on the selection half is not finite with heads [0, 1] off");
}

// ---- the English model's loss -------------------------------------------------------------------

Index code_points(const std::string& s) {
  Index n = 0;
  for (const unsigned char c : s) n += (c & 0xC0) != 0x80 ? 1 : 0;
  return n;
}

TEST(EnglishHeldoutLoss, MatchesPyTorchLogProbabilities) {
  // Each golden case that fits max_len: PyTorch's summed -log p over the text's code points.
  for (const char* name : {"english_lm_golden_tiny.json", "english_lm_golden.json"}) {
    const json doc = load_fixture(name);
    std::map<std::string, mha::EnglishLM> models;
    for (const auto& [key, entry] : doc.at("models").items()) {
      models.emplace(
          key, mha::EnglishLM::load(read_bytes(kRepo + "/" + entry.at("file").get<std::string>())));
    }
    int scored = 0;
    for (const auto& c : doc.at("cases")) {
      const std::string text = c.at("text").get<std::string>();
      SCOPED_TRACE(std::string(name) + ": \"" + text + "\"");
      std::vector<mha::LMHead> off;
      for (const auto& a : c.at("ablate"))
        off.push_back({a.at(0).get<Index>(), a.at(1).get<Index>()});
      const mha::EnglishLoss loss =
          mha::english_heldout_loss(models.at(c.at("model").get<std::string>()), {text}, off);
      const auto lp = c.at("next_token_logprob").get<std::vector<double>>();
      if (c.at("truncated_tokens").get<int>() > 0 || lp.empty()) {
        EXPECT_EQ(loss.skipped, 1);
        EXPECT_EQ(loss.texts, 0);
        EXPECT_TRUE(std::isnan(loss.per_character()));
        continue;
      }
      double nats = 0;
      for (const double x : lp) nats -= x;
      EXPECT_EQ(loss.texts, 1);
      EXPECT_EQ(loss.tokens, static_cast<Index>(lp.size()));
      EXPECT_EQ(loss.characters, code_points(text));
      EXPECT_NEAR(loss.nats, nats, 1e-3 * static_cast<double>(lp.size()));
      scored += 1;
    }
    EXPECT_GE(scored, 3) << name;
  }
}

TEST(EnglishHeldoutLoss, SumsOverTextsAndNamesBadInput) {
  const mha::EnglishLM m = mha::EnglishLM::load(read_bytes(kRepo + "/web/english_lm.safetensors"));
  const std::vector<std::string> texts = {"The cat sat on the mat.",
                                          "Café au lait, s’il vous plaît."};
  const auto a = mha::english_heldout_loss(m, {texts[0]});
  const auto b = mha::english_heldout_loss(m, {texts[1]});
  const auto both = mha::english_heldout_loss(m, texts);
  EXPECT_DOUBLE_EQ(both.nats, a.nats + b.nats);
  EXPECT_EQ(both.characters, 23 + 30);
  EXPECT_DOUBLE_EQ(both.per_character(), (a.nats + b.nats) / 53.0);
  EXPECT_NE(message_of<mha::value_error>([&] {
              mha::english_heldout_loss(m, texts, {{3, 0}});
            }).find("layer 3"),
            std::string::npos);
}

// ---- curves -------------------------------------------------------------------------------------

TEST(PruneEnglishLM, EveryStepIsTheBruteForceChoiceOnTheTinyModel) {
  const mha::EnglishLM m = mha::EnglishLM::load(
      read_bytes(std::string(MHA_FIXTURES_DIR) + "/english_lm_tiny_relbias_mlp.safetensors"));
  const std::vector<std::string> texts = {"the cat sat",    "a dog ran home", "on the mat .",
                                          "she said hello", "the fox",        "we went there"};
  const mha::PruneCurve c = mha::prune_english_lm(m, texts);
  const auto heads = mha::english_lm_heads(m);
  ASSERT_EQ(c.steps.size(), heads.size() + 1);
  EXPECT_EQ(c.metric, "loss_per_character");
  EXPECT_EQ(c.selection_items, 3);
  EXPECT_EQ(c.measurement_items, 3);
  EXPECT_EQ(c.heads.front(), "L0 H0");
  const std::vector<std::string> sel = {texts[0], texts[2], texts[4]};
  const std::vector<std::string> meas = {texts[1], texts[3], texts[5]};
  std::vector<mha::LMHead> off;
  std::set<Index> removed;
  EXPECT_DOUBLE_EQ(c.steps[0].value, mha::english_heldout_loss(m, meas).per_character());
  for (std::size_t s = 1; s < c.steps.size(); ++s) {
    // The best of every head still on, recomputed here.
    double best = std::numeric_limits<double>::infinity();
    for (std::size_t k = 0; k < heads.size(); ++k) {
      if (removed.count(static_cast<Index>(k))) continue;
      auto trial = off;
      trial.push_back(heads[k]);
      best = std::min(best, mha::english_heldout_loss(m, sel, trial).per_character());
    }
    ASSERT_TRUE(c.steps[s].removed.has_value());
    const Index k = *c.steps[s].removed;
    EXPECT_TRUE(removed.insert(k).second) << "head " << k << " removed twice";
    off.push_back(heads[static_cast<std::size_t>(k)]);
    EXPECT_DOUBLE_EQ(c.steps[s].selection_value, best);
    EXPECT_DOUBLE_EQ(c.steps[s].value, mha::english_heldout_loss(m, meas, off).per_character());
  }
  const json j = mha::prune_curve_to_json(c, "tiny.safetensors", m.checksum(), "english");
  EXPECT_EQ(j.at("steps").at(0).at("removed"), nullptr);
  EXPECT_EQ(j.at("checksum"), m.checksum());
  EXPECT_EQ(j.at("steps").at(1).at("removed"),
            c.heads[static_cast<std::size_t>(*c.steps[1].removed)]);
  EXPECT_EQ(j.at("steps").size(), heads.size() + 1);

  EXPECT_NE(message_of<mha::value_error>([&] {
              mha::prune_english_lm(m, {"the cat"});
            }).find("at least one text"),
            std::string::npos);
}

TEST(PruneDateModel, ExactMatchAndTheCurveOnHeldOutDates) {
  const mha::DateModel m = mha::DateModel::load(read_bytes(kRepo + "/web/date_model.safetensors"));
  std::vector<mha::DateExample> ex = mha::parse_date_examples(
      read_text(std::string(MHA_FIXTURES_DIR) + "/date_heldout.json"), "date_heldout.json");
  ex.resize(40);
  // Exact match against greedy translation, with and without a head off.
  const mha::Ablation off = {{mha::AttentionKind::decoder_self, 0, 1}};
  for (const auto& ablation : {mha::Ablation{}, off}) {
    Index same = 0;
    for (const auto& e : ex) same += m.translate(e.input, ablation).output == e.target ? 1 : 0;
    EXPECT_DOUBLE_EQ(mha::date_exact_match(m, ex, ablation), double(same) / 40.0);
  }
  const auto heads = mha::date_model_heads(m);
  ASSERT_EQ(heads.size(), 24u);
  EXPECT_EQ(mha::head_name(heads[8]), "decoder_self L0 H0");
  const mha::PruneCurve c = mha::prune_date_model(m, ex);
  EXPECT_EQ(c.metric, "exact_match");
  EXPECT_FALSE(c.lower_is_better);
  ASSERT_EQ(c.steps.size(), 25u);
  std::vector<mha::DateExample> odd;
  for (std::size_t k = 1; k < ex.size(); k += 2) odd.push_back(ex[k]);
  EXPECT_DOUBLE_EQ(c.steps[0].value, mha::date_exact_match(m, odd));
  EXPECT_DOUBLE_EQ(c.steps[24].value, mha::date_exact_match(m, odd, heads));
  EXPECT_EQ(c.steps[24].heads_left, 0);
  EXPECT_NE(message_of<mha::value_error>([&] {
              mha::prune_date_model(m, {ex[0]});
            }).find("at least 2 examples"),
            std::string::npos);
}

// ---- model summaries ----------------------------------------------------------------------------

TEST(DescribeModelFile, CountsEveryStoredWeightAndTheAttentionsOnes) {
  for (const std::string file : {"web/english_lm.safetensors", "web/date_model.safetensors"}) {
    SCOPED_TRACE(file);
    const auto bytes = read_bytes(kRepo + "/" + file);
    const mha::ModelSummary s = mha::describe_model_file(bytes);
    const mha::Safetensors st = mha::Safetensors::parse(bytes);
    Index all = 0;
    for (const auto& [name, info] : st.tensors()) all += static_cast<Index>(info.elements());
    EXPECT_EQ(s.parameters, all);
    EXPECT_EQ(s.checksum, st.metadata("xxh64"));
    const Index d = s.d_model;
    const Index attentions = s.kind == "english" ? s.num_layers : 6;  // date: 2 + 2 self, 2 cross
    EXPECT_EQ(s.attention_parameters, attentions * (4 * d * d + 4 * d));
    EXPECT_EQ(s.heads, attentions * s.num_heads);
  }
  const auto en = mha::describe_model_file(read_bytes(kRepo + "/web/english_lm.safetensors"));
  EXPECT_EQ(en.kind, "english");
  EXPECT_EQ(en.step, 3200);
  EXPECT_EQ(en.position_bias_parameters, 3 * 8 * 128);
  EXPECT_EQ(mha::describe_model_file(read_bytes(kRepo + "/web/date_model.safetensors")).kind,
            "date");
  EXPECT_EQ(message_of<mha::parse_error>([&] {
              mha::describe_model_file(
                  read_bytes(std::string(MHA_FIXTURES_DIR) + "/torch_mha_layer.safetensors"));
            }),
            "not a model of mha-lab: format \"\" (expected \"mha-lab-english-lm\" or "
            "\"mha-lab-date-model\")");
}

}  // namespace
