// Pod Security Admission at the API server (auth/pod_security.h): a Pod, or
// anything holding pod templates (Jobs, Volcano Jobs, Workloads), whose pod
// specs do not meet the level its Namespace enforces is refused with 403
// Forbidden in Kubernetes' words, before anything is stored. Kubernetes
// only warns about templates; Tessera refuses them, so that a Job is not
// accepted whose pods could never be made.
//
// A Namespace's pod-security labels must name a level Kubernetes knows (422).
//
// On update, only when a pod spec changed (so that an agent's writes to a
// running pod go on after a namespace's level is raised; its next start is
// checked by the agent).
#pragma once

#include <optional>

#include <nlohmann/json.hpp>

#include "api/kinds.h"
#include "http/http_server.h"
#include "store/store.h"

namespace tessera {

std::optional<HttpResponse> PodSecurityAdmission(Store& store, const KindInfo& kind, const nlohmann::json& object,
                                                 const nlohmann::json* stored = nullptr);

}  // namespace tessera
