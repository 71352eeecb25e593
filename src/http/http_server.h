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
// A handler may also take a connection over (HttpResponse::upgrade): the
// server then hands it the connection's bytes both ways, as Go's Hijacker does
// (a reverse proxy, a WebSocket after its 101).
//
// Thread-safety: Start/Stop from one thread; StreamSink is safe to use from any.
#pragma once

#include <boost/asio/any_io_executor.hpp>

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
  std::string target;  // the request-target as sent: the path and query, not decoded
  bool tls = false;    // it came over TLS (a port may serve plain HTTP too)

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

// A connection the server handed over (HttpResponse::upgrade): raw bytes both
// ways, through TLS when the server speaks it. Call it, and expect its
// callbacks, on its own I/O thread only (executor(); do other I/O of the
// exchange there too). It is closed once the last reference to it goes, or by
// Close, or when the server stops; the idle timeout no longer applies.
class UpgradedConnection {
 public:
  virtual ~UpgradedConnection() = default;
  virtual boost::asio::any_io_executor executor() = 0;
  // What the client sent past the end of the request, already read (a
  // pipelined request, or a WebSocket client's first frames); given once.
  virtual std::string TakeBuffered() = 0;
  // Reads what comes next: `done` gets at least one byte, or an empty view
  // once the client closed its side or the connection failed. One at a time.
  virtual void ReadSome(std::function<void(std::string_view data)> done) = 0;
  // Writes all of `data`; `done(false)` when the connection failed. One at a time.
  virtual void Write(std::string data, std::function<void(bool ok)> done) = 0;
  virtual void Close() = 0;
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
  // When set (and neither `stream` nor `deferred` is), the server writes
  // nothing of this response: it calls `upgrade` once, on the connection's
  // I/O thread, with the connection, which is the handler's from then on
  // (status and the rest are not used). Nothing more is read from it as HTTP.
  std::function<void(std::shared_ptr<UpgradedConnection>)> upgrade;
};

using HttpHandler = std::function<HttpResponse(const HttpRequest&)>;

struct HttpServerOptions {
  std::string host = "127.0.0.1";
  uint16_t port = 7070;  // 0: any free port (see HttpServer::port())
  int threads = 2;
  size_t max_body_bytes = 3 * 1024 * 1024;  // like the Kubernetes API server's limit
  std::string tls_cert_file;                // PEM certificate chain; with tls_key_file: HTTPS
  std::string tls_key_file;                 // PEM private key of that certificate
  // With TLS: a connection that does not start a TLS handshake is served as
  // plain HTTP on the same port (else it is told to use https://).
  bool plain_http_too = false;
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
