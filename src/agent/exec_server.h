// The agent's exec endpoint, behind its log server's port (log_server.h), for
// the API server's pods/exec subresource (`kubectl exec`, `tessera exec`):
//
//   GET /exec/{namespace}/{pod}/{uid}?command=sh&command=-c&command=...&stdin=true&stdout=true&stderr=true&tty=false
//
// upgraded to a WebSocket that speaks Kubernetes' channel protocol,
// v5.channel.k8s.io or v4.channel.k8s.io (the client's Sec-WebSocket-Protocol
// offers them; the first this end speaks is taken): each binary message's
// first byte is its stream, 0 stdin (client to agent), 1 stdout, 2 stderr, 3
// error (agent to client, once, at the end: a metav1.Status, Success, or
// Failure with reason NonZeroExitCode and details.causes [{reason: ExitCode,
// message: "3"}], as the kubelet writes it and kubectl reads it), 4 resize
// (ignored: no TTY yet); v5 adds 255 close ([255, 0] ends stdin).
//
// The command runs in the pod's environment (pod_exec.h). When its output has
// ended and it has exited, the Status goes on channel 3 and the WebSocket is
// closed. A client that goes away ends the command (SIGKILL to its process
// group).
//
// Thread-safety: ExecResponse may be called from any thread; the session runs
// on the connection's I/O thread and a few threads of its own (one per output
// stream, one for stdin), which end with it.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "agent/pod_exec.h"
#include "common/result.h"
#include "http/http_server.h"

namespace tessera {

// The running pod (namespace, name, uid) to run a command in; NotFound (404)
// when this node runs no such pod now.
using ExecResolver = std::function<Result<PodExecTarget>(const std::string& ns, const std::string& name,
                                                         const std::string& uid)>;

// What an exec request asks: its command (each `command` parameter, in order)
// and streams. InvalidArgument when it names no command.
struct ExecRequest {
  std::vector<std::string> command;
  bool with_stdin = false, with_stdout = true, with_stderr = true, tty = false;
};
Result<ExecRequest> ParseExecRequest(const HttpRequest& req);

// The answer to an exec request for `target`: a 400 when it is not a WebSocket
// upgrade offering a channel protocol this end speaks, else the upgrade.
HttpResponse ExecResponse(const HttpRequest& req, ExecRequest exec, PodExecTarget target);

// Kubernetes' metav1.Status for the command's end, as channel 3 carries it.
std::string ExecStatusJson(const std::vector<std::string>& command, int exit_code, const std::string& error = "");

}  // namespace tessera
