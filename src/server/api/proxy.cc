#include "server/api/proxy.h"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <memory>
#include <map>
#include <random>
#include <vector>

#include "auth/base64.h"
#include "server/api/api_errors.h"
#include "server/api/proxy_login.h"
#include "server/api/traffic_split.h"
#include "server/object_json.h"

namespace tessera {
namespace {

using nlohmann::json;

struct SchemeNamePort {
  std::string scheme, name, port;
};

// NAME, NAME:PORT or SCHEME:NAME:PORT (apimachinery's SplitSchemeNamePort).
std::optional<SchemeNamePort> SplitSchemeNamePort(std::string_view id) {
  std::vector<std::string> parts;
  size_t start = 0;
  while (true) {
    const auto colon = id.find(':', start);
    parts.emplace_back(id.substr(start, colon == std::string_view::npos ? std::string_view::npos : colon - start));
    if (colon == std::string_view::npos) break;
    start = colon + 1;
  }
  SchemeNamePort out;
  switch (parts.size()) {
    case 1: out.name = parts[0]; break;
    case 2: out.name = parts[0]; out.port = parts[1]; break;
    case 3: out.scheme = parts[0]; out.name = parts[1]; out.port = parts[2]; break;
    default: return std::nullopt;
  }
  if (out.name.empty() || (!out.scheme.empty() && out.scheme != "http" && out.scheme != "https")) return std::nullopt;
  return out;
}

// A port number 1-65535, or nullopt when `text` is not one.
std::optional<int> PortNumber(std::string_view text) {
  int n = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), n);
  if (text.empty() || ec != std::errc() || end != text.data() + text.size()) return std::nullopt;
  return n;
}

HttpResponse Unavailable(std::string message) { return StatusResponse(503, "ServiceUnavailable", message); }

std::variant<ProxyBackend, HttpResponse> PodBackend(Store& store, const RequestInfo& info, const SchemeNamePort& id) {
  auto got = store.Get(ObjectKey{"/Pod", info.ns, id.name});
  if (!got) return ObjectErrorResponse(got.error(), *info.kind, id.name);
  const json& pod = got->object;
  const std::string phase = StringAt(pod, {"status", "phase"});
  if (phase == "Succeeded" || phase == "Failed") {
    return Unavailable(fmt::format("pod \"{}\" is not running: it has {}", id.name, phase == "Failed" ? "failed" : "completed"));
  }
  const std::string ip = StringAt(pod, {"status", "podIP"});
  if (ip.empty()) {
    return Unavailable(fmt::format("pod \"{}\" has no IP address yet (phase {}): it is not running; see tessera describe pod {}",
                                   id.name, phase.empty() ? "Pending" : phase, id.name));
  }
  int port = 0;
  if (id.port.empty()) {
    port = 80;
    for (const json& c : ArrayAt(pod, {"spec", "containers"})) {
      const json& ports = ArrayAt(c, {"ports"});
      if (!ports.empty()) {
        port = ports.front().value("containerPort", 80);
        break;
      }
    }
  } else if (auto n = PortNumber(id.port)) {
    port = *n;
  } else {
    for (const json& c : ArrayAt(pod, {"spec", "containers"})) {
      for (const json& p : ArrayAt(c, {"ports"})) {
        if (p.value("name", "") == id.port) port = p.value("containerPort", 0);
      }
      if (port != 0) break;
    }
    if (port == 0) {
      return StatusResponse(400, "BadRequest",
                            fmt::format("pod \"{}\" has no container port named \"{}\": give a port number or one of "
                                        "spec.containers[].ports[].name",
                                        id.name, id.port));
    }
  }
  if (port < 1 || port > 65535) {
    return StatusResponse(400, "BadRequest", fmt::format("invalid port {} in pod request \"{}\": give 1-65535", port, info.name));
  }
  return ProxyBackend{.host = ip, .port = static_cast<uint16_t>(port)};
}

