// `tessera approve NAME [--reason TEXT]` and `tessera deny NAME --reason TEXT`:
// a decision on an ApprovalRequest (src/server/approval_controller.h), sent as
// kubectl certificate approve sends one, through the approval subresource (a
// condition Approved or Denied added to its status). NAME is the request's,
// which is its workload's, or a Job's (whose workload is job-NAME).
#pragma once

#include <string>

#include "cli/commands/command_context.h"

namespace tessera {

struct ApproveOptions {
  std::string name;
  std::string reason;
  bool approve = true;
};

int RunApprove(const CommandContext& ctx, const ApproveOptions& options);

}  // namespace tessera
