// The head report card (docs/patterns.md "Head report card"): every head kind of module 03,
// measured the way the papers measure it, each score with its protocol, the chance baseline on the
// same rows and the paper's figure where one exists.
//
// Shape legend (as patterns.hpp): L = layers, h = num_heads, n = tokens of one example (self-
// attention: queries and keys are the same n tokens), w = words of one example (by-word view).
// An example is one text run through a model: L stacks of (h, n, n) and its n tokens. A card is
// measured over one or more examples (Olsson et al. 2022's induction probe is 10 sequences; the
// pronoun probe is one sentence an example): every score is a mean over the rows (or probes) of
// all examples together.
//
// Rows. A row's *visible keys* are every key j <= i when the head is causal in that example (every
// weight above the diagonal exactly 0, as HeadScores::causal), else all n keys. Every score but
// coreference averages over the *counted rows*: rows that are not all zero (a fully masked row
// carries no distribution) and see at least 2 keys (a row with one key has no choice to make).
// Each counted row is divided by its sum.
//
// Chance. Each score's `chance` is the same score of a uniform row over the row's visible keys, on
// the same rows; for the argmax scores a tie at the maximum is split evenly among the tied keys
// (the expected hit of a random tie-break), so a uniform row scores exactly its chance.
//
// By word. With a word index (tokens -> words, e.g. subword pieces -> words), every example is
// first aggregated by word (by_word_stack: sum over a word's key pieces, mean over its query
// pieces) and scored as if the words were the tokens; a word's text is its pieces joined, with the
// SentencePiece space mark U+2581 and spaces removed (by_word_tokens).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "mha/patterns.hpp"

namespace mha {

/// One pronoun probe of one example, in token (or, by word, word) indices of that example:
/// `pronoun` the query rows of the pronoun (its pieces; their rows are averaged), `antecedent` and
/// `other` the key tokens of the two mentions (title + name; weights are summed over each).
struct CoreferenceProbe {
  std::vector<Index> pronoun;
  std::vector<Index> antecedent;
  std::vector<Index> other;
};

/// One text run through a model.
struct ReportExample {
  std::vector<HeadStack> layers;      ///< L stacks of (h, n, n); every example has the same L, h
  std::vector<std::string> tokens;    ///< (n) the tokens, as strings
  std::vector<Index> word_index;      ///< (n) word of each token, or empty (then scored by token)
  std::optional<CoreferenceProbe> probe;  ///< the pronoun probe of this example, if it is one
};

/// One score of one head.
struct CardScore {
  std::string name;      ///< e.g. "previous_token_argmax"
  std::string protocol;  ///< the paper and what exactly is averaged
  std::string figure;    ///< the paper's figure with its citation, or "" when there is none
  std::optional<double> value;   ///< nullopt when no row (or probe) qualifies
  std::optional<double> chance;  ///< the uniform row's score on the same rows (or 0.5 for probes)
  Index count = 0;               ///< rows (or probes) averaged over
  std::optional<Index> offset;   ///< argmax_offset only: the head's most frequent argmax offset j - i
};

/// The card of one head: its scores in the order of HeadReportCard::kinds and its labels.
struct HeadCard {
  Index layer = 0, head = 0;
  std::vector<CardScore> scores;
  /// Earned when value >= threshold and value >= chance + margin (HeadScoreThresholds, as
  /// head_labels): "previous-token", "positional", "duplicate-token" (same_token), "induction",
  /// "punctuation" (head_labels on these scores), then "first-token" (first_token, threshold
  /// vertical_stripe) and "coreference" (coreference, threshold 0.5).
  std::vector<std::string> labels;
};

/// The best head of one kind: the largest value of that score over every head.
struct BestHead {
  std::string kind;
  Index layer = 0, head = 0;
  double value = 0.0;
  std::optional<double> chance;
  std::optional<Index> offset;
};

struct HeadReportCard {
  bool by_word = false;
  Index examples = 0, num_layers = 0, num_heads = 0;
  Index probes = 0;  ///< examples with a pronoun probe
  /// Share of probes whose antecedent is the nearer name (its last token after the other name's
  /// last token): the positional baseline of coreference; nullopt without probes.
  std::optional<double> nearer_name;
  std::vector<HeadCard> heads;  ///< L * h, layer-major
  std::vector<BestHead> best;   ///< one per kind that some head scores
};

/// The score names of a card, in order: previous_token_argmax, previous_token, local_band,
/// argmax_offset, punctuation, first_token, induction, same_token, coreference.
const std::vector<std::string>& head_report_kinds();

/// The by-word view of one (h, n, n) stack: (h, w, w) with
///   W[u, v] = mean over query pieces i of word u of sum over key pieces j of word v of a[i, j].
/// Rows still sum to 1 (or 0 where every piece row of the word is all zero: those rows are left
/// out of the mean). word_index: (n) non-decreasing, starting at 0, in steps of 0 or 1.
/// Throws shape_error when word_index is not n long, value_error when it is not such a sequence.
HeadStack by_word_stack(const HeadStack& stack, const std::vector<Index>& word_index);

/// The words' texts: each word's pieces joined, with U+2581 and spaces removed. Throws as
/// by_word_stack.
std::vector<std::string> by_word_tokens(const std::vector<std::string>& tokens,
                                        const std::vector<Index>& word_index);

/// The card of every head over `examples` (at least one).
/// Throws shape_error when there is no example, the examples differ in L or h, a stack is not
/// square, tokens or word_index are not n long, or some examples have a word index and others do
/// not; value_error for a word index that is not non-decreasing from 0 in steps of 0 or 1, or a
/// probe whose token index lies outside [0, n), whose span is empty, or whose pronoun is not after
/// both mentions; and as validate_attention_weights (NaN, negative weights, rows that do not sum to
/// 1), the message naming "example e, layer l".
HeadReportCard head_report(const std::vector<ReportExample>& examples,
                           const HeadScoreThresholds& thresholds = {});

}  // namespace mha
