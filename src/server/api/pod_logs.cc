#include "server/api/pod_logs.h"

#include <fmt/format.h>

#include <thread>
#include <vector>

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

// One instance of a pod name: the live Pod, or a record of the Workload's
// status.podHistory (controllers/pod_history_controller.h).
struct Instance {
  std::string uid;
  std::string node;
  bool ended = false;  // a record: nothing more will be written
};

// The records of pod `name` in its Workload's status.podHistory, oldest first.
// The Workload is the live Pod's (its label), else one whose name, with a
// dash, begins the pod's (<workload>-<podset>-<index>).
std::vector<json> HistoryOf(Store& store, const std::string& ns, const std::string& name, const json* live) {
  std::vector<StoredObject> workloads;
  if (live != nullptr) {
    const std::string wl = StringAt(*live, {"metadata", "labels", "tessera.dev/workload"});
    if (wl.empty()) return {};
    if (auto w = store.Get(ObjectKey{"kueue.x-k8s.io/Workload", ns, wl})) workloads.push_back(std::move(*w));
  } else if (auto list = store.List("kueue.x-k8s.io/Workload", ns)) {
    for (StoredObject& w : list->items) {
      const std::string wl = StringAt(w.object, {"metadata", "name"});
      if (name.size() > wl.size() + 1 && name.starts_with(wl) && name[wl.size()] == '-') workloads.push_back(std::move(w));
    }
  }
  std::vector<json> out;
  for (const StoredObject& w : workloads) {
    for (const json& r : ArrayAt(w.object, {"status", "podHistory"})) {
      if (r.is_object() && r.value("name", "") == name && !r.value("uid", "").empty()) out.push_back(r);
    }
  }
  return out;
}

HttpResponse NotFound(const std::string& name) {
  return StatusResponse(404, "NotFound", fmt::format("pods \"{}\" not found", name), {{"name", name}, {"kind", "pods"}});
}

}  // namespace

HttpResponse PodLogResponse(Store& store, const TokenIssuer& issuer, const std::string& ns, const std::string& name,
                            const HttpRequest& req) {
  auto pod = store.Get(ObjectKey{"/Pod", ns, name});
  const json* live = pod ? &pod->object : nullptr;
  const std::string previous_text = req.Query("previous");
  if (!previous_text.empty() && previous_text != "true" && previous_text != "false") {
    return StatusResponse(400, "BadRequest", fmt::format("previous: invalid value \"{}\": true or false", previous_text));
  }
  const bool previous = previous_text == "true";
  const std::vector<json> history = HistoryOf(store, ns, name, live);
  if (live == nullptr && history.empty()) return NotFound(name);
  Instance target;
  if (!previous && live != nullptr) {
    target = Instance{.uid = StringAt(*live, {"metadata", "uid"}), .node = StringAt(*live, {"spec", "nodeName"})};
    if (target.node.empty()) {
      return StatusResponse(400, "BadRequest", fmt::format("pod {} is not on a node yet: it has no logs", name));
    }
  } else {
    // The current instance is the live Pod, else the newest record (a deleted
    // pod's logs); `previous` asks for the newest one before it.
    const std::string current = live != nullptr ? StringAt(*live, {"metadata", "uid"}) : history.back().value("uid", "");
    const json* chosen = nullptr;
    for (auto it = history.rbegin(); it != history.rend() && chosen == nullptr; ++it) {
      if (!previous || it->value("uid", "") != current) chosen = &*it;
    }
    if (chosen == nullptr) {
      std::string container = history.empty() ? "" : history.back().value("containerName", "");
      if (live != nullptr) {
        const json& containers = ArrayAt(*live, {"spec", "containers"});
        if (!containers.empty() && containers[0].is_object()) container = containers[0].value("name", container);
      }
      return StatusResponse(400, "BadRequest",
                            fmt::format("previous terminated container \"{}\" in pod \"{}\" not found",
                                        container.empty() ? name : container, name));
    }
    target = Instance{.uid = chosen->value("uid", ""), .node = chosen->value("nodeName", ""), .ended = true};
  }
  const std::string& node_name = target.node;
  auto node = store.Get(ObjectKey{"/Node", "", node_name});
  if (!node && target.ended) {
    return StatusResponse(404, "NotFound",
                          fmt::format("the logs of pod {} (uid {}) were kept on node {}, which is gone (no Node {})",
                                      name, target.uid, node_name, node_name));
  }
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
  std::string target_path = fmt::format("/logs/{}/{}/{}", ns, name, target.uid);
  std::string query;
  if (const std::string tail = req.Query("tailLines"); !tail.empty()) query += "tailLines=" + tail;
  // An ended instance has all its output written: following it returns what is there.
  const bool follow = req.Query("follow") == "true" && !target.ended;
  if (follow) query += std::string(query.empty() ? "" : "&") + "follow=true";
  if (!query.empty()) target_path += "?" + query;
  const std::string url = fmt::format("http://{}:{}", address, port);
  auto minted = issuer.IssueAgentCall(node_name, SystemNow());
  if (!minted) return ErrorResponse(minted.error());
  const std::string agent_token = std::move(*minted);

  if (!follow) {
    ApiClient agent(url, agent_token);
    auto r = agent.Request("GET", target_path);
    if (!r) return StatusResponse(502, "ServiceUnavailable", fmt::format("the agent of node {}, which keeps the logs of pod {}, cannot be reached: {}", node_name, name, r.error().message()));
    if (r->status == 404 && target.ended) {
      return StatusResponse(404, "NotFound",
                            fmt::format("the logs of pod {} (uid {}) are no longer kept on node {} (its agent keeps "
                                        "an ended pod's logs for its --log-retention)",
                                        name, target.uid, node_name));
    }
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
  resp.stream = [url, agent_token, target = target_path](std::shared_ptr<StreamSink> sink) {
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
