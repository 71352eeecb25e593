// The pods/exec subresource, as kube-apiserver serves it to `kubectl exec`:
//
//   GET|POST /api/v1/namespaces/NS/pods/NAME/exec?command=...&stdin=true&stdout=true&stderr=true&tty=false[&container=C]
//
// a WebSocket upgrade (v5.channel.k8s.io, v4.channel.k8s.io) that the server
// relays, both ways, to the agent of the pod's node (its InternalIP and
// status.daemonEndpoints.kubeletEndpoint.Port, as for logs: pod_logs.h), at
// /exec/NS/NAME/UID (src/agent/exec_server.h). The caller's credentials stay
// here: the agent gets a short-lived token the server signs for that node
// alone (TokenIssuer::IssueAgentCall). RBAC asks for `create` on pods/exec
// (request_info.cc; the edit and admin roles hold it, view does not).
//
// A pod that is not running, or a container it does not have: 400 in
// Kubernetes' words; an agent that cannot be reached: 503 (reverse_proxy.h).
#pragma once

#include <string>

#include "auth/service_account_tokens.h"
#include "http/http_server.h"
#include "http/reverse_proxy.h"
#include "store/store.h"

namespace tessera {

HttpResponse PodExecResponse(Store& store, const TokenIssuer& issuer, const std::string& ns, const std::string& name,
                             const HttpRequest& req, ProxyAnswered answered);

}  // namespace tessera
