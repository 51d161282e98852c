// mha: the command-line face of the mha core. Contract: docs/cli.md.
//
//   mha forward [FILE|-]        one JSON request (FILE, or stdin) -> one JSON response on stdout
//   mha numpy-experiment --seed S --tokens N --d-model D --num-heads H [--causal] [--positional]
//   mha translate TEXT [--model FILE] [--json] [--logits] [--ablate KIND:LAYER:HEAD]...
//   mha date-eval [--model FILE] [--heldout FILE] [--no-ablation] [--limit N]
//   mha patterns [FILE|-] [--tokens FILE] [--query-tokens FILE] [--tensor NAME] [--format json|table]
//   mha patterns --input TEXT [--input TEXT]... | --heldout FILE [--limit N]  [--date-model FILE]
//   mha patterns [FILE|-] [--tokens FILE] [--word-index FILE] --report [--probes FILE] [--format json|table]
//   mha probes induction|pronoun [--seed N] [--count N]
//   mha lm [--json] [--top K] [--ablate L.H[,L.H...]] [--model FILE] TEXT|-
//   mha prune [--model FILE] [--text FILE | --heldout FILE] [--limit N] [--json]
//   mha models [--dir DIR] [--json]
//   mha --help | mha help
//
// Exit status: 0 success; 2 bad input or usage ("mha: error: ..." on stderr, nothing on stdout);
// 1 an unexpected internal failure (or stdout could not be written).
// The front end only handles arguments, I/O and exit codes (main.cpp: dispatch and errors;
// commands_*.cpp: the subcommands); parsing, serialising and the work live in the layers
// (mha_formats, mha_analysis, mha_models).
#include <cstdio>
#include <exception>
#include <new>
#include <string>
#include <vector>

#include "cli.hpp"
#include "mha/errors.hpp"

using namespace mha_cli;

