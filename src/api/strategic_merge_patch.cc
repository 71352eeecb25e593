#include "api/strategic_merge_patch.h"

#include <fmt/format.h>

#include <algorithm>
#include <string>
#include <vector>

namespace tessera {
namespace {

using nlohmann::json;

constexpr std::string_view kPatch = "$patch";
constexpr std::string_view kRetainKeys = "$retainKeys";
constexpr std::string_view kSetElementOrder = "$setElementOrder/";
constexpr std::string_view kDeleteFromPrimitiveList = "$deleteFromPrimitiveList/";

// The field names from the document's root to here (list indices left out).
using Path = std::vector<std::string>;

bool InContainer(const Path& path) {
  if (path.size() < 2) return false;
  const std::string& list = path[path.size() - 2];
  return list == "containers" || list == "initContainers" || list == "ephemeralContainers";
}

std::optional<std::string> MergeKeyOf(const Path& path) {
  if (path.empty()) return std::nullopt;
  const std::string& field = path.back();
  if (field == "containers" || field == "initContainers" || field == "ephemeralContainers" || field == "volumes" ||
      field == "imagePullSecrets" || field == "env") {
    return "name";
  }
  if (field == "ports") return InContainer(path) ? "containerPort" : "port";
  if (field == "volumeMounts") return "mountPath";
  if (field == "volumeDevices") return "devicePath";
  if (field == "hostAliases") return "ip";
  if (field == "topologySpreadConstraints") return "topologyKey";
  if (field == "conditions" || field == "addresses") return "type";
  if (path.size() == 2 && path[0] == "metadata") {
    if (field == "ownerReferences") return "uid";
    if (field == "finalizers") return "";
  }
  return std::nullopt;
}

Status Malformed(const Path& path, std::string_view what) {
  std::string at;
  for (const std::string& p : path) at += (at.empty() ? "" : ".") + p;
  return Status::InvalidArgument(fmt::format("strategic merge patch: {}{}{}", at, at.empty() ? "" : ": ", what));
}

Result<json> MergeValue(const json& original, const json& patch, Path& path);

// The element of `list` whose `key` equals `value`, or end.
json::iterator FindByKey(json& list, const std::string& key, const json& value) {
  return std::find_if(list.begin(), list.end(),
                      [&](const json& e) { return e.is_object() && e.contains(key) && e[key] == value; });
}

Result<json> MergeList(const json& original, const json& patch, Path& path, const json* order,
                       const json* delete_values) {
  const std::optional<std::string> key = MergeKeyOf(path);
  if (!key) return patch;  // replaced whole
  json out = original.is_array() ? original : json::array();
  if (key->empty()) {  // a set of primitives
    for (const json& v : patch) {
      if (std::find(out.begin(), out.end(), v) == out.end()) out.push_back(v);
    }
    if (delete_values != nullptr) {
      for (const json& v : *delete_values) out.erase(std::remove(out.begin(), out.end(), v), out.end());
    }
    return out;
  }
  for (const json& element : patch) {
    if (!element.is_object()) return Err(Malformed(path, fmt::format("an element is not an object (merge key {})", *key)));
    if (auto d = element.find(kPatch); d != element.end() && *d == "replace") {
      json replaced = json::array();
      for (const json& e : patch) {
        if (!(e.is_object() && e.contains(kPatch))) replaced.push_back(e);
      }
      return replaced;
    }
    if (!element.contains(*key)) {
      return Err(Malformed(path, fmt::format("an element has no merge key \"{}\"", *key)));
    }
    auto at = FindByKey(out, *key, element[*key]);
    if (auto d = element.find(kPatch); d != element.end()) {
      if (*d != "delete") return Err(Malformed(path, fmt::format("unknown $patch \"{}\" in a list", d->dump())));
      if (at != out.end()) out.erase(at);
      continue;
    }
    if (at == out.end()) {
      ASSIGN_OR_RETURN(json added, MergeValue(json(), element, path));
      out.push_back(std::move(added));
    } else {
      ASSIGN_OR_RETURN(*at, MergeValue(*at, element, path));
    }
  }
  if (order != nullptr && order->is_array()) {
    // The patch's order first (the elements named in it), then the rest as they were.
    json sorted = json::array();
    for (const json& named : *order) {
      if (!named.is_object() || !named.contains(*key)) continue;
      auto at = FindByKey(out, *key, named[*key]);
      if (at != out.end()) {
        sorted.push_back(std::move(*at));
        out.erase(at);
      }
    }
    for (json& rest : out) sorted.push_back(std::move(rest));
    out = std::move(sorted);
  }
  return out;
}

Result<json> MergeMap(const json& original, const json& patch, Path& path) {
  if (auto d = patch.find(kPatch); d != patch.end()) {
    if (*d == "delete") return json();  // the caller drops it
    if (*d == "replace") {
      json replaced = patch;
      replaced.erase(std::string(kPatch));
      return replaced;
    }
    if (*d != "merge") return Err(Malformed(path, fmt::format("unknown $patch {}", d->dump())));
  }
  json out = original.is_object() ? original : json::object();
  if (auto retain = patch.find(kRetainKeys); retain != patch.end()) {
    if (!retain->is_array()) return Err(Malformed(path, "$retainKeys must be a list of field names"));
    for (auto it = out.begin(); it != out.end();) {
      if (std::find(retain->begin(), retain->end(), it.key()) == retain->end()) {
        it = out.erase(it);
      } else {
        ++it;
      }
    }
  }
  for (const auto& [name, value] : patch.items()) {
    if (name == kPatch || name == kRetainKeys || name.starts_with(kSetElementOrder) ||
        name.starts_with(kDeleteFromPrimitiveList)) {
      continue;
    }
    if (value.is_null()) {
      out.erase(name);
      continue;
    }
    path.push_back(name);
    const json* order = nullptr;
    const json* delete_values = nullptr;
    if (auto o = patch.find(std::string(kSetElementOrder) + name); o != patch.end()) order = &*o;
    if (auto d = patch.find(std::string(kDeleteFromPrimitiveList) + name); d != patch.end()) delete_values = &*d;
    const json current = out.contains(name) ? out[name] : json();
    Result<json> merged = value.is_array() ? MergeList(current, value, path, order, delete_values)
                                           : MergeValue(current, value, path);
    path.pop_back();
    if (!merged) return merged;
    if (value.is_object() && merged->is_null()) {
      out.erase(name);  // $patch: delete
    } else {
      out[name] = std::move(*merged);
    }
  }
  // A list named only in a directive: its deletions still apply.
  for (const auto& [name, value] : patch.items()) {
    if (!name.starts_with(kDeleteFromPrimitiveList)) continue;
    const std::string list = name.substr(kDeleteFromPrimitiveList.size());
    if (patch.contains(list) || !out.contains(list) || !out[list].is_array()) continue;
    for (const json& v : value) out[list].erase(std::remove(out[list].begin(), out[list].end(), v), out[list].end());
  }
  return out;
}

Result<json> MergeValue(const json& original, const json& patch, Path& path) {
  if (patch.is_object()) return MergeMap(original, patch, path);
  return patch;
}

}  // namespace

std::optional<std::string> ListMergeKey(const std::vector<std::string>& field_names) { return MergeKeyOf(field_names); }

bool TakesStrategicMergePatch(const KindInfo& kind) {
  for (std::string_view crd_group : {"kueue.x-k8s.io", "batch.volcano.sh", "tessera.dev"}) {
    if (kind.group == crd_group) return false;
  }
  return true;
}

Result<json> StrategicMergePatch(const json& original, const json& patch) {
  if (!patch.is_object()) {
    return Err(Status::InvalidArgument("a strategic merge patch is a JSON object (the fields to change)"));
  }
  Path path;
  return MergeMap(original, patch, path);
}

}  // namespace tessera
