// ReverseProxy: forwards one HTTP request to a backend (host:port over plain
// TCP) and relays its answer, as Go's httputil.ReverseProxy with
// Kubernetes' UpgradeAwareHandler does for the API server's proxy subresource.
//
//   - The request goes with its method, target, body and headers, minus the
//     hop-by-hop ones (Connection and those it names, Keep-Alive, Proxy-*,
//     TE, Trailer, Transfer-Encoding, Upgrade) and minus `drop_headers`; Host
//     becomes the backend's, X-Forwarded-For gets the client's address, and
//     the backend is asked to close the connection after its answer.
//   - The answer is relayed as it comes (status, headers but the hop-by-hop
//     ones, body bytes in their own framing), through a bounded buffer: a
//     slow client slows the backend's reads, nothing piles up. The client's
//     connection is closed after it (Connection: close).
//   - An upgrade (Connection: Upgrade with Upgrade: websocket, say) is
//     forwarded with those headers; after the backend's 101 the bytes are
//     relayed both ways until either side closes.
//   - A backend that cannot be reached, or that breaks off before its status
//     line, is answered 503 ServiceUnavailable in Kubernetes' Status form and
//     words: "error trying to reach service: dial tcp 10.0.0.5:8888: connect:
//     connection refused".
//
// The exchange runs on the client connection's I/O thread (HttpResponse::upgrade),
// never blocking it; it ends when either side goes, or when the server stops.
//
// Thread-safety: ReverseProxy may be called from any thread.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "http/http_server.h"

namespace tessera {

struct ProxyBackend {
  std::string host;  // an IPv4 or IPv6 literal
  uint16_t port = 0;
};

// Called once, on the I/O thread, with what the client was answered: the
// backend's status (101 for an upgrade), or 503 and why the backend was not
// reached.
using ProxyAnswered = std::function<void(int status, const std::string& error)>;

// `target` is what the backend is asked for ("/lab?x=1": a path, and a query
// when there is one). `drop_headers` are lower-case names not to forward (the
// caller's credentials for this server).
HttpResponse ReverseProxy(const HttpRequest& request, ProxyBackend backend, std::string target,
                          const std::vector<std::string>& drop_headers, ProxyAnswered answered = nullptr);

// Kubernetes' Status object for `code`, JSON text.
std::string ProxyStatusJson(int code, std::string_view reason, std::string_view message);

}  // namespace tessera
