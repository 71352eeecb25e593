#include "sweep/sweep_spec.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <limits>
#include <set>

#include "common/json_fields.h"
#include "sweep/did_you_mean.h"
#include "sweep/metric_line.h"
#include "sweep/number_text.h"
#include "sweep/substitute.h"

namespace tessera::sweep {

using nlohmann::json;

MetricStrategy Objective::ObjectiveStrategy() const {
  auto it = strategies.find(metric);
  if (it != strategies.end()) return it->second;
  return type == ObjectiveType::kMinimize ? MetricStrategy::kMin : MetricStrategy::kMax;
}

std::string_view SearchAlgorithmName(SearchAlgorithm algorithm) {
  switch (algorithm) {
    case SearchAlgorithm::kGrid:
      return "grid";
    case SearchAlgorithm::kRandom:
      return "random";
    case SearchAlgorithm::kTpe:
      return "tpe";
  }
  return "unknown";
}

std::string_view EarlyStoppingAlgorithmName(EarlyStoppingAlgorithm algorithm) {
  switch (algorithm) {
    case EarlyStoppingAlgorithm::kMedianStop:
      return "medianstop";
    case EarlyStoppingAlgorithm::kAsha:
      return "asha";
    case EarlyStoppingAlgorithm::kHyperband:
      return "hyperband";
  }
  return "unknown";
}

const ParameterSpec* SweepSpec::FindParameter(std::string_view name) const {
  for (const ParameterSpec& p : parameters) {
    if (p.name == name) return &p;
  }
  return nullptr;
}

namespace {

Status Invalid(std::string_view path, std::string_view what) {
  return Status::InvalidArgument(fmt::format("{}: {}", path, what));
}

// Refuses fields of `object` outside `known`, suggesting the closest.
Status CheckKnownFields(const json& object, std::string_view path, const std::vector<std::string_view>& known) {
  for (auto it = object.begin(); it != object.end(); ++it) {
    bool found = false;
    for (std::string_view k : known) found = found || k == it.key();
    if (found) continue;
    std::string hint = DidYouMean(it.key(), known);
    if (hint.empty()) hint = fmt::format(" (known fields: {})", QuotedList(known));
    return Invalid(JoinJsonPath(path, it.key()), fmt::format("unknown field{}", hint));
  }
  return Status::Ok();
}

// One of `names` (case-sensitive), or an error with a suggestion.
Result<size_t> ReadChoice(const json& object, const char* key, std::string_view path,
                          const std::vector<std::string_view>& names, std::string_view what) {
  const std::string field = JoinJsonPath(path, key);
  ASSIGN_OR_RETURN(std::string got, ReadJsonString(object, key, path, /*required=*/true));
  for (size_t i = 0; i < names.size(); ++i) {
    if (names[i] == got) return i;
  }
  std::string hint = DidYouMean(got, names);
  return Err(Invalid(field, fmt::format("unknown {} \"{}\"{} (supported: {})", what, got, hint, QuotedList(names))));
}

// A number written as a string (Katib) or as a JSON number: its text, exact.
Result<std::string> NumberText(const json& value, std::string_view path) {
  if (value.is_string()) {
    const std::string& s = value.get_ref<const std::string&>();
    if (!ParseDouble(s)) return Err(Invalid(path, fmt::format("\"{}\" is not a number", s)));
    return s;
  }
  if (value.is_number_integer()) return value.dump();
  if (value.is_number_float()) {
    double x = value.get<double>();
    if (!std::isfinite(x)) return Err(Invalid(path, "must be a finite number"));
    return FormatDouble(x);
  }
  return Err(JsonTypeError(path, "a number (or a string holding one)", value));
}

// A count field: a JSON integer (an integral float from YAML too).
Result<std::optional<int64_t>> ReadInteger(const json& object, const char* key, std::string_view path) {
  const json* v = JsonFind(object, key);
  if (v == nullptr) return std::optional<int64_t>();
  const std::string field = JoinJsonPath(path, key);
  if (v->is_number_integer()) return std::optional<int64_t>(v->get<int64_t>());
  if (v->is_number_float()) {
    double x = v->get<double>();
    if (std::isfinite(x) && std::floor(x) == x && std::fabs(x) < 9e15) {
      return std::optional<int64_t>(static_cast<int64_t>(x));
    }
  }
  return Err(JsonTypeError(field, "an integer", *v));
}

// A count under its Katib name or its alias (never both), at least `min`.
Result<std::optional<int>> ReadCount(const json& spec, const char* name, const char* alias, std::string_view path,
                                     int64_t min) {
  ASSIGN_OR_RETURN(std::optional<int64_t> a, ReadInteger(spec, name, path));
  ASSIGN_OR_RETURN(std::optional<int64_t> b, ReadInteger(spec, alias, path));
  if (a && b) {
    return Err(Invalid(JoinJsonPath(path, alias), fmt::format("is an alias of {}; set one of them", name)));
  }
  std::optional<int64_t> v = a ? a : b;
  const std::string field = JoinJsonPath(path, a ? name : alias);
  if (!v) return std::optional<int>();
  if (*v < min) return Err(Invalid(field, fmt::format("must be at least {}, not {}", min, *v)));
  if (*v > 1'000'000) return Err(Invalid(field, fmt::format("must be at most 1000000, not {}", *v)));
  return std::optional<int>(static_cast<int>(*v));
}

bool IsParameterName(std::string_view name) {
  if (name.empty()) return false;
  for (char ch : name) {
    auto c = static_cast<unsigned char>(ch);
    if (!std::isalnum(c) && c != '_' && c != '-' && c != '.') return false;
  }
  return true;
}

Result<std::string> ReadMetricName(const json& object, const char* key, std::string_view path) {
  ASSIGN_OR_RETURN(std::string name, ReadJsonString(object, key, path, /*required=*/true));
  if (!IsMetricName(name)) {
    return Err(Invalid(JoinJsonPath(path, key),
                       fmt::format("\"{}\" is not a metric name: a letter or '_', then letters, digits, "
                                   "'_', '.', '-' or '/' (and not \"step\")",
                                   name)));
  }
  return name;
}

// ---- objective ------------------------------------------------------------------

Result<Objective> ParseObjective(const json& spec, std::string_view spec_path) {
  const std::string path = JoinJsonPath(spec_path, "objective");
  const json* o = JsonFind(spec, "objective");
  if (o == nullptr) return Err(Invalid(path, "is required: {type: minimize|maximize, objectiveMetricName: NAME}"));
  if (!o->is_object()) return Err(JsonTypeError(path, "an object", *o));
  RETURN_IF_ERROR(
      CheckKnownFields(*o, path, {"type", "goal", "objectiveMetricName", "additionalMetricNames", "metricStrategies"}));

  Objective out;
  ASSIGN_OR_RETURN(size_t type, ReadChoice(*o, "type", path, {"minimize", "maximize"}, "objective type"));
  out.type = type == 0 ? ObjectiveType::kMinimize : ObjectiveType::kMaximize;
  ASSIGN_OR_RETURN(out.metric, ReadMetricName(*o, "objectiveMetricName", path));

  if (const json* goal = JsonFind(*o, "goal"); goal != nullptr) {
    ASSIGN_OR_RETURN(std::string text, NumberText(*goal, JoinJsonPath(path, "goal")));
    out.goal = ParseDouble(text);
  }

  const std::string additional_path = JoinJsonPath(path, "additionalMetricNames");
  ASSIGN_OR_RETURN(out.additional_metrics, ReadJsonStringList(*o, "additionalMetricNames", path));
  std::set<std::string> metrics = {out.metric};
  for (size_t i = 0; i < out.additional_metrics.size(); ++i) {
    const std::string& name = out.additional_metrics[i];
    const std::string item = fmt::format("{}[{}]", additional_path, i);
    if (!IsMetricName(name)) return Err(Invalid(item, fmt::format("\"{}\" is not a metric name", name)));
    if (!metrics.insert(name).second) {
      return Err(Invalid(item, fmt::format("\"{}\" is listed twice (or is the objective metric)", name)));
    }
  }

  const std::string strategies_path = JoinJsonPath(path, "metricStrategies");
  ASSIGN_OR_RETURN(const json* strategies, ReadJsonObjectList(*o, "metricStrategies", path));
  for (size_t i = 0; strategies != nullptr && i < strategies->size(); ++i) {
    const json& s = (*strategies)[i];
    const std::string item = fmt::format("{}[{}]", strategies_path, i);
    RETURN_IF_ERROR(CheckKnownFields(s, item, {"name", "value"}));
    ASSIGN_OR_RETURN(std::string name, ReadJsonString(s, "name", item, /*required=*/true));
    if (!metrics.contains(name)) {
      std::vector<std::string_view> known(metrics.begin(), metrics.end());
      return Err(Invalid(
          JoinJsonPath(item, "name"),
          fmt::format("\"{}\" is neither the objective nor an additional metric{}", name, DidYouMean(name, known))));
    }
    ASSIGN_OR_RETURN(size_t v, ReadChoice(s, "value", item, {"min", "max", "latest"}, "metric strategy"));
    if (!out.strategies.emplace(name, static_cast<MetricStrategy>(v)).second) {
      return Err(Invalid(JoinJsonPath(item, "name"), fmt::format("metric \"{}\" has a strategy already", name)));
    }
  }
  // Katib's defaults: the objective's direction for it, latest for the others.
  out.strategies.try_emplace(out.metric,
                             out.type == ObjectiveType::kMinimize ? MetricStrategy::kMin : MetricStrategy::kMax);
  for (const std::string& m : out.additional_metrics) out.strategies.try_emplace(m, MetricStrategy::kLatest);
  return out;
}

// ---- settings -------------------------------------------------------------------

struct Setting {
  std::string name;
  std::string value;
  std::string path;  // of its value
};

// algorithmSettings: [{name, value}], names unique and among `known`.
Result<std::vector<Setting>> ReadSettings(const json& object, std::string_view path, std::string_view algorithm,
                                          const std::vector<std::string_view>& known) {
  const std::string list_path = JoinJsonPath(path, "algorithmSettings");
  ASSIGN_OR_RETURN(const json* list, ReadJsonObjectList(object, "algorithmSettings", path));
  std::vector<Setting> out;
  for (size_t i = 0; list != nullptr && i < list->size(); ++i) {
    const json& s = (*list)[i];
    const std::string item = fmt::format("{}[{}]", list_path, i);
    RETURN_IF_ERROR(CheckKnownFields(s, item, {"name", "value"}));
    ASSIGN_OR_RETURN(std::string name, ReadJsonString(s, "name", item, /*required=*/true));
    bool is_known = false;
    for (std::string_view k : known) is_known = is_known || k == name;
    if (!is_known) {
      std::string tail = known.empty()
                             ? fmt::format("; {} takes no settings", algorithm)
                             : fmt::format("{}; {} takes {}", DidYouMean(name, known), algorithm, QuotedList(known));
      return Err(Invalid(JoinJsonPath(item, "name"), fmt::format("unknown setting \"{}\"{}", name, tail)));
    }
    for (const Setting& seen : out) {
      if (seen.name == name) return Err(Invalid(JoinJsonPath(item, "name"), fmt::format("\"{}\" is set twice", name)));
    }
    const std::string value_path = JoinJsonPath(item, "value");
    const json* v = JsonFind(s, "value");
    if (v == nullptr) return Err(Invalid(value_path, "is required"));
    std::string text;
    if (v->is_string()) {
      text = v->get<std::string>();
    } else {
      ASSIGN_OR_RETURN(text, NumberText(*v, value_path));
    }
    out.push_back({name, text, value_path});
  }
  return out;
}

Result<int64_t> SettingInt(const Setting& s, int64_t min, int64_t max) {
  std::optional<int64_t> v = ParseInt64(s.value);
  if (!v) return Err(Invalid(s.path, fmt::format("{} must be an integer, not \"{}\"", s.name, s.value)));
  if (*v < min || *v > max) {
    return Err(Invalid(s.path, fmt::format("{} must be between {} and {}, not {}", s.name, min, max, *v)));
  }
  return *v;
}

// A double in the open interval (lo, hi); hi infinite for "no bound".
Result<double> SettingDouble(const Setting& s, double lo, double hi) {
  std::optional<double> v = ParseDouble(s.value);
  if (!v) return Err(Invalid(s.path, fmt::format("{} must be a number, not \"{}\"", s.name, s.value)));
  if (!(*v > lo && *v < hi)) {
    std::string range = std::isinf(hi) ? fmt::format("greater than {}", FormatDouble(lo))
                                       : fmt::format("strictly between {} and {}", FormatDouble(lo), FormatDouble(hi));
    return Err(Invalid(s.path, fmt::format("{} must be {}, not {}", s.name, range, s.value)));
  }
  return *v;
}

constexpr int64_t kInt32Max = 2147483647;
constexpr int64_t kStepMax = int64_t{1} << 53;

Result<AlgorithmSpec> ParseAlgorithm(const json& spec, std::string_view spec_path) {
  const std::string path = JoinJsonPath(spec_path, "algorithm");
  const json* a = JsonFind(spec, "algorithm");
  if (a == nullptr) return Err(Invalid(path, "is required: {algorithmName: grid|random|tpe}"));
  if (!a->is_object()) return Err(JsonTypeError(path, "an object", *a));
  RETURN_IF_ERROR(CheckKnownFields(*a, path, {"algorithmName", "algorithmSettings"}));

  AlgorithmSpec out;
  ASSIGN_OR_RETURN(size_t name, ReadChoice(*a, "algorithmName", path, {"grid", "random", "tpe"}, "algorithm"));
  out.name = static_cast<SearchAlgorithm>(name);
  std::vector<std::string_view> known;
  if (out.name == SearchAlgorithm::kRandom) known = {"random_state"};
  if (out.name == SearchAlgorithm::kTpe) {
    known = {"random_state", "n_startup_trials", "n_startup_jobs", "n_ei_candidates", "n_EI_candidates",
             "gamma",        "prior_weight"};
  }
  ASSIGN_OR_RETURN(std::vector<Setting> settings, ReadSettings(*a, path, SearchAlgorithmName(out.name), known));
  bool startup_set = false;
  bool candidates_set = false;
  for (const Setting& s : settings) {
    if (s.name == "random_state") {
      ASSIGN_OR_RETURN(int64_t v, SettingInt(s, 0, std::numeric_limits<int64_t>::max()));
      out.random_state = static_cast<uint64_t>(v);
    } else if (s.name == "n_startup_trials" || s.name == "n_startup_jobs") {
      if (startup_set) return Err(Invalid(s.path, "n_startup_trials and n_startup_jobs are one setting; set one"));
      startup_set = true;
      ASSIGN_OR_RETURN(int64_t v, SettingInt(s, 0, kInt32Max));
      out.tpe.n_startup_trials = static_cast<int>(v);
    } else if (s.name == "n_ei_candidates" || s.name == "n_EI_candidates") {
      if (candidates_set) return Err(Invalid(s.path, "n_ei_candidates and n_EI_candidates are one setting; set one"));
      candidates_set = true;
      ASSIGN_OR_RETURN(int64_t v, SettingInt(s, 1, 10000));
      out.tpe.n_ei_candidates = static_cast<int>(v);
    } else if (s.name == "gamma") {
      ASSIGN_OR_RETURN(out.tpe.gamma, SettingDouble(s, 0, 1));
    } else if (s.name == "prior_weight") {
      ASSIGN_OR_RETURN(out.tpe.prior_weight, SettingDouble(s, 0, INFINITY));
    }
  }
  return out;
}

Result<std::optional<EarlyStoppingSpec>> ParseEarlyStopping(const json& spec, std::string_view spec_path) {
  const std::string path = JoinJsonPath(spec_path, "earlyStopping");
  const json* e = JsonFind(spec, "earlyStopping");
  if (e == nullptr) return std::optional<EarlyStoppingSpec>();
  if (!e->is_object()) return Err(JsonTypeError(path, "an object", *e));
  RETURN_IF_ERROR(CheckKnownFields(*e, path, {"algorithmName", "algorithmSettings"}));

  EarlyStoppingSpec out;
  ASSIGN_OR_RETURN(size_t name, ReadChoice(*e, "algorithmName", path, {"medianstop", "asha", "hyperband"},
                                           "early stopping algorithm"));
  out.name = static_cast<EarlyStoppingAlgorithm>(name);
  std::vector<std::string_view> known = {"min_trials_required", "start_step"};
  if (out.name != EarlyStoppingAlgorithm::kMedianStop) known = {"eta", "min_resource", "max_resource"};
  ASSIGN_OR_RETURN(std::vector<Setting> settings, ReadSettings(*e, path, EarlyStoppingAlgorithmName(out.name), known));
  const Setting* max_setting = nullptr;
  for (const Setting& s : settings) {
    if (s.name == "min_trials_required") {
      ASSIGN_OR_RETURN(int64_t v, SettingInt(s, 1, kInt32Max));
      out.min_trials_required = static_cast<int>(v);
    } else if (s.name == "start_step") {
      ASSIGN_OR_RETURN(out.start_step, SettingInt(s, 1, kStepMax));
    } else if (s.name == "eta") {
      ASSIGN_OR_RETURN(int64_t v, SettingInt(s, 2, 1000));
      out.eta = static_cast<int>(v);
    } else if (s.name == "min_resource") {
      ASSIGN_OR_RETURN(out.min_resource, SettingInt(s, 1, kStepMax));
    } else if (s.name == "max_resource") {
      ASSIGN_OR_RETURN(int64_t v, SettingInt(s, 1, kStepMax));
      out.max_resource = v;
      max_setting = &s;
    }
  }
  if (out.max_resource && *out.max_resource <= out.min_resource) {
    return Err(Invalid(max_setting->path, fmt::format("max_resource ({}) must be greater than min_resource ({})",
                                                      *out.max_resource, out.min_resource)));
  }
  if (out.name == EarlyStoppingAlgorithm::kHyperband && !out.max_resource) {
    return Err(Invalid(JoinJsonPath(path, "algorithmSettings"),
                       "hyperband needs max_resource (the steps a trial runs at most), e.g. "
                       "{name: max_resource, value: \"81\"}"));
  }
  return std::optional<EarlyStoppingSpec>(out);
}

// ---- parameters -----------------------------------------------------------------

Result<ParameterSpec> ParseParameter(const json& p, const std::string& path) {
  RETURN_IF_ERROR(CheckKnownFields(p, path, {"name", "parameterType", "feasibleSpace"}));
  ParameterSpec out;
  ASSIGN_OR_RETURN(out.name, ReadJsonString(p, "name", path, /*required=*/true));
  if (!IsParameterName(out.name)) {
    return Err(Invalid(JoinJsonPath(path, "name"),
                       fmt::format("\"{}\" must hold only letters, digits, '_', '-' and '.', so that "
                                   "${{params.NAME}} can name it",
                                   out.name)));
  }
  ASSIGN_OR_RETURN(size_t type,
                   ReadChoice(p, "parameterType", path, {"double", "int", "discrete", "categorical"}, "parameterType"));
  out.type = static_cast<ParameterType>(type);
  const std::string type_name(ParameterTypeName(out.type));

  const std::string fs_path = JoinJsonPath(path, "feasibleSpace");
  const json* fs = JsonFind(p, "feasibleSpace");
  if (fs == nullptr) {
    return Err(
        Invalid(fs_path, out.IsRange() ? "is required: {min: \"...\", max: \"...\"}" : "is required: {list: [...]}"));
  }
  if (!fs->is_object()) return Err(JsonTypeError(fs_path, "an object", *fs));
  RETURN_IF_ERROR(CheckKnownFields(*fs, fs_path, {"min", "max", "step", "list", "distribution"}));

  if (!out.IsRange()) {
    for (const char* key : {"min", "max", "step", "distribution"}) {
      if (JsonFind(*fs, key) != nullptr) {
        return Err(Invalid(JoinJsonPath(fs_path, key),
                           fmt::format("does not apply to a {} parameter (it takes a list)", type_name)));
      }
    }
    const std::string list_path = JoinJsonPath(fs_path, "list");
    const json* list = JsonFind(*fs, "list");
    if (list != nullptr && !list->is_array()) return Err(JsonTypeError(list_path, "a list", *list));
    if (list == nullptr || list->empty()) {
      return Err(Invalid(list_path, fmt::format("a {} parameter needs a non-empty list of values", type_name)));
    }
    for (size_t i = 0; i < list->size(); ++i) {
      const json& item = (*list)[i];
      const std::string item_path = fmt::format("{}[{}]", list_path, i);
      std::string text;
      if (out.type == ParameterType::kDiscrete) {
        ASSIGN_OR_RETURN(text, NumberText(item, item_path));
        double x = *ParseDouble(text);
        for (size_t j = 0; j < out.list_numbers.size(); ++j) {
          if (out.list_numbers[j] == x) {
            return Err(Invalid(item_path, fmt::format("{} is listed twice (as {}[{}] too)", text, list_path, j)));
          }
        }
        out.list_numbers.push_back(x);
      } else {
        if (item.is_string()) {
          text = item.get<std::string>();
        } else if (item.is_number() || item.is_boolean()) {
          text = item.is_number_float() ? FormatDouble(item.get<double>()) : item.dump();
        } else {
          return Err(JsonTypeError(item_path, "a string", item));
        }
        for (size_t j = 0; j < out.list.size(); ++j) {
          if (out.list[j] == text) {
            return Err(Invalid(item_path, fmt::format("\"{}\" is listed twice (as {}[{}] too)", text, list_path, j)));
          }
        }
      }
      out.list.push_back(std::move(text));
    }
    return out;
  }

  if (JsonFind(*fs, "list") != nullptr) {
    return Err(Invalid(JoinJsonPath(fs_path, "list"),
                       fmt::format("does not apply to a {} parameter (it takes min and max); for a list of "
                                   "values use parameterType discrete or categorical",
                                   type_name)));
  }
  std::string texts[3];
  const char* keys[3] = {"min", "max", "step"};
  for (int k = 0; k < 3; ++k) {
    const std::string field = JoinJsonPath(fs_path, keys[k]);
    const json* v = JsonFind(*fs, keys[k]);
    if (v == nullptr) {
      if (k < 2) return Err(Invalid(field, fmt::format("is required for a {} parameter", type_name)));
      continue;
    }
    ASSIGN_OR_RETURN(texts[k], NumberText(*v, field));
    if (out.type == ParameterType::kInt) {
      std::optional<int64_t> i = ParseInt64(texts[k]);
      if (!i) {
        // A YAML float that is whole ("8.0" read as 8.0) is an integer still.
        std::optional<double> d = ParseDouble(texts[k]);
        if (d && std::floor(*d) == *d && !v->is_string()) i = static_cast<int64_t>(*d);
      }
      if (!i) {
        return Err(
            Invalid(field, fmt::format("an int parameter's {} must be an integer, not \"{}\"", keys[k], texts[k])));
      }
      if (*i > kStepMax || *i < -kStepMax) {
        return Err(Invalid(field, fmt::format("must be between -2^53 and 2^53, not {}", *i)));
      }
      texts[k] = fmt::format("{}", *i);
    }
  }
  out.min = *ParseDouble(texts[0]);
  out.max = *ParseDouble(texts[1]);
  if (out.min >= out.max) {
    return Err(
        Invalid(JoinJsonPath(fs_path, "min"), fmt::format("must be less than max ({} >= {})", texts[0], texts[1])));
  }
  if (!std::isfinite(out.max - out.min)) {
    // Draws and Parzen widths are computed from max - min.
    return Err(Invalid(
        fs_path, fmt::format("the range [{}, {}] is too wide: max - min must be a finite number", texts[0], texts[1])));
  }
  if (!texts[2].empty()) {
    double step = *ParseDouble(texts[2]);
    if (step <= 0)
      return Err(Invalid(JoinJsonPath(fs_path, "step"), fmt::format("must be positive, not {}", texts[2])));
    out.step = step;
  } else if (out.type == ParameterType::kInt) {
    out.step = 1;
  }
  out.decimal_places = std::max(DecimalPlaces(texts[0]), texts[2].empty() ? 0 : DecimalPlaces(texts[2]));

  if (JsonFind(*fs, "distribution") != nullptr) {
    ASSIGN_OR_RETURN(size_t d, ReadChoice(*fs, "distribution", fs_path, {"uniform", "logUniform"}, "distribution"));
    out.distribution = static_cast<Distribution>(d);
  }
  if (out.distribution == Distribution::kLogUniform && out.min <= 0) {
    return Err(Invalid(JoinJsonPath(fs_path, "min"),
                       fmt::format("must be positive for distribution logUniform, not {}", texts[0])));
  }
  return out;
}

Result<std::vector<ParameterSpec>> ParseParameters(const json& spec, std::string_view spec_path) {
  const std::string path = JoinJsonPath(spec_path, "parameters");
  ASSIGN_OR_RETURN(const json* list, ReadJsonObjectList(spec, "parameters", spec_path));
  if (list == nullptr || list->empty()) {
    return Err(Invalid(path,
                       "needs at least one parameter: [{name: lr, parameterType: double, "
                       "feasibleSpace: {min: \"0.001\", max: \"0.1\"}}]"));
  }
  std::vector<ParameterSpec> out;
  for (size_t i = 0; i < list->size(); ++i) {
    const std::string item = fmt::format("{}[{}]", path, i);
    ASSIGN_OR_RETURN(ParameterSpec p, ParseParameter((*list)[i], item));
    for (size_t j = 0; j < out.size(); ++j) {
      if (out[j].name == p.name) {
        return Err(Invalid(JoinJsonPath(item, "name"),
                           fmt::format("\"{}\" is the name of {}[{}] already; names must be unique", p.name, path, j)));
      }
    }
    out.push_back(std::move(p));
  }
  return out;
}

// An assignment of each parameter's first value, to check the template's references.
Assignment PlaceholderAssignment(const std::vector<ParameterSpec>& parameters) {
  Assignment a;
  for (const ParameterSpec& p : parameters) a.Add(p.IsFinite() ? p.At(0) : p.RangeValue(p.min));
  return a;
}

// Katib's trialTemplate.trialParameters: [{name, reference, description}].
Result<std::map<std::string, std::string>> ParseTrialParameters(const json& trial_template, const std::string& path,
                                                                const std::vector<ParameterSpec>& parameters) {
  std::map<std::string, std::string> out;
  if (!trial_template.is_object()) return out;
  const std::string list_path = JoinJsonPath(path, "trialParameters");
  ASSIGN_OR_RETURN(const json* list, ReadJsonObjectList(trial_template, "trialParameters", path));
  for (size_t i = 0; list != nullptr && i < list->size(); ++i) {
    const json& item = (*list)[i];
    const std::string item_path = fmt::format("{}[{}]", list_path, i);
    RETURN_IF_ERROR(CheckKnownFields(item, item_path, {"name", "reference", "description"}));
    ASSIGN_OR_RETURN(std::string name, ReadJsonString(item, "name", item_path, /*required=*/true));
    ASSIGN_OR_RETURN(std::string reference, ReadJsonString(item, "reference", item_path, /*required=*/true));
    std::vector<std::string_view> names;
    for (const ParameterSpec& p : parameters) names.push_back(p.name);
    if (std::find(names.begin(), names.end(), reference) == names.end()) {
      return Err(Invalid(JoinJsonPath(item_path, "reference"),
                         fmt::format("unknown parameter \"{}\"{}", reference, DidYouMean(reference, names))));
    }
    if (!out.emplace(name, reference).second) {
      return Err(Invalid(JoinJsonPath(item_path, "name"), fmt::format("\"{}\" is listed twice", name)));
    }
  }
  return out;
}

}  // namespace

Result<SweepSpec> ParseSweepSpec(const json& spec, std::string_view path) {
  if (!spec.is_object()) return Err(JsonTypeError(path, "an object", spec));
  SweepSpec out;
  ASSIGN_OR_RETURN(out.objective, ParseObjective(spec, path));
  ASSIGN_OR_RETURN(out.algorithm, ParseAlgorithm(spec, path));
  ASSIGN_OR_RETURN(out.early_stopping, ParseEarlyStopping(spec, path));

  ASSIGN_OR_RETURN(std::optional<int> parallel, ReadCount(spec, "parallelTrialCount", "parallelTrials", path, 1));
  if (parallel) out.parallel_trial_count = *parallel;
  ASSIGN_OR_RETURN(out.max_trial_count, ReadCount(spec, "maxTrialCount", "maxTrials", path, 1));
  ASSIGN_OR_RETURN(out.max_failed_trial_count, ReadCount(spec, "maxFailedTrialCount", "maxFailedTrials", path, 0));

  ASSIGN_OR_RETURN(out.parameters, ParseParameters(spec, path));
  if (out.algorithm.name == SearchAlgorithm::kGrid) {
    for (size_t i = 0; i < out.parameters.size(); ++i) {
      if (!out.parameters[i].IsFinite()) {
        return Err(Invalid(fmt::format("{}.parameters[{}].feasibleSpace.step", path, i),
                           fmt::format("is required for algorithm grid over the double parameter \"{}\" (grid "
                                       "needs int, discrete or categorical parameters, or a double with a step)",
                                       out.parameters[i].name)));
      }
    }
  } else if (!out.max_trial_count) {
    return Err(Invalid(JoinJsonPath(path, "maxTrialCount"),
                       fmt::format("is required for algorithm {} (only a grid ends by itself)",
                                   SearchAlgorithmName(out.algorithm.name))));
  }

  if (const json* t = JsonFind(spec, "trialTemplate"); t != nullptr) {
    out.trial_template = *t;
    const std::string template_path = JoinJsonPath(path, "trialTemplate");
    ASSIGN_OR_RETURN(out.trial_parameters, ParseTrialParameters(*t, template_path, out.parameters));
    SubstitutionOptions options{template_path, out.trial_parameters};
    RETURN_IF_ERROR(SubstituteParameters(*t, PlaceholderAssignment(out.parameters), options));
  }
  return out;
}

Result<json> RenderTrial(const SweepSpec& spec, const Assignment& assignment, std::string_view path) {
  SubstitutionOptions options{JoinJsonPath(path, "trialTemplate"), spec.trial_parameters};
  return SubstituteParameters(spec.trial_template, assignment, options);
}

Result<Assignment> ParseAssignment(const SweepSpec& spec, const json& list, std::string_view path) {
  if (!list.is_array()) return Err(JsonTypeError(path, "a list of {name, value}", list));
  std::map<std::string, std::pair<std::string, std::string>> given;  // name -> (value, path of value)
  for (size_t i = 0; i < list.size(); ++i) {
    const std::string item = fmt::format("{}[{}]", path, i);
    const json& entry = list[i];
    if (!entry.is_object()) return Err(JsonTypeError(item, "an object", entry));
    ASSIGN_OR_RETURN(std::string name, ReadJsonString(entry, "name", item, /*required=*/true));
    if (spec.FindParameter(name) == nullptr) {
      std::vector<std::string_view> names;
      for (const ParameterSpec& p : spec.parameters) names.push_back(p.name);
      return Err(Invalid(JoinJsonPath(item, "name"),
                         fmt::format("unknown parameter \"{}\"{}", name, DidYouMean(name, names))));
    }
    ASSIGN_OR_RETURN(std::string value, ReadJsonString(entry, "value", item, /*required=*/true));
    if (!given.emplace(name, std::make_pair(value, JoinJsonPath(item, "value"))).second) {
      return Err(Invalid(JoinJsonPath(item, "name"), fmt::format("parameter \"{}\" is assigned twice", name)));
    }
  }
  Assignment out;
  for (const ParameterSpec& p : spec.parameters) {
    auto it = given.find(p.name);
    if (it == given.end()) return Err(Invalid(path, fmt::format("parameter \"{}\" has no value", p.name)));
    ASSIGN_OR_RETURN(ParameterValue v, p.ValueOf(it->second.first, it->second.second));
    out.Add(std::move(v));
  }
  return out;
}

}  // namespace tessera::sweep
