#include "server/api/request_info.h"

#include <algorithm>
#include <cctype>
#include <string_view>
#include <vector>

namespace tessera {
namespace {

std::vector<std::string_view> SplitPath(std::string_view path) {
  std::vector<std::string_view> out;
  while (!path.empty()) {
    if (path.front() == '/') {
      path.remove_prefix(1);
      continue;
    }
    const auto slash = path.find('/');
    out.push_back(path.substr(0, slash));
    if (slash == std::string_view::npos) break;
    path.remove_prefix(slash);
  }
  return out;
}

std::string Lower(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return s;
}

// NAME when the field selector is exactly metadata.name=NAME (or ==NAME).
std::string SingleNameSelected(std::string_view selector) {
  constexpr std::string_view kField = "metadata.name";
  if (!selector.starts_with(kField) || selector.find(',') != std::string_view::npos) return "";
  selector.remove_prefix(kField.size());
  if (selector.starts_with("==")) {
    selector.remove_prefix(2);
  } else if (selector.starts_with("=")) {
    selector.remove_prefix(1);
  } else {
    return "";
  }
  return std::string(selector);
}

}  // namespace

RbacAttributes RequestInfo::Attributes() const {
  return RbacAttributes{.verb = verb,
                        .resource_request = resource_request,
                        .api_group = api_group,
                        .resource = resource,
                        .subresource = subresource,
                        .ns = ns,
                        .name = name,
                        .path = path};
}

RequestInfo ParseRequestInfo(const HttpRequest& request) {
  RequestInfo info;
  info.path = request.path;
  info.verb = Lower(request.method);
  const auto parts = SplitPath(request.path);
  size_t i = 0;
  if (parts.size() >= 3 && parts[0] == "api") {
    info.api_version = std::string(parts[1]);
    i = 2;
  } else if (parts.size() >= 4 && parts[0] == "apis") {
    info.api_group = std::string(parts[1]);
    info.api_version = std::string(parts[2]);
    i = 3;
  } else {
    return info;  // /api, /apis, /apis/GROUP[/VERSION] (discovery) and every other path
  }
  info.resource_request = true;
  // namespaces/NAME/status and /finalize are a Namespace's own subresources.
  const bool namespace_subresource = parts.size() == i + 3 && parts[i] == "namespaces" &&
                                     (parts[i + 2] == "status" || parts[i + 2] == "finalize");
  if (i + 2 < parts.size() && parts[i] == "namespaces" && !namespace_subresource) {
    info.ns = std::string(parts[i + 1]);
    info.namespace_in_path = true;
    i += 2;
  }
  // Only the proxy subresource has a path of its own after it (kube-apiserver's
  // pods/NAME/proxy/PATH...), which is not part of what is asked about.
  const bool proxy = i + 2 < parts.size() && parts[i + 2] == "proxy";
  if (i + 3 < parts.size() && !proxy) return info;  // too long: no resource this API has
  info.resource = std::string(parts[i]);
  if (i + 1 < parts.size()) info.name = std::string(parts[i + 1]);
  if (i + 2 < parts.size()) info.subresource = std::string(parts[i + 2]);
  // A Namespace is asked about in its own namespace (as Kubernetes does it).
  if (info.resource == "namespaces" && info.ns.empty() && !info.name.empty()) info.ns = info.name;
  const std::string& method = request.method;
  if (method == "GET" || method == "HEAD") {
    const std::string watch = request.Query("watch");
    if (!info.name.empty()) {
      info.verb = "get";
    } else {
      info.verb = watch == "true" || watch == "1" ? "watch" : "list";
      // As kube-apiserver: a list or watch that can only ever hold one name
      // (fieldSelector=metadata.name=NAME, nothing else) is asked about that
      // name, so that a rule with resourceNames allows `kubectl get pod p1 -w`.
      info.name = SingleNameSelected(request.Query("fieldSelector"));
    }
  } else if (method == "POST") {
    info.verb = "create";
  } else if (method == "PUT") {
    info.verb = "update";
  } else if (method == "PATCH") {
    info.verb = "patch";
  } else if (method == "DELETE") {
    info.verb = info.name.empty() ? "deletecollection" : "delete";
  }
  // As kube-apiserver since 1.31 (AuthorizePodWebsocketUpgradeCreatePermission):
  // exec, attach and portforward run something in the pod, so the GET of their
  // WebSocket upgrade is asked about as create, as their POST is.
  if (info.resource == "pods" && (info.subresource == "exec" || info.subresource == "attach" ||
                                  info.subresource == "portforward") &&
      method == "GET") {
    info.verb = "create";
  }
  info.kind = FindKindByResource(info.api_group, info.api_version, info.resource);
  return info;
}

}  // namespace tessera
