// ApiClient: a small synchronous HTTP/1.1 client for the Tessera API (the CLI's
// only way to the server), with keep-alive, bearer token and optional TLS, and
// line-by-line streaming for watches.
//
// TLS (https:// servers): the server's certificate must chain to a trusted CA
// (the system's, or only the ones in TlsClientOptions::certificate_authority,
// where any certificate of that file is a trust anchor, as in kubectl) and name
// the host dialled (DNS name or IP address in subjectAltName); the name is also
// sent as SNI. A refused certificate is an error saying why and which flag fixes it.
//
// Timeouts, as kubectl's: connecting (and the TLS handshake) gives up after
// kConnectTimeout; a request waits for its whole response at most
// `request_timeout` (0: as long as it takes; watch streams are not limited).
//
// Not thread-safe: one connection, one request at a time.
#pragma once

#include <chrono>
#include <functional>
#include <memory>
#include <string>

#include "common/result.h"

namespace tessera {

// How the client checks an https:// server, with kubectl's flag names.
struct TlsClientOptions {
  std::string certificate_authority;     // PEM file of the CA certificate(s) to trust instead of the system's
  bool insecure_skip_tls_verify = false;  // accept any certificate: testing only (refused with a CA file)
};

// client-go's dialer gives up after 30 s too.
inline constexpr std::chrono::seconds kConnectTimeout{30};

struct ApiResponse {
  int status = 0;
  std::string body;
  std::string content_type;
  std::string retry_after;  // the Retry-After header of a 429 or 503; empty when absent
};

class ApiClient {
 public:
  // server: "http://127.0.0.1:7070" or "https://host:port".
  ApiClient(std::string server, std::string token, TlsClientOptions tls = {},
            std::chrono::milliseconds request_timeout = std::chrono::milliseconds::zero());
  ~ApiClient();
  ApiClient(const ApiClient&) = delete;

  // For a server other than Tessera's (an identity provider): how network
  // errors name it ("cannot reach the identity provider at host:port: ...")
  // and what an untrusted certificate's error advises.
  void DescribePeer(std::string peer, std::string ca_hint);
  ApiClient& operator=(const ApiClient&) = delete;

  // A network failure is an error (Unavailable, saying which server), and so is
  // no whole response within the request timeout; any HTTP answer, 4xx and 5xx
  // included, is a response.
  Result<ApiResponse> Request(const std::string& method, const std::string& target, const std::string& body = "",
                              const std::string& content_type = "application/json");

  // GET `target` and call `on_line` for each newline-terminated line of the
  // streamed body until it returns false or the server ends the stream.
  Status Stream(const std::string& target, const std::function<bool(const std::string&)>& on_line);

  // Ends a Stream (or Request) blocked in another thread: it returns an error.
  // The only method that may be called from another thread.
  void Cancel();

  const std::string& server() const { return server_; }

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
  std::string server_;
};

}  // namespace tessera
