// Validation of manifests against a schema per kind, as the API server's
// admission step (DESIGN.md sections 3 and 4).
//
// Each kind has a small table-driven schema (api/schema.h), declared in its
// definition (api/kind_definition.h, api/kinds/*.cc): field name -> type
// (string, enum, integer, boolean, quantity, object with nested fields, list of X,
// map of string -> X; "open" only where Kubernetes itself leaves a field open,
// such as volumes, affinity or securityContext). On top of the structure:
//   - apiVersion and kind must be the kind's own;
//   - metadata.name is required and follows the kind's NameRule (kinds.h);
//     metadata.namespace, when not empty, is a DNS-1123 label (on cluster-scoped
//     kinds it is accepted and means nothing, as in Kubernetes); label keys and
//     values and annotation keys follow Kubernetes' syntax;
//   - quantities parse exactly with the domain parsers (domain/quantity.h), with
//     the rule of the resource they measure: cpu in millis, memory and counts in
//     whole units, nvidia.com/gpu a fraction below one or a whole number;
//     negative amounts are refused;
//   - enum fields take only their listed values;
//   - a few cross-field rules Kubernetes, Kueue and Volcano also enforce (a Job's
//     pods restart OnFailure or Never; requests do not exceed limits; a Volcano
//     job's minAvailable fits its tasks; a ClusterQueue's flavor resources are
//     among its coveredResources, and borrowingLimit needs a cohort).
//   - `status` is accepted with any content and not checked: a client may send
//     back what it read, but status belongs to the server, which ignores it on
//     create (and writes it only through the status subresource).
//   - null is the same as an absent field (kubectl writes `creationTimestamp: null`).
//   - metadata.generateName is accepted but does not replace metadata.name.
//   - a container's image is optional: Tessera can run a command as a process.
//
// Errors are Status::InvalidArgument. The message starts with the field path,
// Kubernetes style, map keys in brackets:
//   "spec.tasks[0].template.spec.containers[0].resoures: unknown field; did you mean \"resources\"?"
//   "spec.resourceGroups[0].flavors[1].resources[0].nominalQuota: quantity \"1.5x\": unknown suffix ..."
//   "spec.containers[0].resources.limits[nvidia.com/gpu]: nvidia.com/gpu \"1.5\": a GPU request is ..."
// When an object has several problems they are all reported, separated by "; ".
//
// Thread-safety: the schemas are built once (thread-safe static initialisation)
// and immutable; every function is safe to call from any thread.
#pragma once

#include <string_view>

#include <vector>

#include <nlohmann/json.hpp>

#include "api/kinds.h"
#include "api/names.h"
#include "common/result.h"
#include "common/status.h"

namespace tessera {

// Checks `object` (one manifest, as JSON) against `kind`'s schema. OK or
// InvalidArgument with a message that starts with the field path.
Status ValidateObject(const KindInfo& kind, const nlohmann::json& object);
// The fields of `object` its kind's schema does not know, removed; their paths
// (fieldValidation=Ignore or Warn).
std::vector<std::string> PruneUnknownFields(const KindInfo& kind, nlohmann::json& object);

// What an update may not change, checked after ValidateObject(next): the
// kind's update rules (KindDefinition::update_rules), such as a RoleBinding's or
// ClusterRoleBinding's roleRef (as in Kubernetes: delete the binding and create
// it again), a Node's spec.podCIDR(s) once set (only "" may become a range), a
// Service's cluster IP, an immutable ConfigMap's or Secret's data. OK or
// InvalidArgument (the first rule that refuses).
Status ValidateUpdate(const KindInfo& kind, const nlohmann::json& stored, const nlohmann::json& next);

// Finds the kind from the object's apiVersion and kind, then validates it. The
// usual entry point for a manifest whose kind the caller does not know yet.
// Unknown kinds say what is served instead ("kind: Job is not served as
// batch/v2; use batch/v1 or batch.volcano.sh/v1alpha1").
Result<const KindInfo*> ValidateManifest(const nlohmann::json& object);

// The kind an object declares, without validating the rest. Errors name the
// field: "apiVersion: required", "kind: unknown kind \"Foo\" ...".
Result<const KindInfo*> ResolveKind(const nlohmann::json& object);

// An authentication.k8s.io/v1 TokenRequest (the body of a POST to
// serviceaccounts/NAME/token): apiVersion and kind, when present, are
// TokenRequest's; spec.audiences, spec.expirationSeconds, spec.boundObjectRef.
Status ValidateTokenRequest(const nlohmann::json& object);

// A tessera.dev/v1 TemplateRender (the body of a POST to templates/NAME/render,
// api/templates.h): spec.name and spec.namespace of the object to make, and
// spec.parameters, the values of the template's knobs.
Status ValidateTemplateRender(const nlohmann::json& object);

// Name rules, for names that arrive outside a manifest (URL paths, CLI
// arguments): ValidateName, ValidateLabelKey, ValidateLabelValue (api/names.h).

// The text of a quantity as a manifest gives it: a string as is, a JSON number
// in its shortest form (128 -> "128", 0.5 -> "0.5"). InvalidArgument for other
// types. Conversions to domain types use this so that they read numbers exactly
// as validation did.
Result<std::string> QuantityText(const nlohmann::json& value);

}  // namespace tessera
