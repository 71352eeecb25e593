// GET /api/v1/namespaces/{ns}/pods/{name}/log[?follow=true&tailLines=N]: the
// server finds the pod's node and proxies the request to that node's agent
// (its InternalIP address and status.daemonEndpoints.kubeletEndpoint.Port, as
// the Kubernetes API server does with kubelets), presenting `agent_token`.
#pragma once

#include <string>

#include "http/http_server.h"
#include "store/store.h"

namespace tessera {

HttpResponse PodLogResponse(Store& store, const std::string& agent_token, const std::string& ns,
                            const std::string& name, const HttpRequest& req);

}  // namespace tessera
