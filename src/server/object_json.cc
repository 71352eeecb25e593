#include "server/object_json.h"

namespace tessera {

using nlohmann::json;

std::string StringAt(const json& obj, std::initializer_list<const char*> path) {
  const json* cur = &obj;
  for (const char* p : path) {
    if (!cur->is_object()) return "";
    auto it = cur->find(p);
    if (it == cur->end()) return "";
    cur = &*it;
  }
  return cur->is_string() ? cur->get<std::string>() : "";
}

namespace {
// What is at `path` in `obj`; nullptr when a step is missing or not an object.
const json* Find(const json& obj, std::initializer_list<const char*> path) {
  const json* cur = &obj;
  for (const char* p : path) {
    if (!cur->is_object()) return nullptr;
    auto it = cur->find(p);
    if (it == cur->end()) return nullptr;
    cur = &*it;
  }
  return cur;
}
}  // namespace

const json& ObjectAt(const json& obj, std::initializer_list<const char*> path) {
  static const json kEmpty = json::object();
  const json* at = Find(obj, path);
  return at != nullptr && at->is_object() ? *at : kEmpty;
}

const json& ArrayAt(const json& obj, std::initializer_list<const char*> path) {
  static const json kEmpty = json::array();
  const json* at = Find(obj, path);
  return at != nullptr && at->is_array() ? *at : kEmpty;
}

std::string_view StringField(const json& obj, const char* key) {
  auto it = obj.find(key);
  return it != obj.end() && it->is_string() ? std::string_view(it->get_ref<const std::string&>()) : std::string_view();
}

namespace {

// Condition `type` of obj.status.conditions, or nullptr.
const json* FindCondition(const json& obj, std::string_view type) {
  auto status = obj.find("status");
  if (status == obj.end() || !status->is_object()) return nullptr;
  auto conds = status->find("conditions");
  if (conds == status->end() || !conds->is_array()) return nullptr;
  for (const json& c : *conds) {
    if (c.is_object() && StringField(c, "type") == type) return &c;
  }
  return nullptr;
}

}  // namespace

bool SetCondition(json& obj, const std::string& type, bool status, const std::string& reason,
                  const std::string& message, const std::string& now) {
  // Called for every condition a pass writes: compares in place and builds
  // the new condition field by field (nlohmann's initializer lists copy each value).
  json& conds = obj["status"]["conditions"];
  if (!conds.is_array()) conds = json::array();
  const std::string_view s = status ? "True" : "False";
  for (json& c : conds) {
    if (!c.is_object() || StringField(c, "type") != type) continue;
    const bool same_status = StringField(c, "status") == s;
    if (same_status && StringField(c, "reason") == reason && StringField(c, "message") == message) return false;
    if (!same_status) c["lastTransitionTime"] = now;
    c["status"] = s;
    c["reason"] = reason;
    c["message"] = message;
    return true;
  }
  json c = json::object();
  c["type"] = type;
  c["status"] = s;
  c["reason"] = reason;
  c["message"] = message;
  c["lastTransitionTime"] = now;
  conds.push_back(std::move(c));
  return true;
}

std::string ConditionValue(const json& obj, std::string_view type, const char* field) {
  const json* c = FindCondition(obj, type);
  return c ? std::string(StringField(*c, field)) : std::string();
}

bool ConditionTrue(const json& obj, std::string_view type) {
  const json* c = FindCondition(obj, type);
  return c && StringField(*c, "status") == "True";
}

}  // namespace tessera
