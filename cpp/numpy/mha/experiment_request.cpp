// The one reader of the experiment request (experiment_request.hpp).
#include "mha/experiment_request.hpp"

#include "mha/request_schema.hpp"

namespace mha {
namespace {

/// ExperimentArguments as a source: typed values, no key beyond the native ones.
class ArgumentsSource final : public ExperimentSource {
 public:
  explicit ArgumentsSource(const ExperimentArguments& a) : a_(a) {}
  std::string what() const override { return "the experiment's arguments"; }
  std::vector<std::string> keys() const override { return experiment_key_names(true); }
  bool has(const char* key) const override {
    for (const ExperimentKey& k : kExperimentKeys) {
      if (k.native && std::string(key) == k.name) return true;
    }
    return false;
  }
  std::int64_t integer(const char* key, std::int64_t, std::int64_t) const override {
    const std::string k = key;
    if (k == "seed") return a_.seed;
    if (k == "tokens") return a_.tokens;
    throw parse_error(k + " is not an argument of the experiment");
  }
  bool boolean_or(const char* key, bool fallback) const override {
    const std::string k = key;
    if (k == "positional") return a_.positional;
    if (k == "is_causal") return a_.is_causal;
    return fallback;
  }
  std::optional<std::string> text(const char*) const override { return std::nullopt; }
  std::string repr(const char* key) const override { return key; }
  AttentionConfig config() const override {
    AttentionConfig c;
    c.d_model = a_.d_model;
    c.num_heads = a_.num_heads;
    return c;
  }
  AttentionMasks masks(Index, Index, Index) const override {
    AttentionMasks m;
    m.is_causal = a_.is_causal;
    return m;
  }
  ForwardOptions options() const override { return ForwardOptions(); }

 private:
  const ExperimentArguments& a_;
};

void check_keys(const ExperimentSource& source) {
  for (const std::string& key : source.keys()) {
    bool known = false;
    std::string list;
    for (const ExperimentKey& k : kExperimentKeys) {
      known = known || key == k.name;
      list += (list.empty() ? "" : ", ") + std::string(k.name);
    }
    if (!known) {
      throw parse_error("unknown key '" + key + "' in " + source.what() + " (known keys: " + list +
                        ")");
    }
  }
}

ExperimentPrecision read_precision(const ExperimentSource& source, Index tokens, Index d_model) {
  if (!source.has("precision")) return ExperimentPrecision::float64;
  const std::string p = source.text("precision").value_or("");
  if (p == "float64") return ExperimentPrecision::float64;
  if (p == "float32") return ExperimentPrecision::float32;
  if (p == "auto") return auto_experiment_precision(tokens, d_model);
  throw parse_error("precision must be \"float64\", \"float32\" or \"auto\", not " +
                    source.repr("precision"));
}

}  // namespace

ExperimentRequest read_experiment_request(const ExperimentSource& source) {
  check_keys(source);
  ExperimentRequest e;
  e.seed = static_cast<std::uint32_t>(source.integer("seed", 0, 0xffffffffLL));
  e.config = source.config();
  const AttentionConfig& c = e.config;
  e.tokens = static_cast<Index>(source.integer("tokens", 1, limits::max_tokens));
  e.precision = read_precision(source, e.tokens, c.d_model);
  e.positional = source.boolean_or("positional", false);
  e.return_parameters = source.boolean_or("return_parameters", true);
  e.options = source.options();
  // A head range: for a view that splits the heads between workers (weights only).
  e.head_range = source.has("first_head") || source.has("head_count");
  e.first_head = source.has("first_head")
                     ? static_cast<Index>(source.integer("first_head", 0, c.num_heads - 1))
                     : 0;
  e.head_count = source.has("head_count") ? static_cast<Index>(source.integer(
                                                "head_count", 1, c.num_heads - e.first_head))
                                          : c.num_heads - e.first_head;
  e.check_head_range();
  e.masks = source.masks(c.num_heads, e.tokens, e.tokens);
  return e;
}

ExperimentRequest read_experiment_request(const ExperimentArguments& arguments) {
  return read_experiment_request(ArgumentsSource(arguments));
}

const char* experiment_precision_name(ExperimentPrecision precision) {
  return precision == ExperimentPrecision::float64 ? "float64" : "float32";
}

}  // namespace mha
