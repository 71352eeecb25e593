// ApiClient: a small synchronous HTTP/1.1 client for the Tessera API (the CLI's
// only way to the server), with keep-alive, bearer token and optional TLS, and
// line-by-line streaming for watches.
//
// Not thread-safe: one connection, one request at a time.
#pragma once

#include <functional>
#include <memory>
#include <string>

#include "common/result.h"

namespace tessera {

struct ApiResponse {
  int status = 0;
  std::string body;
  std::string content_type;
};

class ApiClient {
 public:
  // server: "http://127.0.0.1:7070" or "https://host:port".
  ApiClient(std::string server, std::string token, bool insecure_skip_verify = false);
  ~ApiClient();
  ApiClient(const ApiClient&) = delete;
  ApiClient& operator=(const ApiClient&) = delete;

  // A network failure is an error (Unavailable, saying which server); any HTTP
  // answer, 4xx and 5xx included, is a response.
  Result<ApiResponse> Request(const std::string& method, const std::string& target, const std::string& body = "",
                              const std::string& content_type = "application/json");

  // GET `target` and call `on_line` for each newline-terminated line of the
  // streamed body until it returns false or the server ends the stream.
  Status Stream(const std::string& target, const std::function<bool(const std::string&)>& on_line);

  const std::string& server() const { return server_; }

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
  std::string server_;
};

}  // namespace tessera
