// What kube-apiserver fills in on every write of a built-in kind (its
// defaulting), where clients read it: kubectl's describers dereference some of
// these fields (a Job's spec.parallelism) and would crash without them, and
// scripts that read them expect the value Kubernetes gives.
//
//   batch/v1 Job: spec.parallelism 1; spec.completions 1 when neither is
//   given (Kubernetes' rule: a Job with only parallelism is a work queue).
//   v1 Service: DefaultService (api/service.h), where its address is made.
//
// Applied by the server on create, update and patch, and by `tessera apply`
// to a manifest before it compares it with the live object, so that a
// manifest applied again is unchanged.
//
// Thread-safety: pure functions.
#pragma once

#include <nlohmann/json.hpp>

#include "api/kinds.h"

namespace tessera {

void DefaultObject(const KindInfo& kind, nlohmann::json& object);

}  // namespace tessera
