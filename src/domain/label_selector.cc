#include "domain/label_selector.h"

#include <fmt/format.h>

#include <algorithm>
#include <nlohmann/json.hpp>

#include "common/json_fields.h"

namespace tessera {
namespace {

using nlohmann::json;

bool Has(const std::vector<std::string>& values, std::string_view value) {
  return std::find(values.begin(), values.end(), value) != values.end();
}

Result<LabelRequirement> LabelRequirementFromJson(const json& object, std::string_view path) {
  LabelRequirement r;
  ASSIGN_OR_RETURN(r.key, ReadJsonString(object, "key", path, /*required=*/true));
  ASSIGN_OR_RETURN(std::string op, ReadJsonString(object, "operator", path, /*required=*/true));
  ASSIGN_OR_RETURN(r.values, ReadJsonStringList(object, "values", path));
  if (op == "In") {
    r.op = LabelRequirement::Op::kIn;
  } else if (op == "NotIn") {
    r.op = LabelRequirement::Op::kNotIn;
  } else if (op == "Exists") {
    r.op = LabelRequirement::Op::kExists;
  } else if (op == "DoesNotExist") {
    r.op = LabelRequirement::Op::kDoesNotExist;
  } else {
    return Err(Status::InvalidArgument(
        fmt::format("{}.operator: must be In, NotIn, Exists or DoesNotExist, not \"{}\"", path, op)));
  }
  // As metav1.LabelSelectorAsSelector requires.
  const bool set_op = r.op == LabelRequirement::Op::kIn || r.op == LabelRequirement::Op::kNotIn;
  if (set_op && r.values.empty()) {
    return Err(Status::InvalidArgument(fmt::format("{}.values: must not be empty for operator {}", path, op)));
  }
  if (!set_op && !r.values.empty()) {
    return Err(Status::InvalidArgument(fmt::format("{}.values: must be empty for operator {}", path, op)));
  }
  return r;
}

}  // namespace

Result<LabelSelectorTerms> LabelSelectorTermsFromJson(const json& object, std::string_view path) {
  if (!object.is_object()) return Err(JsonTypeError(path, "an object", object));
  LabelSelectorTerms s;
  ASSIGN_OR_RETURN(s.match_labels, ReadJsonStringMap(object, "matchLabels", path));
  ASSIGN_OR_RETURN(const json* expressions, ReadJsonObjectList(object, "matchExpressions", path));
  if (expressions != nullptr) {
    for (size_t i = 0; i < expressions->size(); ++i) {
      ASSIGN_OR_RETURN(LabelRequirement r,
                       LabelRequirementFromJson((*expressions)[i], fmt::format("{}.matchExpressions[{}]", path, i)));
      s.match_expressions.push_back(std::move(r));
    }
  }
  return s;
}

bool LabelSelectorTerms::Matches(const std::map<std::string, std::string>& labels) const {
  for (const auto& [key, value] : match_labels) {
    auto it = labels.find(key);
    if (it == labels.end() || it->second != value) return false;
  }
  for (const LabelRequirement& r : match_expressions) {
    auto it = labels.find(r.key);
    const bool present = it != labels.end();
    switch (r.op) {
      case LabelRequirement::Op::kIn:
        if (!present || !Has(r.values, it->second)) return false;
        break;
      case LabelRequirement::Op::kNotIn:
        if (present && Has(r.values, it->second)) return false;
        break;
      case LabelRequirement::Op::kExists:
        if (!present) return false;
        break;
      case LabelRequirement::Op::kDoesNotExist:
        if (present) return false;
        break;
    }
  }
  return true;
}

}  // namespace tessera
