#include "server/api/field_selector.h"

#include <fmt/format.h>

#include <map>

namespace tessera {
namespace {

// Pods' fields, and Events' (as `kubectl get events --field-selector
// involvedObject.name=NAME` and `kubectl describe` use them).
const std::map<std::string_view, std::string_view>& Fields() {
  static const std::map<std::string_view, std::string_view> fields{
      {"metadata.name", "/metadata/name"},
      {"metadata.namespace", "/metadata/namespace"},
      {"spec.nodeName", "/spec/nodeName"},
      {"status.phase", "/status/phase"},
      {"involvedObject.apiVersion", "/involvedObject/apiVersion"},
      {"involvedObject.kind", "/involvedObject/kind"},
      {"involvedObject.name", "/involvedObject/name"},
      {"involvedObject.namespace", "/involvedObject/namespace"},
      {"involvedObject.uid", "/involvedObject/uid"},
      {"reason", "/reason"},
      {"reportingComponent", "/reportingComponent"},
      {"source", "/source/component"},
      {"type", "/type"}};
  return fields;
}

std::string SupportedFields() {
  std::string list;
  for (const auto& [name, unused] : Fields()) list += (list.empty() ? "" : ", ") + std::string(name);
  return list;
}

}  // namespace

Result<FieldSelector> FieldSelector::Parse(std::string_view text) {
  FieldSelector selector;
  while (!text.empty()) {
    const size_t comma = text.find(',');
    std::string_view term = text.substr(0, comma);
    text = comma == std::string_view::npos ? std::string_view() : text.substr(comma + 1);
    if (term.empty()) continue;
    Term t;
    size_t op = term.find("!=");
    size_t value_at = op + 2;
    if (op != std::string_view::npos) {
      t.equals = false;
    } else if ((op = term.find("==")) != std::string_view::npos) {
      value_at = op + 2;
    } else if ((op = term.find('=')) != std::string_view::npos) {
      value_at = op + 1;
    } else {
      return Err(Status::InvalidArgument(
          fmt::format("fieldSelector \"{}\": expected FIELD=VALUE or FIELD!=VALUE", std::string(term))));
    }
    const std::string field(term.substr(0, op));
    auto it = Fields().find(field);
    if (it == Fields().end()) {
      return Err(Status::InvalidArgument(fmt::format("field label not supported: {} (supported: {})", field, SupportedFields())));
    }
    t.field = it->second;
    t.value = std::string(term.substr(value_at));
    selector.terms_.push_back(std::move(t));
  }
  return selector;
}

bool FieldSelector::Matches(const nlohmann::json& object) const {
  for (const Term& t : terms_) {
    const nlohmann::json::json_pointer pointer(t.field);
    std::string actual;
    if (object.contains(pointer) && object[pointer].is_string()) actual = object[pointer].get<std::string>();
    if ((actual == t.value) != t.equals) return false;
  }
  return true;
}

}  // namespace tessera
