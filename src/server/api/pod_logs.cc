#include "server/api/pod_logs.h"

#include <fmt/format.h>

#include <thread>

#include "client/api_client.h"
#include "common/time_format.h"
#include "server/api/api_errors.h"
#include "server/object_json.h"

namespace tessera {
namespace {

using nlohmann::json;

std::string InternalIp(const json& node) {
  for (const json& a : node.value("status", json::object()).value("addresses", json::array())) {
    if (a.value("type", "") == "InternalIP") return a.value("address", "");
  }
  return "";
}

}  // namespace

HttpResponse PodLogResponse(Store& store, const TokenIssuer& issuer, const std::string& ns, const std::string& name,
                            const HttpRequest& req) {
  auto pod = store.Get(ObjectKey{"/Pod", ns, name});
  if (!pod) return StatusResponse(404, "NotFound", fmt::format("pods \"{}\" not found", name), {{"name", name}, {"kind", "pods"}});
  const json& p = pod->object;
  const std::string node_name = p.value("spec", json::object()).value("nodeName", "");
  if (node_name.empty()) {
    return StatusResponse(400, "BadRequest", fmt::format("pod {} is not on a node yet: it has no logs", name));
  }
  auto node = store.Get(ObjectKey{"/Node", "", node_name});
  const json endpoints = node ? node->object.value("status", json::object()).value("daemonEndpoints", json::object())
                              : json::object();
  const int port = endpoints.value("kubeletEndpoint", json::object()).value("Port", 0);
  const std::string address = node ? InternalIp(node->object) : "";
  if (port <= 0 || address.empty()) {
    return StatusResponse(400, "BadRequest",
                          fmt::format("node {} has no agent serving logs (no InternalIP address or "
                                      "daemonEndpoints.kubeletEndpoint.Port in its status)",
                                      node_name));
  }
  std::string target = fmt::format("/logs/{}/{}/{}", ns, name, StringAt(p, {"metadata", "uid"}));
  std::string query;
  if (const std::string tail = req.Query("tailLines"); !tail.empty()) query += "tailLines=" + tail;
  const bool follow = req.Query("follow") == "true";
  if (follow) query += std::string(query.empty() ? "" : "&") + "follow=true";
  if (!query.empty()) target += "?" + query;
  const std::string url = fmt::format("http://{}:{}", address, port);
  auto minted = issuer.IssueAgentCall(node_name, SystemNow());
  if (!minted) return ErrorResponse(minted.error());
  const std::string agent_token = std::move(*minted);

  if (!follow) {
    ApiClient agent(url, agent_token);
    auto r = agent.Request("GET", target);
    if (!r) return StatusResponse(502, "ServiceUnavailable", fmt::format("the agent of node {}: {}", node_name, r.error().message()));
    if (r->status == 404) {
      return StatusResponse(400, "BadRequest", fmt::format("pod {} has not started on node {} yet", name, node_name));
    }
    if (r->status != 200) {
      return StatusResponse(502, "ServiceUnavailable", fmt::format("the agent of node {} answered {}: {}", node_name, r->status, r->body));
    }
    HttpResponse resp;
    resp.content_type = "text/plain; charset=utf-8";
    resp.body = std::move(r->body);
    return resp;
  }
  HttpResponse resp;
  resp.content_type = "text/plain; charset=utf-8";
  resp.stream = [url, agent_token, target](std::shared_ptr<StreamSink> sink) {
    // A follow lasts as long as the pod: its own thread, ended by the agent or the client.
    std::thread([url, agent_token, target, sink] {
      ApiClient agent(url, agent_token);
      (void)agent.Stream(target, [&](const std::string& line) { return sink->Write(line + "\n"); });
      sink->Close();
    }).detach();
  };
  return resp;
}

}  // namespace tessera
