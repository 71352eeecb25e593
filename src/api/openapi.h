// OpenAPI v3 documents of the served kinds, as kube-apiserver serves them at
// /openapi/v3 (the index of group versions) and /openapi/v3/apis/{g}/{v}
// (/openapi/v3/api/v1 for the core group): one component schema per kind,
// generated from the same schema that validates it (api/schema.h, the kind's
// definition), its fields' descriptions included, so that `kubectl explain
// clusterqueue.spec.resourceGroups` prints them; and the kind's paths, whose
// writes take the fieldValidation parameter, which tells kubectl that the
// server validates fields itself (kubectl apply then sends
// fieldValidation=Strict and leaves validation to it).
//
// Schema names follow Kubernetes' (io.k8s.api.core.v1.Pod,
// io.k8s.api.batch.v1.Job) and, for the CRD groups, the reversed group
// (io.x-k8s.kueue.v1beta1.ClusterQueue, dev.tessera.v1.Notebook).
//
// Thread-safety: pure; the documents are built once.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

namespace tessera {

// {"paths": {"api/v1": {"serverRelativeURL": "/openapi/v3/api/v1?hash=..."}, ...}}.
const std::string& OpenApiIndex();
// The document of one group version, by its path below /openapi/v3/ ("api/v1",
// "apis/batch/v1"); nullptr when none is served.
const std::string* OpenApiDocument(std::string_view group_version_path);

// The hash the index's serverRelativeURL gives that document ("" when none).
std::string OpenApiHash(std::string_view group_version_path);

// The component name of a kind's schema ("io.k8s.api.batch.v1.Job").
std::string OpenApiSchemaName(std::string_view group, std::string_view version, std::string_view kind);

}  // namespace tessera