std::variant<ProxyBackend, HttpResponse> ServiceBackend(Store& store, const RequestInfo& info, const SchemeNamePort& id) {
  auto got = store.Get(ObjectKey{"/Service", info.ns, id.name});
  if (!got) return ObjectErrorResponse(got.error(), *info.kind, id.name);
  // Which of the Service's ports: its name is the EndpointSlices' port name.
  std::string port_name = id.port;
  const json& ports = ArrayAt(got->object, {"spec", "ports"});
  if (auto n = PortNumber(id.port)) {
    bool found = false;
    for (const json& p : ports) {
      if (p.value("port", 0) == *n) {
        port_name = p.value("name", "");
        found = true;
        break;
      }
    }
    if (!found) return Unavailable(fmt::format("no service port {} found for service \"{}\"", *n, id.name));
  } else {
    bool found = false;
    for (const json& p : ports) found = found || p.value("name", "") == port_name;
    if (!found) {
      return Unavailable(port_name.empty()
                             ? fmt::format("service \"{}\" has no unnamed port: name one of its ports, services/{}:PORT",
                                           id.name, id.name)
                             : fmt::format("no service port named \"{}\" found for service \"{}\"", port_name, id.name));
    }
  }
  auto slices = store.List("discovery.k8s.io/EndpointSlice", info.ns);
  if (!slices) return ErrorResponse(slices.error());
  // With a traffic split (traffic_split.h), the endpoints of the Services it
  // names, else the Service's own; the split's Service by weight, then one of
  // its ready endpoints at random.
  const TrafficWeights split = TrafficSplitOf(got->object);
  auto wanted = [&](const std::string& service) {
    if (service == id.name) return true;
    return std::any_of(split.begin(), split.end(), [&](const auto& w) { return w.first == service; });
  };
  std::map<std::string, std::vector<ProxyBackend>> ready_of;
  for (const StoredObject& slice : slices->items) {
    const json& s = slice.object;
    const std::string service = StringAt(s, {"metadata", "labels", "kubernetes.io/service-name"});
    if (!wanted(service)) continue;
    if (s.value("addressType", "IPv4") != "IPv4") continue;
    int port = 0;
    for (const json& p : ArrayAt(s, {"ports"})) {
      if (p.is_object() && p.value("name", "") == port_name) port = p.value("port", 0);
    }
    if (port < 1 || port > 65535) continue;
    for (const json& e : ArrayAt(s, {"endpoints"})) {
      if (!e.is_object()) continue;
      // An unknown readiness counts as ready (discovery.k8s.io/v1).
      const json& conditions = ObjectAt(e, {"conditions"});
      if (!conditions.value("ready", true)) continue;
      const json& addresses = ArrayAt(e, {"addresses"});
      if (addresses.empty() || !addresses.front().is_string()) continue;
      ready_of[service].push_back(
          ProxyBackend{.host = addresses.front().get<std::string>(), .port = static_cast<uint16_t>(port)});
    }
  }
  thread_local std::minstd_rand random{std::random_device{}()};
  std::string chosen = id.name;
  if (!split.empty()) {
    auto picked = PickByWeight(split, [&](const std::string& s) { return ready_of.contains(s); }, random());
    if (picked) chosen = *picked;
  }
  const std::vector<ProxyBackend>& ready = ready_of[chosen];
  if (ready.empty()) return Unavailable(fmt::format("no endpoints available for service \"{}\"", id.name));
  return ready[std::uniform_int_distribution<size_t>(0, ready.size() - 1)(random)];
}

}  // namespace

std::variant<ProxyBackend, HttpResponse> ResolveProxyBackend(Store& store, const RequestInfo& info) {
  const bool pod = info.kind != nullptr && info.kind->store_key == "/Pod";
  auto id = SplitSchemeNamePort(info.name);
  if (!id) {
    return StatusResponse(400, "BadRequest",
                          fmt::format("invalid {} request \"{}\": name it NAME, NAME:PORT or http:NAME:PORT",
                                      pod ? "pod" : "service", info.name));
  }
  if (id->scheme == "https") {
    return StatusResponse(400, "BadRequest",
                          fmt::format("https:{}:{}: this server proxies to pods and services in plain HTTP only; drop "
                                      "the https: scheme",
                                      id->name, id->port));
  }
  return pod ? PodBackend(store, info, *id) : ServiceBackend(store, info, *id);
}

std::string ProxiedTarget(const HttpRequest& request) {
  const std::string_view target = request.target.empty() ? std::string_view(request.path) : std::string_view(request.target);
  const auto q = target.find('?');
  const std::string_view path = target.substr(0, q);
  const std::string_view query = q == std::string_view::npos ? std::string_view() : target.substr(q);
  // Past /api/v1/namespaces/NS/{pods,services}/NAME/proxy: seven segments
  // (empty ones skipped, as the request's parsing skips them).
  size_t pos = 0;
  for (int segment = 0; segment < 7 && pos < path.size();) {
    while (pos < path.size() && path[pos] == '/') ++pos;
    if (pos == path.size()) break;
    const auto slash = path.find('/', pos);
    pos = slash == std::string_view::npos ? path.size() : slash;
    ++segment;
  }
  std::string rest(path.substr(pos));
  if (rest.empty()) rest = "/";
  return rest + std::string(query);
}

ProxyForwarding ForwardingFor(Store& store, const RequestInfo& info) {
  ProxyForwarding out;
  if (info.kind == nullptr || info.kind->store_key != "/Service") return out;
  const auto id = SplitSchemeNamePort(info.name);
  if (!id) return out;
  auto got = store.Get(ObjectKey{"/Service", info.ns, id->name});
  if (!got) return out;
  out.keep_path = StringAt(got->object, {"metadata", "annotations", kProxyKeepPathAnnotation}) == "true";
  const std::string secret = StringAt(got->object, {"metadata", "annotations", kProxyTokenSecretAnnotation});
  if (!secret.empty()) {
    auto s = store.Get(ObjectKey{"/Secret", info.ns, secret});
    auto token = s ? DecodeBase64(StringAt(s->object, {"data", "token"})) : std::nullopt;
    if (token && !token->empty()) out.authorization = "token " + *token;
  }
  return out;
}

