// The agent's log endpoint: what the API server proxies for
// GET /api/v1/namespaces/{ns}/pods/{name}/log (`tessera logs`), as kubelets
// serve their containers' logs.
//
//   GET /logs/{namespace}/{pod}/{uid}?tailLines=N&follow=true
//
// streams the pod's log files (src/agent/log_files.h) as text; with follow, it
// keeps streaming until the pod has ended (its directory holds "ended") and
// everything written is sent, or the client goes. Requests must carry the
// agent's bearer token (the one it uses with the server).
#pragma once

#include <memory>
#include <string>

#include "common/result.h"
#include "http/http_server.h"

namespace tessera {

class LogServer {
 public:
  // Serves the pod directories under `pods_dir` on host:port (0: any free port).
  static Result<std::unique_ptr<LogServer>> Start(std::string pods_dir, std::string token, const std::string& host,
                                                  uint16_t port);
  ~LogServer();
  void Stop();
  uint16_t port() const;

 private:
  LogServer() = default;
  HttpResponse Handle(const HttpRequest& req);
  std::string pods_dir_;
  std::string token_;
  std::unique_ptr<HttpServer> http_;
};

// The directory of a pod's files under `pods_dir`.
std::string PodDirectory(const std::string& pods_dir, const std::string& ns, const std::string& name,
                         const std::string& uid);
// Marks a pod's directory: its process has ended, nothing more will be written.
void MarkPodEnded(const std::string& pod_dir);

}  // namespace tessera
