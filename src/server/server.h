// Server: the control plane process (`tessera server`, and the core of `tessera up`):
// the store under the data directory, the admin token, first-start defaults,
// the watch hub, the REST API and the HTTP listener.
#pragma once

#include <memory>
#include <string>

#include "common/result.h"
#include "http/http_server.h"

namespace tessera {

struct ServerOptions {
  std::string data_dir = "./tessera-data";
  HttpServerOptions http;  // listen address, threads, TLS
  bool metrics_need_token = false;  // GET /metrics without a token unless set
};

class Server {
 public:
  ~Server();
  // Opens (or creates) the data directory and starts serving.
  static Result<std::unique_ptr<Server>> Start(ServerOptions options);
  void Stop();

  uint16_t port() const;
  std::string url() const;
  const std::string& admin_token() const { return admin_token_; }

 private:
  Server() = default;
  struct Parts;
  std::unique_ptr<Parts> parts_;
  std::string admin_token_;
  std::string scheme_;
  std::string host_;
};

// Reads <dir>/admin.token, creating it (random, mode 0600) when missing.
Result<std::string> LoadOrCreateAdminToken(const std::string& data_dir);

// The objects a new installation starts with, so that a user can submit at once:
// namespace default, the four priority classes of DESIGN.md, a default flavor,
// ClusterQueue and LocalQueue. Creates only what is missing.
Status BootstrapDefaults(class Store& store, const std::string& now);

}  // namespace tessera
