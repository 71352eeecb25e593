// HttpServer: HTTP/1.1 on Boost.Beast, with keep-alive, a request body limit,
// optional TLS, and streamed responses for long-lived watches.
//
// TLS: with a certificate and key (HttpServerOptions), every connection is
// HTTPS (TLS 1.2 or later); Start refuses a key that is not the certificate's.
// A plain-HTTP request to that port is answered with a plain-HTTP 400 Status
// saying to use https://, and the connection is closed.
//
// Threading: `threads` I/O threads, each running an io_context of its own;
// each connection lives on one of them (dealt out in turn), so a handler for
// one connection never runs concurrently with another handler of the same
// connection. Handlers run on I/O threads and
// must not block for long: a plain request is answered by returning an
// HttpResponse, or later through HttpResponse::deferred; a watch is answered
// with HttpResponse::stream, after which the
// server writes whatever the returned StreamSink is given, as chunks, until the
// client goes away or the sink is closed.
//
// Thread-safety: Start/Stop from one thread; StreamSink is safe to use from any.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "common/result.h"

namespace tessera {

struct HttpRequest {
  std::string method;  // "GET", "POST", ...
  std::string path;    // decoded path, without the query
  std::map<std::string, std::string> query;
  std::map<std::string, std::string> headers;  // lower-case names
  std::string body;
  std::string remote;  // "ip:port"

  std::string Header(const std::string& lower_name) const {
    auto it = headers.find(lower_name);
    return it == headers.end() ? std::string() : it->second;
  }
  std::string Query(const std::string& name) const {
    auto it = query.find(name);
    return it == query.end() ? std::string() : it->second;
  }
};

// Where a streamed response goes. Write returns false once the client is gone;
// after that, or after Close, writes are dropped.
class StreamSink {
 public:
  virtual ~StreamSink() = default;
  virtual bool Write(std::string chunk) = 0;
  virtual void Close() = 0;
  virtual bool open() const = 0;
};

struct HttpResponse {
  int status = 200;
  std::string content_type = "application/json";
  std::string body;
  std::vector<std::pair<std::string, std::string>> headers;
  // When set, the response is streamed (chunked): the server sends the status
  // and headers, then calls `stream` once with the sink to write the body to.
  std::function<void(std::shared_ptr<StreamSink>)> stream;
  // When set (and `stream` is not), the answer comes later: the server calls
  // `deferred` once with a `respond` function, which must then be called
  // exactly once, from any thread, with the real response (which may itself
  // be deferred again, or a stream). Meanwhile the I/O thread serves other
  // connections, so a handler that waits for something (a store write, an
  // identity provider) does not hold it.
  std::function<void(std::function<void(HttpResponse)> respond)> deferred;
};

using HttpHandler = std::function<HttpResponse(const HttpRequest&)>;

struct HttpServerOptions {
  std::string host = "127.0.0.1";
  uint16_t port = 7070;  // 0: any free port (see HttpServer::port())
  int threads = 2;
  size_t max_body_bytes = 3 * 1024 * 1024;  // like the Kubernetes API server's limit
  std::string tls_cert_file;                // PEM certificate chain; with tls_key_file: HTTPS
  std::string tls_key_file;                 // PEM private key of that certificate
  // A connection that waits this long for its client (to send a request, or
  // to take a response) is closed; a watch stream is not. Checked every tenth
  // of it, so one is closed up to 10 % later.
  std::chrono::milliseconds idle_timeout{300'000};
};

class HttpServer {
 public:
  HttpServer(HttpServerOptions options, HttpHandler handler);
  ~HttpServer();
  HttpServer(const HttpServer&) = delete;
  HttpServer& operator=(const HttpServer&) = delete;

  // Binds and starts the I/O threads. Errors say which address could not be bound.
  Status Start();
  // Stops accepting, closes every connection (streams included) and joins.
  void Stop();
  uint16_t port() const { return bound_port_; }
  bool tls() const;

  struct Impl;  // the Asio/Beast machinery; in http_server.cc

 private:
  std::unique_ptr<Impl> impl_;
  uint16_t bound_port_ = 0;
};

// Percent-decoding of a URL path or query component ('+' is a space in queries).
std::string UrlDecode(std::string_view s, bool query_component);

}  // namespace tessera
