// `tessera top`: live GPU allocation and utilisation per node and per namespace
// (team), read from the server's /metrics (docs/metrics.md):
//
//   NODE    READY   GPUS   ALLOCATED   UTILISATION   GPU MEMORY
//   gpu-1   True    4      2.5         50%           8.3Gi
//
//   NAMESPACE   ALLOCATED GPUS   USED GPUS   PENDING
//   team-nlp    2.5              2           1
//
// UTILISATION is the mean of the node's devices in their agent's last sample;
// USED GPUS is allocation x utilisation. Without samples (an agent with
// --usage-interval 0) they read "<unknown>".
#pragma once

#include "cli/commands/command_context.h"

namespace tessera {

int RunTop(const CommandContext& ctx);

}  // namespace tessera
