#include "server/node_authorizer.h"

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
  if (kind == "/Namespace") return r.verb == "get" && r.subresource.empty() ? NodeDecision::kAllow : NodeDecision::kNoOpinion;
  if (kind == "/Event") {
    return r.subresource.empty() && OneOf(r.verb, {"create", "update", "patch"}) ? NodeDecision::kAllow
                                                                                 : NodeDecision::kNoOpinion;
  }
  if (kind == "/Pod") {
    if (r.subresource.empty() && OneOf(r.verb, {"list", "watch"})) {
      return facts.field_selector == fmt::format("spec.nodeName={}", node) ? NodeDecision::kAllow
                                                                          : NodeDecision::kNoOpinion;
    }
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

}  // namespace tessera
