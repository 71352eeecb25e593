// The proxy subresource, as kube-apiserver serves it:
//
//   /api/v1/namespaces/NS/pods/NAME[:PORT]/proxy[/PATH...]
//   /api/v1/namespaces/NS/services/NAME[:PORT]/proxy[/PATH...]
//
// NAME:PORT may also be SCHEME:NAME:PORT with the scheme http (https to a pod
// is not supported). Every method is forwarded, with the query, the body and
// the headers but the hop-by-hop ones and the caller's Authorization (which
// authenticated to this server, as kube-apiserver drops it) and session
// cookie (proxy_login.h); the answer is
// relayed as it comes, and upgrades (WebSockets) are relayed both ways
// (http/reverse_proxy.h).
//
// Where it goes:
//   - a pod: its status.podIP (on the pod network, or the node's address for
//     a host-network pod) and PORT: a number, or the name of one of its
//     containers' ports; without PORT its first container port, else 80;
//   - a Service: PORT is one of its ports, by number or name (without PORT
//     the unnamed one); one of its ready endpoints from its EndpointSlices,
//     picked at random, on that port's target port there.
// The path: what follows .../proxy, as kube-apiserver sends it; but a Service
// annotated tessera.dev/proxy-keep-path: "true" is sent the whole path the
// caller asked for, so that an app served under its proxy path (a notebook's
// Jupyter, its base_url that path) finds its own prefix, as behind
// JupyterHub's or Kubeflow's proxies.
// A pod that does not run or has no IP, a Service with no ready endpoint, a
// backend that refuses the connection: 503 ServiceUnavailable, in
// kube-apiserver's words where it has them (`no endpoints available for
// service "web"`).
//
// Thread-safety: functions of the store only.
#pragma once

#include <string>
#include <variant>

#include "api/service.h"
#include "http/http_server.h"
#include "http/reverse_proxy.h"
#include "server/api/request_info.h"
#include "server/api/service_traffic.h"
#include "store/store.h"

namespace tessera {

// The backend of a pods/proxy or services/proxy request, or the answer saying
// why there is none (404, 400 or 503 Status).
std::variant<ProxyBackend, HttpResponse> ResolveProxyBackend(Store& store, const RequestInfo& info);

// What the backend is asked for: the request's target after .../proxy ("/"
// when nothing follows), its query included, not decoded.
std::string ProxiedTarget(const HttpRequest& request);

// How a request is forwarded, from its Service's annotations (api/service.h):
// the whole path (tessera.dev/proxy-keep-path), and the backend's own
// credential (tessera.dev/proxy-token-secret: "token <data.token>").
struct ProxyForwarding {
  bool keep_path = false;
  std::string authorization;  // sent as Authorization; empty: none
};
ProxyForwarding ForwardingFor(Store& store, const RequestInfo& info);

// Forwards `request` to `backend` (ProxiedTarget, or the whole target), without
// the caller's Authorization and without this server's session cookies
// (proxy_login.h): both are credentials for this server, never for the pod;
// with `how.authorization`, that is sent instead. `answered` as ReverseProxy's.
HttpResponse ForwardToBackend(ProxyBackend backend, const HttpRequest& request, const ProxyForwarding& how,
                              ProxyAnswered answered);

// Resolves and forwards; `answered` as ReverseProxy's. With `traffic`, a
// services/proxy request counts as in flight to its Service until answered,
// and one to an InferenceService's Service (labelled
// tessera.dev/inferenceservice) that has no ready endpoint is held there until
// a replica is ready (scale from zero), instead of a 503 at once.
HttpResponse ProxyResponse(Store& store, const RequestInfo& info, const HttpRequest& request,
                           ProxyAnswered answered, ServiceTraffic* traffic = nullptr);

}  // namespace tessera
