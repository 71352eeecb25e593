// The node's fence: a small process, detached from the agent, that kills the
// node's pods when the agent has not renewed the node's Lease for longer than
// the lease duration, including when the agent itself is gone (kill -9, crash).
//
// Why a separate process: pods outlive their agent on purpose (a restarted agent
// adopts them), so they cannot simply die with it; but once the server gives up
// on the node (lease duration + fencing margin, src/server/node_lifecycle.h) it
// places the work elsewhere, and the old copies must be dead by then. The agent
// fences its pods itself while it runs; the fence covers the time it does not.
//
// Protocol, all under the agent's data directory:
//   lease-renewed     wall-clock milliseconds of the agent's last renewal
//   agent-state.json  the pods (pid and start time) the agent runs
//   fence.json        the fence's own identity, so a restarted agent keeps it
//   agent.json        the agent's identity
#pragma once

#include <string>
#include <vector>

#include "common/result.h"
#include "common/time.h"

namespace tessera {

// Runs the fence loop until there is nothing left to guard (the agent in
// agent.json is gone and so are its pods) or the data directory disappears
// (then the pods it last saw are killed: nothing could adopt them).
int RunFence(const std::string& data_dir, Duration lease);

// Starts `command` (argv of the fence, e.g. {"/usr/bin/tessera", "agent-fence", ...})
// detached, unless the one recorded in fence.json still runs.
Status EnsureFence(const std::string& data_dir, const std::vector<std::string>& command);

// Records a successful renewal for the fence.
void RecordLeaseRenewal(const std::string& data_dir, Timestamp now);

}  // namespace tessera
