// The scale subresource (autoscaling/v1 Scale), as `kubectl scale` reads and
// writes it: batch/v1 Jobs scale their parallelism, InferenceServices their
// replicas. GET .../NAME/scale answers the Scale; PUT (a Scale) or PATCH (a
// merge patch of one) sets spec.replicas, written to the object as any change
// is (validation, admission, the controller's reaction).
//
// Thread-safety: pure functions.
#pragma once

#include <nlohmann/json.hpp>

#include "api/kinds.h"
#include "common/result.h"

namespace tessera {

// True when `kind` has a scale subresource.
bool Scales(const KindInfo& kind);

// The object's Scale: spec.replicas (what is asked), status.replicas (what runs).
nlohmann::json ScaleOf(const KindInfo& kind, const nlohmann::json& object);

// `object` asked to run `replicas`; InvalidArgument, saying what to change
// instead, when the object cannot be scaled so (an autoscaled service).
Result<nlohmann::json> WithReplicas(const KindInfo& kind, nlohmann::json object, int64_t replicas);

// The replicas a Scale asks for (a PUT's body, or the current Scale with a
// PATCH's merge patch applied); InvalidArgument naming spec.replicas.
Result<int64_t> ReplicasAsked(const nlohmann::json& scale);

}  // namespace tessera
