// Small accessors for stored objects as JSON, shared by the controllers.
#pragma once

#include <initializer_list>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

namespace tessera {

// The string at `path` in `obj`, or "" when any step is missing or not a string.
std::string StringAt(const nlohmann::json& obj, std::initializer_list<const char*> path);

// The object at `path` in `obj` (a reference into it, no copy), or an empty
// object when any step is missing or not an object: what a controller reads
// of a const document instead of obj["a"]["b"], which is undefined behaviour
// (a crash in a release build) when a key is missing.
const nlohmann::json& ObjectAt(const nlohmann::json& obj, std::initializer_list<const char*> path);
// The same for an array: the array at `path`, or an empty one.
const nlohmann::json& ArrayAt(const nlohmann::json& obj, std::initializer_list<const char*> path);

// obj[key] when it is a string, else "" (a wrong type is refused by validation);
// a view into obj, no copy.
std::string_view StringField(const nlohmann::json& obj, const char* key);

// Sets condition `type` in obj.status.conditions (lastTransitionTime changes only
// when the status does); true when anything changed.
bool SetCondition(nlohmann::json& obj, const std::string& type, bool status, const std::string& reason,
                  const std::string& message, const std::string& now);

// Controllers ask these of every object they walk: they copy nothing.
bool ConditionTrue(const nlohmann::json& obj, std::string_view type);

// A field ("reason", "message", ...) of condition `type`; "" when absent.
std::string ConditionValue(const nlohmann::json& obj, std::string_view type, const char* field);

}  // namespace tessera
