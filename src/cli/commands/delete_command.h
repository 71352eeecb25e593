// `tessera delete KIND NAME... [-n NS]`, `delete KIND/NAME...`,
// `delete KIND -l SELECTOR` and `delete -f FILE|DIR|-`: deletes the objects and
// prints `kind.group/name deleted` for each, kubectl's -o name form:
//
//   job.batch/train-1 deleted
//   clusterqueue.kueue.x-k8s.io/gpu-cluster-queue deleted
//
// NotFound is an error (exit 1) unless --ignore-not-found; the command goes on
// with the other objects either way.
#pragma once

#include <string>
#include <vector>

#include "cli/commands/command_context.h"

namespace tessera {

struct DeleteOptions {
  std::vector<std::string> args;   // KIND NAME... or TYPE/NAME...
  std::vector<std::string> files;  // -f
  std::string selector;            // -l
  bool ignore_not_found = false;
};

int RunDelete(const CommandContext& ctx, const DeleteOptions& options);

}  // namespace tessera
