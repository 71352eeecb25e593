#include "agent/notebook_activity.h"

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <set>

#include "auth/base64.h"
#include "common/node_annotations.h"
#include "client/api_client.h"
#include "common/time_format.h"

namespace tessera {

using nlohmann::json;

std::optional<NotebookPod> NotebookPodOf(const json& pod, const std::string& ip) {
  const json meta = pod.value("metadata", json::object());
  const json labels = meta.value("labels", json::object());
  if (!labels.is_object() || !labels.contains("tessera.dev/notebook") || ip.empty()) return std::nullopt;
  int64_t port = 8888;
  std::string base = "/";
  std::string token_secret;
  const json containers = pod.value("spec", json::object()).value("containers", json::array());
  for (const json& c : containers) {
    if (!c.is_object()) continue;
    for (const json& p : c.value("ports", json::array())) {
      if (p.is_object() && p.value("name", "") == "http" && p.value("containerPort", json()).is_number_integer()) {
        port = p["containerPort"].get<int64_t>();
      }
    }
    for (const json& e : c.value("env", json::array())) {
      if (e.is_object() && e.value("name", "") == "NOTEBOOK_BASE_URL" && e.value("value", json()).is_string()) {
        base = e["value"].get<std::string>();
      }
      if (e.is_object() && e.value("name", "") == "JUPYTER_TOKEN") {
        const json ref = e.value("valueFrom", json::object()).value("secretKeyRef", json::object());
        if (ref.is_object()) token_secret = ref.value("name", "");
      }
    }
  }
  if (base.empty() || base.front() != '/') base = "/" + base;
  if (base.back() != '/') base += '/';
  const json annotations = meta.value("annotations", json::object());
  NotebookPod out{.uid = meta.value("uid", ""),
                  .ns = meta.value("namespace", ""),
                  .name = meta.value("name", ""),
                  .url = fmt::format("http://{}:{}{}", ip, port, base),
                  .reported = annotations.is_object() ? annotations.value(std::string(kLastActivityAnnotation), "") : "",
                  .token_secret = token_secret};
  return out;
}

Result<Timestamp> KernelActivityFrom(const std::string& status_body, const std::string& kernels_body, Timestamp now) {
  const json status = json::parse(status_body, nullptr, false);
  if (!status.is_object() || !status.value("last_activity", json()).is_string()) {
    return Err(Status::InvalidArgument("not Jupyter's /api/status: no last_activity"));
  }
  auto last = ParseRfc3339(status["last_activity"].get<std::string>());
  if (!last) return Err(Status::InvalidArgument(fmt::format("last_activity: {}", last.error().message())));
  const json kernels = json::parse(kernels_body, nullptr, false);
  if (kernels.is_array()) {
    for (const json& k : kernels) {
      if (k.is_object() && k.value("execution_state", "") == "busy") return now;
    }
  }
  return *last;
}

void NotebookActivity::Poll(ApiClient& server, const std::vector<NotebookPod>& pods, Timestamp now) {
  std::set<std::string> seen;
  for (const NotebookPod& pod : pods) {
    seen.insert(pod.uid);
    ApiClient jupyter(pod.url.substr(0, pod.url.find('/', 7)), "", {}, kNotebookProbeTimeout);
    const std::string base = pod.url.substr(pod.url.find('/', 7));
    // Jupyter's own token (JUPYTER_TOKEN, from the notebook's Secret), read once a pod.
    std::string query;
    if (!pod.token_secret.empty()) {
      auto t = tokens_.find(pod.uid);
      if (t == tokens_.end()) {
        auto r = server.Request("GET", fmt::format("/api/v1/namespaces/{}/secrets/{}", pod.ns, pod.token_secret));
        const json secret = r && r->status == 200 ? json::parse(r->body, nullptr, false) : json();
        auto token = secret.is_object() ? DecodeBase64(secret.value("data", json::object()).value("token", ""))
                                        : std::nullopt;
        if (!token) continue;  // asked again at the next interval
        t = tokens_.emplace(pod.uid, *token).first;
      }
      query = "?token=" + t->second;  // to the pod's address on this node only
    }
    auto status = jupyter.Request("GET", base + "api/status" + query);
    if (!status || status->status != 200) continue;  // not (yet) Jupyter: judged by its GPUs
    auto kernels = jupyter.Request("GET", base + "api/kernels" + query);
    auto at = KernelActivityFrom(status->body, kernels && kernels->status == 200 ? kernels->body : "", now);
    if (!at) continue;
    const std::string text = FormatRfc3339(*at);
    auto it = reported_.find(pod.uid);
    if (text == pod.reported || (it != reported_.end() && it->second == text)) continue;
    const json patch{{"metadata", {{"annotations", {{std::string(kLastActivityAnnotation), text}}}}}};
    auto r = server.Request("PATCH", fmt::format("/api/v1/namespaces/{}/pods/{}", pod.ns, pod.name), patch.dump(),
                            "application/merge-patch+json");
    if (r && (r->status / 100 == 2 || r->status == 404)) {
      reported_[pod.uid] = text;
    } else {
      spdlog::warn("reporting the kernel activity of notebook pod {}/{}: {}", pod.ns, pod.name,
                   r ? fmt::format("HTTP {}: {}", r->status, r->body) : r.error().message());
    }
  }
  std::erase_if(reported_, [&](const auto& e) { return !seen.contains(e.first); });
  std::erase_if(tokens_, [&](const auto& e) { return !seen.contains(e.first); });
}

}  // namespace tessera
