// Steps: (1) read the run's list, refusing unknown, duplicate and valueless
// entries; (2) fill in the defaults; (3) refuse what is still missing, in the
// pipeline's order so the first required parameter is named first.
#include "pipeline/parameters.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>

#include "common/json_fields.h"
#include "common/suggest.h"
#include "pipeline/references.h"

namespace tessera::pipeline {

Result<ParameterValues> ResolveParameters(const PipelineSpec& spec, const nlohmann::json& run_parameters,
                                          std::string_view path) {
  ParameterValues values;
  std::map<std::string, size_t, std::less<>> given_at;
  std::vector<std::string_view> declared;
  for (const Parameter& p : spec.parameters) declared.push_back(p.name);

  // 1. The run's own values.
  if (!run_parameters.is_null()) {
    if (!run_parameters.is_array()) return Err(JsonTypeError(path, "a list", run_parameters));
    for (size_t i = 0; i < run_parameters.size(); ++i) {
      const nlohmann::json& item = run_parameters[i];
      const std::string at = fmt::format("{}[{}]", path, i);
      if (!item.is_object()) return Err(JsonTypeError(at, "an object", item));
      ASSIGN_OR_RETURN(std::string name, ReadJsonString(item, "name", at, /*required=*/true));
      if (std::find(declared.begin(), declared.end(), name) == declared.end()) {
        std::string hint;
        if (auto s = Suggest(name, declared)) {
          hint = fmt::format("; did you mean \"{}\"?", *s);
        } else if (declared.empty()) {
          hint = " (it declares none)";
        } else {
          hint = fmt::format(" (it declares {})", fmt::join(declared, ", "));
        }
        return Err(
            Status::InvalidArgument(fmt::format("{}.name: the pipeline has no parameter \"{}\"{}", at, name, hint)));
      }
      if (auto [it, fresh] = given_at.emplace(name, i); !fresh) {
        return Err(Status::InvalidArgument(
            fmt::format("{}.name: parameter \"{}\" is given twice (also {}[{}].name)", at, name, path, it->second)));
      }
      const nlohmann::json* v = JsonFind(item, "value");
      if (v == nullptr) return Err(Status::InvalidArgument(fmt::format("{}.value: is required", at)));
      if (!v->is_string() && !v->is_number() && !v->is_boolean())
        return Err(JsonTypeError(at + ".value", "a string", *v));
      values[name] = BindingText(*v);
    }
  }

  // 2 and 3. Defaults, then what is missing.
  for (const Parameter& p : spec.parameters) {
    if (values.contains(p.name)) continue;
    if (!p.default_value) {
      return Err(Status::InvalidArgument(fmt::format(
          "{}: parameter \"{}\" is required (the pipeline gives it no default); add {{name: {}, value: ...}}", path,
          p.name, p.name)));
    }
    values[p.name] = *p.default_value;
  }
  return values;
}

}  // namespace tessera::pipeline
