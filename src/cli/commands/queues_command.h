// `tessera queues [CLUSTERQUEUE...]`: quota and usage of every ClusterQueue (or
// the named ones), one row per flavor and resource:
//
//   CLUSTERQUEUE        COHORT   FLAVOR          RESOURCE         NOMINAL   USED   BORROWED   PENDING   ADMITTED
//   gpu-cluster-queue   <none>   a100-spot       nvidia.com/gpu   16        4      0          3         1
//                                                cpu              128       8      0
//                                                memory           512Gi     64Gi   0
//                                a100-ondemand   nvidia.com/gpu   8         0      0
//
// A queue's name, cohort and workload counts print on its first row only, a
// flavor's name on its first resource. Amounts as users write them (0.25, 8,
// 500m, 512Gi). Usage comes from the status the server keeps (Kueue's
// status.flavorsUsage); before it has any, USED and BORROWED read 0.
#pragma once

#include <string>
#include <vector>

#include "cli/commands/command_context.h"

namespace tessera {

struct QueuesOptions {
  std::vector<std::string> names;  // empty: every ClusterQueue
};

int RunQueues(const CommandContext& ctx, const QueuesOptions& options);

}  // namespace tessera
