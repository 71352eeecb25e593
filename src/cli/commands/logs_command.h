// `tessera logs [-f] [-p] [--tail N] NAME [-n NS]`: a pod's output, read through
// the server from the agent of its node (kubectl logs). NAME is a pod, or a
// workload or job (job/NAME, workload/NAME): then its pods' logs, each under a
// "==> pod <==" header (with -f, only its first pod, rank 0, is followed). The
// pods of a finished or preempted job are there too when they are gone (the
// server answers from its Workload's status.podHistory); -p/--previous shows
// each pod's earlier instance instead (the one a preemption or a retry
// replaced), as `kubectl logs --previous`.
#pragma once

#include <string>

#include "cli/commands/command_context.h"

namespace tessera {

struct LogsOptions {
  std::string name;
  bool follow = false;
  bool previous = false;  // the earlier instance of each pod (?previous=true)
  int64_t tail = -1;  // -1: everything kept
};

int RunLogs(const CommandContext& ctx, const LogsOptions& options);

}  // namespace tessera
