// GET /api/v1/namespaces/{ns}/pods/{name}/log[?follow=true&tailLines=N&previous=true]:
// the server finds the pod's node and proxies the request to that node's agent
// (its InternalIP address and status.daemonEndpoints.kubeletEndpoint.Port, as
// the Kubernetes API server does with kubelets). It presents a short-lived
// token of its own, signed by `issuer` for that node alone
// (TokenIssuer::IssueAgentCall), which the agent checks against the server's
// published keys: no user's token ever reaches an agent.
//
// Instances that are gone (a preempted or deleted pod of a Workload) are found
// in the Workload's status.podHistory (controllers/pod_history_controller.h):
// previous=true answers with the newest earlier instance of the name (400
// `previous terminated container "C" in pod "NAME" not found` when there is
// none); a name with no live pod, with its newest record. An ended instance is
// read, never followed. docs/api.md "Pod logs".
#pragma once

#include <string>

#include "auth/service_account_tokens.h"
#include "http/http_server.h"
#include "store/store.h"

namespace tessera {

HttpResponse PodLogResponse(Store& store, const TokenIssuer& issuer, const std::string& ns, const std::string& name,
                            const HttpRequest& req);

}  // namespace tessera
