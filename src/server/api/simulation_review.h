// POST /apis/tessera.dev/v1/simulationreviews: what if the platform's recorded
// history had run on a changed cluster or policy? Answered, never stored, as
// kube-apiserver answers its reviews (docs/simulator.md "What if: the
// platform's own history"). Cluster-scoped and granted by no default role: it
// reads every team's history, so cluster-admin asks it (the portal's What-if).
//
//   apiVersion: tessera.dev/v1
//   kind: SimulationReview
//   spec: {since: 7d, scenarios: [{name: more-h100, addNodes: 2x8xH100-80GB}]}
//
// The spec is checked by the kind's schema, then sim/what_if.h replays the
// period from the store's Workloads and UsageRecords on its Nodes and policy
// (ResourceFlavors, ClusterQueues, LocalQueues, PriorityClasses, Namespaces,
// ResourceQuotas) and on each scenario; the answer is the review with status.
//
// Thread-safety: reads `store` (thread-safe) and replays on the calling
// thread, which is not an I/O thread: the API handler answers these from a
// worker of their own, one at a time (seconds of CPU for weeks of a busy fleet).
#pragma once

#include <string_view>

#include "common/time.h"
#include "http/http_server.h"
#include "api/kinds.h"
#include "store/store.h"

namespace tessera {

// `kind`: SimulationReview's, to check the body against.
HttpResponse AnswerSimulationReview(Store& store, const KindInfo& kind, const HttpRequest& http,
                                    std::string_view now_text, Timestamp now);

}  // namespace tessera
