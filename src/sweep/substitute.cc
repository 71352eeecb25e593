#include "sweep/substitute.h"

#include <fmt/format.h>

#include <array>
#include <string_view>
#include <vector>

#include "sweep/did_you_mean.h"

namespace tessera::sweep {
namespace {

using nlohmann::json;

constexpr std::array<std::string_view, 2> kPrefixes = {"${params.", "${trialParameters."};

Status UnknownParameter(std::string_view path, std::string_view name, const Assignment& assignment) {
  std::vector<std::string_view> names;
  for (const ParameterValue& v : assignment.values()) names.push_back(v.name);
  std::string hint = DidYouMean(name, names);
  if (hint.empty()) hint = fmt::format(" (the sweep's parameters: {})", QuotedList(names));
  return Status::InvalidArgument(fmt::format("{}: unknown parameter \"{}\"{}", path, name, hint));
}

// The string with every reference replaced.
Result<std::string> SubstituteString(const std::string& in, const Assignment& assignment,
                                     const SubstitutionOptions& options, std::string_view path) {
  std::string out;
  size_t pos = 0;
  while (true) {
    // The nearest reference of either form.
    size_t at = std::string::npos;
    size_t prefix = 0;
    for (size_t p = 0; p < kPrefixes.size(); ++p) {
      size_t found = in.find(kPrefixes[p], pos);
      if (found < at) {
        at = found;
        prefix = p;
      }
    }
    if (at == std::string::npos) {
      out.append(in, pos);
      return out;
    }
    out.append(in, pos, at - pos);
    size_t name_begin = at + kPrefixes[prefix].size();
    size_t close = in.find('}', name_begin);
    if (close == std::string::npos) {
      return Err(Status::InvalidArgument(
          fmt::format("{}: \"{}\" is not closed; write {}NAME}}", path, in.substr(at), kPrefixes[prefix])));
    }
    std::string name = in.substr(name_begin, close - name_begin);
    if (name.empty()) {
      return Err(Status::InvalidArgument(
          fmt::format("{}: {}}} names no parameter; write {}NAME}}", path, kPrefixes[prefix], kPrefixes[prefix])));
    }
    std::string parameter = name;
    if (prefix == 1) {
      auto alias = options.trial_parameters.find(name);
      if (alias != options.trial_parameters.end()) parameter = alias->second;
    }
    const ParameterValue* value = assignment.Find(parameter);
    if (value == nullptr) return Err(UnknownParameter(path, parameter, assignment));
    out += value->text;
    pos = close + 1;
  }
}

Status Walk(json& node, const Assignment& assignment, const SubstitutionOptions& options, const std::string& path) {
  if (node.is_string()) {
    ASSIGN_OR_RETURN(std::string s, SubstituteString(node.get_ref<const std::string&>(), assignment, options, path));
    node = std::move(s);
  } else if (node.is_array()) {
    for (size_t i = 0; i < node.size(); ++i) {
      RETURN_IF_ERROR(Walk(node[i], assignment, options, fmt::format("{}[{}]", path, i)));
    }
  } else if (node.is_object()) {
    for (auto it = node.begin(); it != node.end(); ++it) {
      RETURN_IF_ERROR(Walk(it.value(), assignment, options, path.empty() ? it.key() : path + "." + it.key()));
    }
  }
  return Status::Ok();
}

}  // namespace

Result<json> SubstituteParameters(const json& trial_template, const Assignment& assignment,
                                  const SubstitutionOptions& options) {
  json out = trial_template;
  RETURN_IF_ERROR(Walk(out, assignment, options, options.path));
  return out;
}

}  // namespace tessera::sweep
