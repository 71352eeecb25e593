#include "server/api/node_authorizer.h"

#include <fmt/format.h>

namespace tessera {
namespace {

bool OneOf(std::string_view verb, std::initializer_list<std::string_view> verbs) {
  for (std::string_view v : verbs) {
    if (verb == v) return true;
  }
  return false;
}

}  // namespace

NodeDecision AuthorizeNode(std::string_view node, const RequestInfo& r, const NodeRequestFacts& facts) {
  if (!r.resource_request || r.kind == nullptr) return NodeDecision::kNoOpinion;
  const std::string_view kind = r.kind->store_key;
  const std::string_view named = r.verb == "create" ? facts.body_name : std::string_view(r.name);
  if (kind == "/Node") {
    if (r.subresource.empty() && OneOf(r.verb, {"get", "list", "watch"})) return NodeDecision::kAllow;
    if ((r.subresource.empty() || r.subresource == "status") && OneOf(r.verb, {"get", "create", "update", "patch"}) &&
        named == node) {
      return NodeDecision::kAllow;
    }
    return NodeDecision::kNoOpinion;
  }
  if (kind == "coordination.k8s.io/Lease") {
    if (r.ns == kNodeLeaseNamespace && r.subresource.empty() &&
        OneOf(r.verb, {"get", "create", "update", "patch", "delete"}) && named == node) {
      return NodeDecision::kAllow;
    }
    return NodeDecision::kNoOpinion;
  }
  // The pod network's rules: namespaces' labels, policies, and Services with
  // their endpoints (what kube-proxy reads).
  if (kind == "/Namespace" || kind == "networking.k8s.io/NetworkPolicy" || kind == "/Service" ||
      kind == "discovery.k8s.io/EndpointSlice") {
    return OneOf(r.verb, {"get", "list", "watch"}) && r.subresource.empty() ? NodeDecision::kAllow
                                                                             : NodeDecision::kNoOpinion;
  }
  if (kind == "/Event") {
    return r.subresource.empty() && OneOf(r.verb, {"create", "update", "patch"}) ? NodeDecision::kAllow
                                                                                 : NodeDecision::kNoOpinion;
  }
  if (kind == "/Pod") {
    // Its own pods whole; every other pod as its network view (NodeSeesNetworkViewOnly).
    if (r.subresource.empty() && OneOf(r.verb, {"list", "watch"})) return NodeDecision::kAllow;
    if (r.subresource.empty() && OneOf(r.verb, {"get", "delete", "update", "patch"})) return NodeDecision::kAllowIfBound;
    if (r.subresource == "status" && OneOf(r.verb, {"get", "update", "patch"})) return NodeDecision::kAllowIfBound;
    return NodeDecision::kNoOpinion;
  }
  if (kind == "/ServiceAccount" && r.subresource == "token" && r.verb == "create") return NodeDecision::kAllowIfBound;
  // The pull secrets of its pods, as the Node authorizer's graph allows a kubelet.
  if (kind == "/Secret" && r.subresource.empty() && r.verb == "get") return NodeDecision::kAllowIfBound;
  // And the ConfigMaps and claims its pods name (env, envFrom, volumes).
  if ((kind == "/ConfigMap" || kind == "/PersistentVolumeClaim") && r.subresource.empty() && r.verb == "get") {
    return NodeDecision::kAllowIfBound;
  }
  return NodeDecision::kNoOpinion;
}

bool NodeSeesNetworkViewOnly(std::string_view node, const RequestInfo& r, std::string_view field_selector) {
  return r.kind != nullptr && r.kind->store_key == "/Pod" && OneOf(r.verb, {"list", "watch"}) &&
         field_selector != fmt::format("spec.nodeName={}", node);
}

nlohmann::json PodNetworkView(const nlohmann::json& pod) {
  using nlohmann::json;
  const auto field = [](const json& obj, const char* key) {
    const auto it = obj.is_object() ? obj.find(key) : obj.end();
    return it == obj.end() ? json() : *it;
  };
  json view{{"apiVersion", "v1"}, {"kind", "Pod"}};
  const json meta = field(pod, "metadata");
  json& m = view["metadata"] = json::object();
  for (const char* key : {"name", "namespace", "uid", "resourceVersion", "labels", "deletionTimestamp"}) {
    if (json v = field(meta, key); !v.is_null()) m[key] = std::move(v);
  }
  // A gang's rank (its rank 0's IP is the others' MASTER_ADDR); no other annotation.
  if (json rank = field(field(meta, "annotations"), "tessera.dev/rank"); rank.is_string()) {
    m["annotations"] = {{"tessera.dev/rank", std::move(rank)}};
  }
  const json spec = field(pod, "spec");
  json& s = view["spec"] = json::object();
  for (const char* key : {"nodeName", "hostNetwork"}) {
    if (json v = field(spec, key); !v.is_null()) s[key] = std::move(v);
  }
  json containers = json::array();
  if (const json list = field(spec, "containers"); list.is_array()) {
    for (const json& c : list) {
      json kept{{"name", field(c, "name")}};
      if (json ports = field(c, "ports"); ports.is_array()) kept["ports"] = std::move(ports);
      containers.push_back(std::move(kept));
    }
  }
  s["containers"] = std::move(containers);
  const json status = field(pod, "status");
  json& st = view["status"] = json::object();
  for (const char* key : {"phase", "podIP", "podIPs", "hostIP", "conditions"}) {
    if (json v = field(status, key); !v.is_null()) st[key] = std::move(v);
  }
  return view;
}

}  // namespace tessera
