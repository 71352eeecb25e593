#include "cli/commands/approve_command.h"

#include <fmt/format.h>

#include <nlohmann/json.hpp>

#include "api/convert.h"
#include "api/kinds.h"
#include "cli/commands/exit_codes.h"
#include "cli/commands/resource_paths.h"
#include "cli/commands/server_errors.h"

namespace tessera {

using nlohmann::json;

int RunApprove(const CommandContext& ctx, const ApproveOptions& o) {
  if (!o.approve && o.reason.empty()) {
    *ctx.err << "error: a denial needs a reason: tessera deny NAME --reason TEXT\n";
    return kExitUsage;
  }
  const KindInfo& kind = *FindKindByStoreKey("tessera.dev/ApprovalRequest");
  auto client = ctx.Client();
  // The decision is an update of the approval subresource (as kubectl
  // certificate approve sends it); the server reads only the decision from it
  // and records who sent it. The request is looked up first where the user may
  // read it, so that an error names the request that exists; an approver who
  // holds only `update` on approvalrequests/approval needs no read right.
  auto body = [&](const std::string& name) {
    return json{{"apiVersion", kind.api_version},
                {"kind", kind.kind},
                {"metadata", {{"name", name}, {"namespace", ctx.ns}}},
                {"status",
                 {{"conditions", json::array({{{"type", o.approve ? "Approved" : "Denied"},
                                               {"status", "True"},
                                               {"reason", o.approve ? "TesseraApprove" : "TesseraDeny"},
                                               {"message", o.reason}}})}}}};
  };
  // The request's own name, else the one of a Job's workload.
  for (const std::string& name : {o.name, WorkloadNameForJob(false, o.name), WorkloadNameForJob(true, o.name)}) {
    const std::string path = ObjectPath(kind, ctx.ns, name);
    auto got = client->Request("GET", path);
    if (!got) {
      *ctx.err << LocalError(got.error()) << "\n";
      return kExitFailure;
    }
    if (got->status == 404) continue;
    auto r = client->Request("PUT", path + "/approval", body(name).dump());
    if (!r) {
      *ctx.err << LocalError(r.error()) << "\n";
      return kExitFailure;
    }
    if (r->status == 404) continue;  // not readable, and not there
    if (r->status / 100 != 2) {
      *ctx.err << ServerError(*r, ctx.config) << "\n";
      return kExitFailure;
    }
    const json answer = json::parse(r->body, nullptr, false);
    const std::string phase = answer.is_object() ? answer.value("status", json::object()).value("phase", "") : "";
    *ctx.out << fmt::format("{} {}", ObjectRef(kind, name), o.approve ? "approved" : "denied");
    if (o.approve && phase == "Pending") {
      const json status = answer.value("status", json::object());
      *ctx.out << fmt::format(" ({} of {} approvals; it waits for more)", status.value("approvals", json::array()).size(),
                              answer.value("spec", json::object()).value("requiredApprovals", 1));
    }
    *ctx.out << "\n";
    return kExitOk;
  }
  *ctx.err << fmt::format("Error from server (NotFound): approvalrequests.tessera.dev \"{}\" not found (nor one for a "
                          "job of that name) in namespace {}\n",
                          o.name, ctx.ns);
  return kExitFailure;
}

}  // namespace tessera
