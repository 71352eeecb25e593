#include "cli/commands/resume_command.h"

#include <nlohmann/json.hpp>

#include "api/convert.h"
#include "api/kinds.h"
#include "cli/commands/exit_codes.h"
#include "cli/commands/resource_paths.h"
#include "cli/commands/server_errors.h"

namespace tessera {

int RunResume(const CommandContext& ctx, const std::string& name) {
  const KindInfo* kind = FindKindByApiVersion("kueue.x-k8s.io/v1beta1", "Workload");
  auto client = ctx.Client();
  const std::string patch = nlohmann::json{{"spec", {{"active", true}}}}.dump();
  // The workload's own name, else the one the job controller gave a Job of that name.
  for (const std::string& candidate : {name, WorkloadNameForJob(false, name), WorkloadNameForJob(true, name)}) {
    auto r = client->Request("PATCH", ObjectPath(*kind, ctx.ns, candidate), patch, "application/merge-patch+json");
    if (!r) {
      *ctx.err << LocalError(r.error()) << "\n";
      return kExitFailure;
    }
    if (r->status == 404) continue;
    if (r->status / 100 != 2) {
      *ctx.err << ServerError(*r, ctx.config) << "\n";
      return kExitFailure;
    }
    *ctx.out << "workload.kueue.x-k8s.io/" << candidate << " resumed\n";
    return kExitOk;
  }
  *ctx.err << "Error from server (NotFound): no workload \"" << name << "\" (nor one for a job of that name) in namespace "
           << ctx.ns << "\n";
  return kExitFailure;
}

}  // namespace tessera
