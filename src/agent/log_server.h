// The agent's log endpoint: what the API server proxies for
// GET /api/v1/namespaces/{ns}/pods/{name}/log (`tessera logs`), as kubelets
// serve their containers' logs.
//
//   GET /logs/{namespace}/{pod}/{uid}?tailLines=N&follow=true
//
// streams the pod's log files (src/agent/log_files.h) as text; with follow, it
// keeps streaming until the pod has ended (its directory holds "ended") and
// everything written is sent, or the client goes. It serves the directory of
// any pod this node ran, running or not: the server asks for the instances
// that ended or were deleted (`logs --previous`) until the agent's garbage
// collection (CollectPodDirectories) removes them. Requests must carry a bearer
// token that `authorize` accepts: the agent accepts only the short-lived token
// its server signs for its calls to this node (TokenIssuer::IssueAgentCall).
//
// The same port serves the exec endpoint (exec_server.h), for the server's
// pods/exec subresource, with the same check:
//
//   GET|POST /exec/{namespace}/{pod}/{uid}?command=...  (a WebSocket upgrade)
#pragma once

#include <functional>
#include <memory>
#include <set>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "common/result.h"
#include "agent/exec_server.h"
#include "common/time.h"
#include "http/http_server.h"

namespace tessera {

class LogServer {
 public:
  // Serves the pod directories under `pods_dir` on host:port (0: any free port).
  // OK from `authorize` lets a request in; its error is the 401's reason.
  using Authorize = std::function<Status(std::string_view bearer_token)>;
  // `resolve_exec` finds a running pod for /exec (nullptr: no exec here).
  static Result<std::unique_ptr<LogServer>> Start(std::string pods_dir, Authorize authorize, const std::string& host,
                                                  uint16_t port, ExecResolver resolve_exec = nullptr);
  ~LogServer();
  void Stop();
  uint16_t port() const;

 private:
  LogServer() = default;
  HttpResponse Handle(const HttpRequest& req);
  std::string pods_dir_;
  Authorize authorize_;
  ExecResolver resolve_exec_;
  std::unique_ptr<HttpServer> http_;
};

// The directory of a pod's files under `pods_dir`.
std::string PodDirectory(const std::string& pods_dir, const std::string& ns, const std::string& name,
                         const std::string& uid);
// Marks a pod's directory: its process has ended, nothing more will be written.
void MarkPodEnded(const std::string& pod_dir);

// The pod of a directory PodDirectory named (its last "_" part, as
// SafePathPart writes a uid); "" for a name not of that form.
std::string PodDirectoryUid(const std::string& dir_name);

// The agent's garbage collection of pod directories (docs/agent.md "Logs"):
// removes each directory under `pods_dir` whose uid (SafePathPart'ed) is not in
// `keep` (the pods this node still has) and in which nothing (the directory, its
// "ended" mark, its live log file) changed for `retention`. A directory with
// something mounted under it (a container's root, a memory emptyDir the agent
// has not cleaned up yet) is left for a later pass. Returns the directories
// removed and, with why, those that could not be.
struct CollectedPodDirectories {
  std::vector<std::string> removed;
  std::vector<std::pair<std::string, std::string>> failed;  // directory, why
};
CollectedPodDirectories CollectPodDirectories(const std::string& pods_dir, const std::set<std::string>& keep,
                                              Duration retention);

}  // namespace tessera
