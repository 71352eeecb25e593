// `tessera logs [-f] [--tail N] NAME [-n NS]`: a pod's output, read through the
// server from the agent of its node (kubectl logs). NAME is a pod, or a
// workload or job: then its pods' logs, each under a "==> pod <==" header
// (with -f, only its first pod, rank 0, is followed).
#pragma once

#include <string>

#include "cli/commands/command_context.h"

namespace tessera {

struct LogsOptions {
  std::string name;
  bool follow = false;
  int64_t tail = -1;  // -1: everything kept
};

int RunLogs(const CommandContext& ctx, const LogsOptions& options);

}  // namespace tessera
