// The portforward subresource, as the kubelet serves it over WebSocket
// (Kubernetes' websocket port-forward protocol):
//
//   GET /api/v1/namespaces/NS/pods/NAME/portforward?ports=8888[&ports=9000]
//   Connection: Upgrade, Upgrade: websocket,
//   Sec-WebSocket-Protocol: v4.channel.k8s.io  (or portforward.k8s.io)
//
// `ports` may be repeated or comma-separated. After the 101, every WebSocket
// message is binary, its first byte the channel: port i (in the order given)
// has data channel 2*i and error channel 2*i+1. The server first sends on
// each of both channels the port as 2 little-endian bytes; then bytes on the
// data channel go to the pod's IP:port (status.podIP, as the proxy dials the
// pod) and back. A port that cannot be dialled gets its reason on its error
// channel ("error forwarding port 8888 to pod team-a/nb: dial tcp
// 10.0.0.5:8888: connect: connection refused"), then the WebSocket closes;
// so it does when the pod or the client closes a port's connection. One TCP
// connection per port per WebSocket, as the kubelet's: the CLI opens a
// WebSocket per local connection.
//
// Authorization is the handler's (RBAC on pods/portforward, verb get for the
// WebSocket GET, create for kubectl's POST; edit and admin hold it, view does
// not).
//
// Thread-safety: functions of the store only.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "common/result.h"
#include "http/http_server.h"
#include "server/api/request_info.h"
#include "store/store.h"

namespace tessera {

inline constexpr std::string_view kPortForwardProtocol = "v4.channel.k8s.io";
inline constexpr std::string_view kPortForwardProtocolAlias = "portforward.k8s.io";

// The ports of a request's target (its `ports` parameters, repeated or
// comma-separated), or InvalidArgument saying what is wrong.
Result<std::vector<uint16_t>> PortForwardPorts(const HttpRequest& request);

// The answer to a pods/NAME/portforward request: the upgrade, or a Status
// (400 not a WebSocket or bad ports, 404 no pod, 503 not running).
HttpResponse PortForwardResponse(Store& store, const RequestInfo& info, const HttpRequest& request);

}  // namespace tessera
