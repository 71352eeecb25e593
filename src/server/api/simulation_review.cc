#include "server/api/simulation_review.h"

#include <fmt/format.h>

#include <string>
#include <vector>

#include "api/manifest.h"
#include "api/validation.h"
#include "server/api/api_errors.h"
#include "sim/what_if.h"

namespace tessera {

using nlohmann::json;

HttpResponse AnswerSimulationReview(Store& store, const KindInfo& kind, const HttpRequest& http,
                                    std::string_view now_text, Timestamp now) {
  auto parsed = ParseSingleObject(http.body);
  if (!parsed) return StatusResponse(400, "BadRequest", parsed.error().message());
  json review = std::move(*parsed);
  if (Status v = ValidateObject(kind, review); !v.ok()) return ErrorResponse(v);

  WhatIfInputs inputs{.now = now};
  // Every object of a store key, all namespaces, appended to `into`.
  auto load = [&](std::string_view key, std::vector<json>& into) -> Status {
    ASSIGN_OR_RETURN(ListResult list, store.List(key, ""));
    for (StoredObject& o : list.items) into.push_back(std::move(o.object));
    return Status::Ok();
  };
  Status loaded = load("/Node", inputs.nodes);
  for (std::string_view kind : {"kueue.x-k8s.io/ResourceFlavor", "kueue.x-k8s.io/ClusterQueue",
                                "kueue.x-k8s.io/LocalQueue", "scheduling.k8s.io/PriorityClass", "/Namespace",
                                "/ResourceQuota"}) {
    if (loaded.ok()) loaded = load(kind, inputs.policy);
  }
  if (loaded.ok()) loaded = load("tessera.dev/UsageRecord", inputs.usage_records);
  if (loaded.ok()) loaded = load("kueue.x-k8s.io/Workload", inputs.workloads);
  if (!loaded.ok()) return ErrorResponse(loaded);

  auto status = RunWhatIf(review["spec"], inputs);
  if (!status) return ErrorResponse(status.error());
  return ReviewAnswer(std::move(review), now_text, std::move(*status));
}

}  // namespace tessera
