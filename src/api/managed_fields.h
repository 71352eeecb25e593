// Field ownership and server-side apply (application/apply-patch+yaml), as
// kube-apiserver keeps them: metadata.managedFields lists, per manager
// (kubectl, a controller, a script's fieldManager) and operation (Apply or
// Update), the fields it set, in the fieldsV1 form ({"f:spec": {"f:replicas":
// {}}}, list elements by merge key as "k:{\"name\":\"main\"}").
//
// An apply sends the manager's whole intent. Fields another manager owns and
// the apply sets to another value are conflicts: refused (409, each field and
// its manager named), unless forced, which takes them over. Fields the manager
// applied before and leaves out now are removed, unless someone else owns them.
// Any other write (create, update, patch) gives its manager the fields it
// changed and takes them from the others.
//
// Lists merge by the merge keys of api/strategic_merge_patch.h (containers by
// name, ...); other lists are one field, owned and replaced whole. status,
// metadata.managedFields, resourceVersion and the other server-set metadata are
// never owned.
//
// Thread-safety: pure functions.
#pragma once

#include <set>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "common/result.h"

namespace tessera {

// One field: the steps from the root ("f:spec", "f:containers",
// "k:{\"name\":\"main\"}", "f:image").
using FieldPath = std::vector<std::string>;
using FieldSet = std::set<FieldPath>;

// The fields `object` sets: its leaves, and each list without a merge key as
// one field.
FieldSet FieldsOf(const nlohmann::json& object);
// fieldsV1 JSON, and back (what cannot be read is left out).
nlohmann::json ToFieldsV1(const FieldSet& fields);
FieldSet FromFieldsV1(const nlohmann::json& fields_v1);
// ".spec.containers[name=\"main\"].image", as the apiserver names a field in a conflict.
std::string FieldPathText(const FieldPath& path);

struct ApplyRequest {
  std::string manager;  // ?fieldManager=, required
  bool force = false;   // ?force=true
  std::string api_version;
  std::string now;      // RFC 3339, for the managedFields entry's time
  bool status = false;  // an apply to /status: the intent's status is applied
};

struct ApplyConflict {
  std::string manager;
  std::string api_version;
  FieldPath field;
};

struct ApplyOutcome {
  nlohmann::json object;                // the object to store, managedFields updated
  std::vector<ApplyConflict> conflicts;  // when not empty, nothing is to be stored
};

// `applied` (the manager's intent: apiVersion, kind, metadata.name and the
// fields it manages) applied to `current` (null: it does not exist yet).
Result<ApplyOutcome> ServerSideApply(const nlohmann::json& current, const nlohmann::json& applied,
                                     const ApplyRequest& request);

// The message and Status.details.causes of a refused apply, in kube-apiserver's words:
// `Apply failed with 1 conflict: conflict with "kubectl-client-side-apply" using v1: .data.a`.
std::string ConflictMessage(const std::vector<ApplyConflict>& conflicts);
nlohmann::json ConflictCauses(const std::vector<ApplyConflict>& conflicts);

// After a write that is not an apply (create, update, patch) by `manager`:
// `next` with its managedFields giving `manager` (operation Update) the fields
// that differ from `previous` (null for a create) and taking them from the others.
nlohmann::json RecordUpdate(const nlohmann::json& previous, nlohmann::json next, std::string_view manager,
                            std::string_view api_version, std::string_view now);

// The manager a write is recorded under: ?fieldManager= when given, else the
// User-Agent's product ("kubectl-edit/v1.32.0 (linux/amd64)" -> "kubectl-edit"), else "unknown".
std::string ManagerOf(std::string_view field_manager, std::string_view user_agent);

}  // namespace tessera
