// Reading API objects as the server returns them, tolerantly: a missing field, or
// one of an unexpected type, reads as absent or empty; nothing here throws.
// Paths are dotted field names ("status.admission.clusterQueue"); for keys that
// contain dots (labels, resource names) use Child().
//
// Thread-safety: pure functions.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

namespace tessera {

// obj[key] when obj is an object holding key; nullptr otherwise.
const nlohmann::json* Child(const nlohmann::json* obj, std::string_view key);
const nlohmann::json* Find(const nlohmann::json& obj, std::string_view dotted_path);

// The field as text: strings as they are, numbers and booleans as JSON writes
// them, anything else (absent, null, objects) as `fallback`.
std::string Text(const nlohmann::json* value, std::string_view fallback = "");
std::string TextAt(const nlohmann::json& obj, std::string_view dotted_path, std::string_view fallback = "");

std::string NameOf(const nlohmann::json& obj);
std::string NamespaceOf(const nlohmann::json& obj);

// The condition of `type` in obj.status.conditions; nullptr when absent.
const nlohmann::json* FindCondition(const nlohmann::json& obj, std::string_view type);

// A resource amount for people: GPUs as decimals ("0.25", "8"), CPU as
// Kubernetes writes it ("500m", "64"), bytes in their shortest exact form
// ("512Gi"); the text as it is when it does not parse.
std::string DisplayQuantity(std::string_view resource, const nlohmann::json& amount);
// The amount in the resource's unit (milli for GPU and CPU, else whole units),
// for sums and comparisons; 0 when absent or malformed.
int64_t QuantityValue(std::string_view resource, const nlohmann::json& amount);
std::string FormatQuantityValue(std::string_view resource, int64_t value);

// "k1=v1,k2=v2" for a string map (labels, nodeLabels); `none` when empty.
std::string JoinMap(const nlohmann::json* map, std::string_view none = "<none>");

}  // namespace tessera
