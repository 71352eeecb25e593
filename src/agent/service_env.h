// The variables the kubelet gives a pod for the Services of its namespace
// (enableServiceLinks, on by default) and for the master Service
// default/kubernetes (always), as Docker links named them:
//   REDIS_PRIMARY_SERVICE_HOST=10.96.0.11      REDIS_PRIMARY_SERVICE_PORT=6379
//   REDIS_PRIMARY_SERVICE_PORT_<PORTNAME>=6379 (each named port)
//   REDIS_PRIMARY_PORT=tcp://10.96.0.11:6379   (the first port)
//   REDIS_PRIMARY_PORT_6379_TCP=tcp://10.96.0.11:6379, ..._PROTO=tcp, ..._PORT=6379, ..._ADDR=10.96.0.11
// A Service without a cluster IP (none yet, or headless "None") gives none.
// Names: the Service's upper-cased with '-' as '_'.
//
// Thread-safety: pure.
#pragma once

#include <span>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

namespace tessera {

// `services`: v1 Service objects (the pod's namespace's, and default/kubernetes);
// the variables in Kubernetes' order: by Service name, then as listed above.
std::vector<std::pair<std::string, std::string>> ServiceLinkVariables(std::span<const nlohmann::json> services);

// The pod with those variables added before its container's own (which win:
// a name the container sets is not added).
nlohmann::json WithServiceLinks(nlohmann::json pod, std::span<const nlohmann::json> services);

}  // namespace tessera