namespace {

const char* const help_text =
    "mha - multi-head attention (PyTorch nn.MultiheadAttention semantics, batch of 1, no dropout)\n"
    "\n"
    "usage:\n"
    "  mha forward [FILE|-]\n"
    "      Read one JSON request from FILE (or stdin when FILE is absent or \"-\") and print one\n"
    "      JSON response on stdout. Request keys (PyTorch names): num_heads, query, key, value,\n"
    "      in_proj_weight | q_proj_weight k_proj_weight v_proj_weight, in_proj_bias,\n"
    "      out_proj_weight, out_proj_bias, attn_mask, key_padding_mask, is_causal, kdim, vdim.\n"
    "      Response: output (n, d), attn_weights (h, n, m) per head, fully_masked_rows,\n"
    "      num_heads, d_model, d_head, kdim, vdim, n, m, parameter_count.\n"
    "  mha numpy-experiment --seed S --tokens N --d-model D --num-heads H [--causal] "
    "[--positional]\n"
    "      Module 08's seeded numpy program: np.random.seed(S); X = randn(N, D);\n"
    "      Wq, Wk, Wv, Wo = randn(D, D) x 4; X @ W convention, no bias. Prints the forward\n"
    "      response plus seed, X, Wq, Wk, Wv, Wo (numpy's float64 draws). S in [0, 4294967295].\n"
    "  mha translate TEXT [--model FILE] [--json] [--logits] [--ablate KIND:LAYER:HEAD]...\n"
    "      Translate a date with the trained model (default: the repository's\n"
    "      web/date_model.safetensors) and print the ISO date, e.g. 2026-11-30. --json prints\n"
    "      {input, output, source_tokens, output_tokens, produced_eos, num_heads,\n"
    "      num_encoder_layers, num_decoder_layers, encoder_self (L, h, S, S), decoder_self\n"
    "      (L, h, T, T), cross (L, h, T, S)}; --logits adds logits (T, V). --ablate switches a\n"
    "      head off (KIND = encoder_self | decoder_self | cross), repeatable.\n"
    "  mha date-eval [--model FILE] [--heldout FILE] [--no-ablation] [--limit N]\n"
    "      Exact-match accuracy on held-out dates (default tests/fixtures/date_heldout.json),\n"
    "      overall and per format, and what every head does: role mass of cross-attention\n"
    "      heads, offsets of self-attention heads, accuracy with each head ablated. JSON.\n"
    "  mha patterns [FILE|-] [--tokens FILE] [--query-tokens FILE] [--tensor NAME]\n"
    "               [--format json|table]\n"
    "      Score every head of exported attention weights (docs/patterns.md): FILE (or stdin)\n"
    "      is JSON {\"tokens\": [...], \"attn_weights\": h x n x n or L x h x n x n}, a .npy of\n"
    "      shape (h, n, m), (L, h, n, m) or (L, 1, h, n, m) (tokens from --tokens FILE: a JSON\n"
    "      array or one token per line; the n query tokens of cross-attention from\n"
    "      --query-tokens FILE), or a safetensors file (--tensor NAME, or its only tensor).\n"
    "      Prints per layer and head every score (with tokens also duplicate_token, induction\n"
    "      and punctuation), its uniform baseline and the labels it earns, and the\n"
    "      Jensen-Shannon distance matrix of the heads. --format table: the same scores as a\n"
    "      readable table per layer (one line per head, 3 decimals).\n"
    "  mha patterns --input TEXT [--input TEXT]... | --heldout FILE [--limit N]\n"
    "               [--date-model FILE]\n"
    "      The same for every head of the date model (encoder self, decoder self, cross): one\n"
    "      input in full, or several / a held-out file averaged per head.\n"
    "  mha patterns [FILE|-] [--tokens FILE] [--word-index FILE] --report [--probes FILE]\n"
    "               [--format json|table]\n"
    "      The head report card (docs/patterns.md): per head every score of module 03's kinds\n"
    "      (previous token, neighbourhood, punctuation, first token, induction, same token,\n"
    "      coreference) with its protocol, its chance baseline on the same rows, the rows counted\n"
    "      and the paper's figure, the labels, and the best head of each kind. --word-index: the\n"
    "      word of each token (scored by word). --probes: probes written by `mha probes` with\n"
    "      tokens, offsets and attn_weights added per example (FILE then optional).\n"
    "  mha probes induction|pronoun [--seed N] [--count N]\n"
    "      Write the card's probes as JSON: Olsson et al.'s repeated random words (10 examples)\n"
    "      or pronoun sentences with character spans (40), to run through your own model.\n"
    "  mha lm [--json] [--top K] [--ablate L.H[,L.H...]] [--model FILE] TEXT\n"
    "      Run the English language model (default: the repository's web/english_lm.safetensors)\n"
    "      on TEXT (- reads standard input): prints the tokens, the K (default 5) most\n"
    "      probable next tokens and the perplexity. Text beyond max_len tokens (<bos> included) is dropped and counted.\n"
    "      --ablate switches heads off (layer.head, comma-separated, repeatable). --json prints\n"
    "      {tokens, words, unknown, ids, truncated_tokens, next_token [{token, probability}],\n"
    "      next_token_logprob (n-1), perplexity, layers, num_heads, attn_weights (L, h, n, n),\n"
    "      ablated [[layer, head]]}.\n"
    "  mha prune [--model FILE] [--text FILE | --heldout FILE] [--limit N] [--json]\n"
    "      Greedy head pruning (docs/head-experiments.md): remove the heads one at a time, each step the\n"
    "      one whose removal costs least on half the held-out items, and print the metric on\n"
    "      the other half after each removal: loss per character for an English model (--text:\n"
    "      one text a line, default web/english_lm_heldout.txt), exact match for a date model\n"
    "      (--heldout, default tests/fixtures/date_heldout.json). --limit N: the first N items.\n"
    "      --json prints {model, checksum, kind, metric, lower_is_better, heads,\n"
    "      selection_items, measurement_items, protocol, steps [{heads_left, removed, value,\n"
    "      selection_value}]}.\n"
    "  mha models [--dir DIR] [--json]\n"
    "      Every model file under DIR (default: the repository's web/), verified: {models:\n"
    "      [{name, kind, file, num_layers, num_heads, d_model, heads, parameters,\n"
    "      attention_parameters, position_bias_parameters, step, checksum}]}.\n"
    "  mha --help | mha help\n"
    "\n"
    "exit status: 0 success; 2 bad input or usage (one line \"mha: error: ...\" on stderr,\n"
    "nothing on stdout); 1 internal failure. Full contract: docs/cli.md.\n";

int run(const std::vector<std::string>& argv) {
  if (argv.empty()) throw usage_error{"missing subcommand"};
  for (const auto& a : argv) {
    if (a == "--help" || a == "-h") {
      std::fputs(help_text, stdout);
      return exit_ok;
    }
  }
  const std::string& command = argv[0];
  const std::vector<std::string> rest(argv.begin() + 1, argv.end());
  if (command == "help") {
    std::fputs(help_text, stdout);
    return exit_ok;
  }
  if (command == "forward") return cmd_forward(rest);
  if (command == "numpy-experiment") return cmd_numpy_experiment(rest);
  if (command == "translate") return cmd_translate(rest);
  if (command == "date-eval") return cmd_date_eval(rest);
  if (command == "patterns") return cmd_patterns(rest);
  if (command == "lm") return cmd_lm(rest);
  if (command == "probes") return cmd_probes(rest);
  if (command == "prune") return cmd_prune(rest);
  if (command == "models") return cmd_models(rest);
  throw usage_error{"unknown subcommand " + in_quotes(command)};
}

void report(const std::string& message) {
  std::fprintf(stderr, "mha: error: %s\n", one_line(message).c_str());
}

}  // namespace

int main(int argc, char** argv) {
  const std::vector<std::string> args(argv + 1, argv + argc);
  try {
    return run(args);
  } catch (const usage_error& e) {
    // Still one line, as for any bad input: scripts read exactly one line of stderr.
    report(e.message + " (see: mha --help)");
    return exit_bad_input;
  } catch (const input_error& e) {
    report(e.message);
    return exit_bad_input;
  } catch (const mha::error& e) {
    report(e.what());
    return exit_bad_input;
  } catch (const std::bad_alloc&) {
    std::fprintf(stderr, "mha: internal error: out of memory\n");
    return exit_internal;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "mha: internal error: %s\n", one_line(e.what()).c_str());
    return exit_internal;
  }
}
