// The probes of the head report card (docs/patterns.md "Head report card"), written as words and
// characters so that a researcher runs them through their own model and tokenizer:
//   induction: Olsson et al. 2022's prefix-matching sequences (random words repeated);
//   pronoun:   two people introduced with gendered titles, then a pronoun that refers to one.
// The generators are the one implementation; `mha probes` and mha_lab.induction_probe /
// mha_lab.pronoun_probe call them.
//
// Draws: numpy's legacy generator, so a probe is reproducible from Python without this code:
// every draw is numpy.random.RandomState(seed).randint(0, k) (MT19937, masked rejection sampling of
// 32-bit outputs), in the order stated on each function.
//
// Characters: offsets and spans count Unicode code points of the example's text (Python str
// indices), half-open [start, end).
#pragma once

#include <nlohmann/json.hpp>

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "mha/head_report.hpp"

namespace mha {

/// The induction probe's words (scripts/codegen/gen_probe_words.py: the Brown Corpus's lower-case
/// words of frequency ranks 101-1100), and the invented names and places of the pronoun probe (none
/// of them a Brown word).
const std::vector<std::string>& induction_words();
const std::vector<std::string>& probe_names();
const std::vector<std::string>& probe_places();

/// Olsson et al. 2022's probe as words: `count` examples, each `length` distinct words drawn from
/// `words` and repeated `repeats` times in the same order. Draws, per example: a partial Fisher-
/// Yates shuffle of the indices 0 .. W-1 (W = words.size()), for k = 0 .. length-1:
/// j = k + randint(0, W - k), swap(idx[k], idx[j]); the words are idx[0 .. length).
/// Returns {"probe": "induction", "protocol", "seed", "length", "repeats", "examples": [{"text":
/// the words joined by single spaces, "words": [length]}]}.
/// Throws value_error when count is outside [1, 10000], length outside [2, W], repeats outside
/// [2, 100].
nlohmann::json induction_probe(std::uint32_t seed, int count = 10, int length = 25, int repeats = 4,
                               const std::vector<std::string>& words = induction_words());

/// The pronoun probe: `count` sentences from 5 templates, each naming two people (an occupation,
/// a title "mrs." or "mr." and a name) and a place, ending in the pronoun ("she" for "mrs.", "he"
/// for "mr.") of one of them, the antecedent. The antecedent is mentioned first in the even
/// examples (half the time). Draws, per example: template randint(0, 5); occupations a =
/// randint(0, 12), b = randint(0, 11) (+1 when >= a); names the same over `names`; place
/// randint(0, P); the antecedent's pronoun randint(0, 2) (1: "she").
/// Returns {"probe": "pronoun", "protocol", "seed", "examples": [{"text", "pronoun": [s, e],
/// "antecedent": [s, e], "other": [s, e] (title + name), "antecedent_first", "template"}]}.
/// Throws value_error when count is outside [1, 10000], there are fewer than 2 names or no place,
/// or a name or place is empty or holds a space.
nlohmann::json pronoun_probe(std::uint32_t seed, int count = 40,
                             const std::vector<std::string>& names = probe_names(),
                             const std::vector<std::string>& places = probe_places());

/// The tokens whose characters overlap [begin, end): token t with offsets[t] = [s, e), s < e,
/// s < end and e > begin. Empty tokens (a <bos> at [0, 0)) overlap nothing.
std::vector<Index> tokens_in_span(const std::vector<std::pair<Index, Index>>& offsets, Index begin,
                                  Index end);

/// Scored probes, as `mha patterns --report --probes FILE` and mha_lab.head_report read them: the
/// writer's JSON whose every example also holds "tokens" (n strings), "attn_weights" ((h, n, n),
/// (L, h, n, n) or (L, 1, h, n, n) numbers), for a pronoun example "offsets" ([s, e] per token,
/// characters of "text"), and optionally "word_index" (n). The pronoun's tokens are the query rows,
/// the mentions' tokens the keys (tokens_in_span).
/// Throws parse_error for a malformed document or an unknown key, and value_error / shape_error
/// as head_report for spans that map to no token or offsets that do not fit.
std::vector<ReportExample> read_scored_probes(const nlohmann::json& doc,
                                              const std::string& what = "probes");

/// One pronoun example's CoreferenceProbe from character spans and token offsets. Throws
/// value_error naming `what` when a span covers no token.
CoreferenceProbe probe_from_offsets(const std::vector<std::pair<Index, Index>>& offsets,
                                    std::pair<Index, Index> pronoun,
                                    std::pair<Index, Index> antecedent,
                                    std::pair<Index, Index> other, const std::string& what);

}  // namespace mha
