// `mha translate` (docs/cli.md, docs/date-model.md): read the arguments and the model, translate,
// print the ISO date or the translation's JSON (mha::date_translation_to_json).
#include <cstdio>
#include <string>
#include <vector>

#include "cli.hpp"
#include "mha/date_report.hpp"

namespace mha_cli {

namespace {

/// "KIND:LAYER:HEAD", e.g. "cross:1:3".
mha::HeadId parse_head(const std::string& text) {
  const auto a = text.find(':');
  const auto b = a == std::string::npos ? a : text.find(':', a + 1);
  if (b == std::string::npos) {
    throw usage_error{"--ablate takes KIND:LAYER:HEAD (e.g. cross:1:3), got " + in_quotes(text)};
  }
  mha::HeadId id;
  id.kind = mha::parse_attention_kind(text.substr(0, a));
  const auto layer = parse_unsigned(text.substr(a + 1, b - a - 1), 1u << 20);
  const auto head = parse_unsigned(text.substr(b + 1), 1u << 20);
  if (!layer || !head) {
    throw usage_error{"--ablate takes KIND:LAYER:HEAD with integers, got " + in_quotes(text)};
  }
  id.layer = static_cast<mha::Index>(*layer);
  id.head = static_cast<mha::Index>(*head);
  return id;
}

}  // namespace

int cmd_translate(const std::vector<std::string>& args) {
  const Options o =
      parse_options(args, {"--model", "--ablate"}, {"--json", "--logits"}, "translate");
  if (o.positional.size() != 1) {
    throw usage_error{"translate takes one TEXT (quote it), got " +
                      std::to_string(o.positional.size())};
  }
  const bool json = has_flag(o, "--json");
  const bool logits = has_flag(o, "--logits");
  if (logits && !json) throw usage_error{"--logits needs --json"};
  mha::Ablation ablation;
  for (const auto& [key, value] : o.values) {
    if (key == "--ablate") ablation.push_back(parse_head(value));
  }
  const mha::DateModel model =
      load_date_model(model_path(single(o, "--model"), BuiltInFile::date_model));
  const mha::DateTranslation t = model.translate(o.positional[0], ablation, logits);
  if (!json) return write_text(t.output + "\n") ? exit_ok : exit_internal;
  return write_response(mha::date_translation_to_json(model, t, logits)) ? exit_ok : exit_internal;
}

}  // namespace mha_cli
