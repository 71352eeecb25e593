// `tessera resume WORKLOAD|JOB`: brings back a workload suspended for being idle
// (server/idle_reclaimer.h): sets spec.active to true, and it queues again.
#pragma once

#include <string>

#include "cli/commands/command_context.h"

namespace tessera {

int RunResume(const CommandContext& ctx, const std::string& name);

}  // namespace tessera
