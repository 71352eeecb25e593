#include "server/api/scale_subresource.h"

#include <fmt/format.h>

#include "api/object_fields.h"

namespace tessera {
namespace {

using nlohmann::json;

bool IsJob(const KindInfo& kind) { return kind.store_key == "batch/Job"; }

int64_t IntAt(const json& object, std::string_view path, int64_t fallback) {
  const json* v = Find(object, path);
  return v != nullptr && v->is_number_integer() ? v->get<int64_t>() : fallback;
}

}  // namespace

bool Scales(const KindInfo& kind) { return IsJob(kind) || kind.store_key == "tessera.dev/InferenceService"; }

json ScaleOf(const KindInfo& kind, const json& object) {
  const json& metadata = object.contains("metadata") ? object["metadata"] : json::object();
  json meta{{"name", metadata.value("name", "")}};
  for (const char* f : {"namespace", "uid", "resourceVersion", "creationTimestamp"}) {
    if (metadata.contains(f)) meta[f] = metadata[f];
  }
  const int64_t asked = IsJob(kind) ? IntAt(object, "spec.parallelism", 1) : IntAt(object, "spec.replicas", 1);
  const int64_t running = IsJob(kind) ? IntAt(object, "status.active", 0) : IntAt(object, "status.replicas", 0);
  return {{"kind", "Scale"},
          {"apiVersion", "autoscaling/v1"},
          {"metadata", std::move(meta)},
          {"spec", {{"replicas", asked}}},
          {"status", {{"replicas", running}}}};
}

Result<json> WithReplicas(const KindInfo& kind, json object, int64_t replicas) {
  if (IsJob(kind)) {
    object["spec"]["parallelism"] = replicas;
    return object;
  }
  if (Find(object, "spec.minReplicas") != nullptr || Find(object, "spec.maxReplicas") != nullptr) {
    return Err(Status::InvalidArgument(
        "spec.replicas: Forbidden: this InferenceService is autoscaled (spec.minReplicas/maxReplicas): change those "
        "instead of scaling it"));
  }
  object["spec"]["replicas"] = replicas;
  return object;
}

Result<int64_t> ReplicasAsked(const json& scale) {
  const json* replicas = Find(scale, "spec.replicas");
  if (replicas == nullptr || !replicas->is_number_integer() || replicas->get<int64_t>() < 0) {
    return Err(Status::InvalidArgument(fmt::format(
        "spec.replicas: Invalid value: {}: must be a whole number, 0 or more",
        replicas == nullptr ? std::string("(none)") : replicas->dump())));
  }
  return replicas->get<int64_t>();
}

}  // namespace tessera
