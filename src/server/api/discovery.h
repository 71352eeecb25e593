// API discovery, as kube-apiserver serves it, so that kubectl and client-go
// find every kind Tessera serves (Tessera's own included) before their first
// request: GET /version; /api (APIVersions) and /apis (APIGroupList), both
// also in the aggregated form kubectl asks for first (apidiscovery.k8s.io/v2
// APIGroupDiscoveryList, chosen by the Accept header); and /api/v1 and
// /apis/{group}/{version} (APIResourceList). Each resource carries its verbs,
// scope, kind, short names, categories and subresources, all read from the
// kind registry (api/kinds.h), so `kubectl get cq`, `kubectl get all` and
// `kubectl api-resources` work as on Kubernetes with Kueue installed.
//
// Thread-safety: pure functions; the documents are built once.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "api/kinds.h"
#include "http/http_server.h"

namespace tessera {

// A subresource a kind answers to, with the verbs discovery lists for it.
struct Subresource {
  std::string_view name;                // "status", "log"
  std::vector<std::string_view> verbs;  // "get", "patch", "update"
};

// Every subresource `kind` serves, in discovery's order.
const std::vector<Subresource>& SubresourcesOf(const KindInfo& kind);

// The verbs of the kind's collection and objects: a stored kind is read,
// watched and written; one only answered (a review) is only created.
std::vector<std::string_view> VerbsOf(const KindInfo& kind);

// The answer to a discovery request (GET of /version, /api, /apis, /api/v1,
// /apis/{group}[/{version}]); nullopt for any other path. `accept` is the
// request's Accept header.
std::optional<HttpResponse> DiscoveryResponse(std::string_view method, std::string_view path,
                                              std::string_view accept);

// The media type of the aggregated documents, as kubectl asks for it.
inline constexpr std::string_view kAggregatedDiscoveryV2 =
    "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList";

}  // namespace tessera
