#include "sweep/assignment.h"

#include <fmt/format.h>

#include "common/check.h"

namespace tessera::sweep {

void Assignment::Add(ParameterValue value) {
  TESSERA_CHECK(Find(value.name) == nullptr, "parameter {} assigned twice", value.name);
  values_.push_back(std::move(value));
}

const ParameterValue* Assignment::Find(std::string_view name) const {
  for (const ParameterValue& v : values_) {
    if (v.name == name) return &v;
  }
  return nullptr;
}

std::string Assignment::Key() const {
  // Length-prefixed, so that no text (a categorical value may hold anything)
  // can make two different assignments collide.
  std::string key;
  for (const ParameterValue& v : values_)
    key += fmt::format("{}:{}{}:{}", v.name.size(), v.name, v.text.size(), v.text);
  return key;
}

std::string Assignment::ToString() const {
  std::string out;
  for (const ParameterValue& v : values_) {
    if (!out.empty()) out += ", ";
    out += fmt::format("{}={}", v.name, v.text);
  }
  return out;
}

nlohmann::json AssignmentToJson(const Assignment& assignment) {
  nlohmann::json out = nlohmann::json::array();
  for (const ParameterValue& v : assignment.values()) out.push_back({{"name", v.name}, {"value", v.text}});
  return out;
}

}  // namespace tessera::sweep
