#include "server/api/pod_exec.h"

#include <fmt/format.h>

#include "common/time_format.h"
#include "server/api/api_errors.h"
#include "server/object_json.h"

namespace tessera {

using nlohmann::json;

HttpResponse PodExecResponse(Store& store, const TokenIssuer& issuer, const std::string& ns, const std::string& name,
                             const HttpRequest& req, ProxyAnswered answered) {
  auto stored = store.Get(ObjectKey{"/Pod", ns, name});
  if (!stored) {
    return StatusResponse(404, "NotFound", fmt::format("pods \"{}\" not found", name), {{"name", name}, {"kind", "pods"}});
  }
  const json& pod = stored->object;
  const std::string phase = StringAt(pod, {"status", "phase"});
  if (phase == "Succeeded" || phase == "Failed") {
    return StatusResponse(400, "BadRequest",
                          fmt::format("cannot exec into a container in a completed pod; current phase is {}", phase));
  }
  const json& containers = ArrayAt(pod, {"spec", "containers"});
  const std::string first = !containers.empty() && containers[0].is_object() ? containers[0].value("name", "") : "";
  if (const std::string container = req.Query("container"); !container.empty() && container != first) {
    return StatusResponse(400, "BadRequest", fmt::format("container {} is not valid for pod {}", container, name));
  }
  const std::string node_name = StringAt(pod, {"spec", "nodeName"});
  if (phase != "Running" || node_name.empty()) {
    return StatusResponse(400, "BadRequest",
                          fmt::format("pod {} is not running yet (phase {}): exec waits for a running container", name,
                                      phase.empty() ? "Pending" : phase));
  }
  auto node = store.Get(ObjectKey{"/Node", "", node_name});
  std::string address;
  int64_t port = 0;
  if (node) {
    for (const json& a : ArrayAt(node->object, {"status", "addresses"})) {
      if (a.is_object() && a.value("type", "") == "InternalIP") address = a.value("address", "");
    }
    const json& endpoint = ObjectAt(node->object, {"status", "daemonEndpoints", "kubeletEndpoint"});
    port = endpoint.value("Port", int64_t{0});
  }
  if (address.empty() || port <= 0 || port > 65535) {
    return StatusResponse(400, "BadRequest",
                          fmt::format("node {} has no agent serving exec (no InternalIP address or "
                                      "daemonEndpoints.kubeletEndpoint.Port in its status)",
                                      node_name));
  }
  auto minted = issuer.IssueAgentCall(node_name, SystemNow());
  if (!minted) return ErrorResponse(minted.error());
  HttpRequest forwarded = req;
  forwarded.headers["authorization"] = "Bearer " + *minted;
  forwarded.headers.erase("cookie");
  const size_t q = req.target.find('?');
  std::string target = fmt::format("/exec/{}/{}/{}", ns, name, StringAt(pod, {"metadata", "uid"}));
  if (q != std::string::npos) target += req.target.substr(q);
  return ReverseProxy(forwarded, ProxyBackend{.host = address, .port = static_cast<uint16_t>(port)}, target, {},
                      std::move(answered));
}

}  // namespace tessera
