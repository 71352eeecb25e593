// `tessera exec pod/NAME [-c CONTAINER] [-i] [-t] -- CMD...`: runs a command in
// a running pod, process or container, as kubectl exec does: through the
// server's pods/exec subresource (a WebSocket, Kubernetes' channel protocol;
// client/exec_client.h), which checks that the caller may create pods/exec in
// the namespace and relays to the pod's agent. Its output goes to stdout and
// stderr; with -i, stdin goes to the command until its end. The command's exit
// code is tessera's.
#pragma once

#include <string>
#include <vector>

#include "cli/commands/command_context.h"

namespace tessera {

struct ExecOptions {
  std::string pod;  // pod/NAME, pods/NAME or NAME
  std::string container;
  bool stdin_open = false;  // -i
  bool tty = false;         // -t (not supported by the agent yet: it says so)
  std::vector<std::string> command;
};

// The pods/exec path and query of `options` in namespace `ns`; InvalidArgument
// for something other than a pod, or no command.
Result<std::string> ExecTarget(const std::string& ns, const ExecOptions& options);

int RunExec(const CommandContext& ctx, const ExecOptions& options);

}  // namespace tessera
