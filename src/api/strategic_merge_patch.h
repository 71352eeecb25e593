// Strategic merge patch (application/strategic-merge-patch+json), as
// kube-apiserver applies it to the built-in kinds: a JSON merge patch, except
// that lists of objects with a merge key (containers and volumes by name, env
// by name, ports by containerPort, conditions by type, ...) merge element by
// element instead of being replaced, primitive lists with the merge strategy
// (finalizers) are unions, and these directives are obeyed:
//
//   $patch: replace | delete | merge   in a map: replace it, delete it, merge (the default);
//                                      in a list element: delete that element, or
//                                      {$patch: replace} to replace the whole list
//   $retainKeys: [a, b]                in a map: keep only these keys of the original
//   $setElementOrder/<list>: [...]     the order of a merged list's elements
//   $deleteFromPrimitiveList/<list>    values to remove from a merged primitive list
//
// The merge keys are those of Kubernetes' Go types (the patchMergeKey tags),
// for the fields the built-in kinds Tessera serves have; a list without one is
// replaced whole, as there. Kinds of CRD groups (Kueue, Volcano, tessera.dev)
// do not take it, as the apiserver refuses it for custom resources.
//
// Thread-safety: pure functions.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "api/kinds.h"
#include "common/result.h"

namespace tessera {

// How the list at a path merges (`field_names`: the fields from the root to
// it, list positions left out, {"spec", "template", "spec", "containers"}): its
// merge key ("name"), "" for a list of scalars merged as a set (finalizers),
// nullopt for a list that is replaced whole. Server-side apply uses the same.
std::optional<std::string> ListMergeKey(const std::vector<std::string>& field_names);

// True when `kind` takes strategic merge patches (a built-in Kubernetes kind).
bool TakesStrategicMergePatch(const KindInfo& kind);

// `original` with `patch` applied; InvalidArgument for a patch that is not an
// object or a directive that is malformed.
Result<nlohmann::json> StrategicMergePatch(const nlohmann::json& original, const nlohmann::json& patch);

}  // namespace tessera