HttpResponse ForwardToBackend(ProxyBackend backend, const HttpRequest& request, const ProxyForwarding& how,
                              ProxyAnswered answered) {
  auto target = [keep = how.keep_path](const HttpRequest& r) {
    return keep ? (r.target.empty() ? r.path : r.target) : ProxiedTarget(r);
  };
  const std::string cookie = request.Header("cookie");
  if (SessionCookies(cookie).empty() && how.authorization.empty()) {
    return ReverseProxy(request, std::move(backend), target(request), {"authorization"}, std::move(answered));
  }
  // The pod's own cookies (Jupyter's _xsrf) go on; this server's session does not.
  HttpRequest stripped = request;
  const std::string rest = WithoutSessionCookies(cookie);
  if (rest.empty()) {
    stripped.headers.erase("cookie");
  } else {
    stripped.headers["cookie"] = rest;
  }
  if (how.authorization.empty()) {
    return ReverseProxy(stripped, std::move(backend), target(stripped), {"authorization"}, std::move(answered));
  }
  // The backend's own credential in place of the caller's.
  stripped.headers["authorization"] = how.authorization;
  return ReverseProxy(stripped, std::move(backend), target(stripped), {}, std::move(answered));
}

HttpResponse ProxyResponse(Store& store, const RequestInfo& info, const HttpRequest& request, ProxyAnswered answered,
                           ServiceTraffic* traffic) {
  const bool service = info.kind != nullptr && info.kind->store_key == "/Service";
  auto id = service ? SplitSchemeNamePort(info.name) : std::nullopt;
  if (traffic == nullptr || !id) {
    auto backend = ResolveProxyBackend(store, info);
    if (auto* refused = std::get_if<HttpResponse>(&backend)) return std::move(*refused);
    return ForwardToBackend(std::get<ProxyBackend>(std::move(backend)), request, ForwardingFor(store, info),
                            std::move(answered));
  }
  // Counted in flight until answered, then in the Service's request rate and
  // latency (service_traffic.h).
  auto svc = store.Get(ObjectKey{"/Service", info.ns, id->name});
  const std::string isvc = svc ? StringAt(svc->object, {"metadata", "labels", "tessera.dev/inferenceservice"}) : "";
  const auto began = traffic->Begin(info.ns, id->name);
  auto done = std::make_shared<ProxyAnswered>([traffic, ns = info.ns, name = id->name, began, isvc,
                                               answered = std::move(answered)](int status, const std::string& error) {
    traffic->End(ns, name, RequestEnd{.status = status, .began = began, .inference_service = isvc});
    if (answered) answered(status, error);
  });
  auto forward = [request, done, how = ForwardingFor(store, info)](ProxyBackend backend) {
    return ForwardToBackend(std::move(backend), request, how,
                            [done](int status, const std::string& error) { (*done)(status, error); });
  };
  auto backend = ResolveProxyBackend(store, info);
  if (auto* to = std::get_if<ProxyBackend>(&backend)) return forward(std::move(*to));
  HttpResponse refused = std::get<HttpResponse>(std::move(backend));
  const bool scales_from_zero = refused.status == 503 && !isvc.empty();
  if (!scales_from_zero) {
    // Refused as without `traffic` (`answered` is not called), and counted: the caller saw it.
    traffic->End(info.ns, id->name, RequestEnd{.status = refused.status, .began = began, .inference_service = isvc});
    return refused;
  }
  // Scale from zero: held until a replica is ready, then forwarded.
  HttpResponse held;
  held.deferred = [&store, info, traffic, forward, refused, name = id->name, began, isvc](
                      std::function<void(HttpResponse)> respond) mutable {
    HttpResponse timeout = refused;
    timeout.body = ProxyStatusJson(503, "ServiceUnavailable",
                                   fmt::format("no replica of service \"{}\" became ready in time: see tessera "
                                               "describe isvc {}",
                                               name, name));
    traffic->Hold(
        [&store, info, forward]() -> std::optional<HttpResponse> {
          auto backend = ResolveProxyBackend(store, info);
          auto* to = std::get_if<ProxyBackend>(&backend);
          // Ready is not always listening yet (no readiness probe): as Knative's
          // activator, forward only once the replica accepts a connection.
          if (to == nullptr || !BackendAccepts(to->host, to->port)) return std::nullopt;
          return forward(std::move(*to));
        },
        [respond = std::move(respond), traffic, ns = info.ns, name, began, isvc](HttpResponse r) mutable {
          // Timed out (a forwarded exchange ends through `done`).
          if (!r.upgrade) traffic->End(ns, name, RequestEnd{.status = r.status, .began = began, .inference_service = isvc});
          respond(std::move(r));
        },
        std::move(timeout));
  };
  return held;
}

}  // namespace tessera
