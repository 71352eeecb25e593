// Typed reads of fields of a JSON document (a stored Kubernetes object), each
// checked for its type, for the libraries that turn objects into value types
// (auth's RBAC, domain's label selectors, net's NetworkPolicy).
//
// Contract
// - Never operator[] on a const document: a missing key there is undefined
//   behaviour (a crash in a release build). Every read goes through JsonFind.
// - An absent field and a null one read the same (Go decodes both to the zero
//   value): empty, or an error when the field is required.
// - Errors are InvalidArgument naming the field by its path
//   ("spec.ingress[0].from[1].ipBlock.cidr: must be a string, not number"), so
//   a user knows what to fix.
//
// Thread-safety: pure functions.
#pragma once

#include <map>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "common/result.h"

namespace tessera {

// "path.key", or "key" when path is empty.
std::string JoinJsonPath(std::string_view path, std::string_view key);

// The value at `key` of `object`, or nullptr when it is absent or null, or
// when `object` is not an object.
const nlohmann::json* JsonFind(const nlohmann::json& object, const char* key);

// InvalidArgument "PATH: must be WANT, not TYPE".
Status JsonTypeError(std::string_view path, std::string_view want, const nlohmann::json& got);

// A string field; "" when absent. `required`: absent or "" is an error.
Result<std::string> ReadJsonString(const nlohmann::json& object, const char* key, std::string_view path,
                                   bool required);

// A list of strings; empty when absent.
Result<std::vector<std::string>> ReadJsonStringList(const nlohmann::json& object, const char* key,
                                                    std::string_view path);

// An object of strings (labels, matchLabels); empty when absent.
Result<std::map<std::string, std::string>> ReadJsonStringMap(const nlohmann::json& object, const char* key,
                                                             std::string_view path);

// A list whose items are all objects: the list, or nullptr when absent.
Result<const nlohmann::json*> ReadJsonObjectList(const nlohmann::json& object, const char* key,
                                                 std::string_view path);

}  // namespace tessera
