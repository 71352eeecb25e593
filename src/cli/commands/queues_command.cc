#include "cli/commands/queues_command.h"

#include <nlohmann/json.hpp>

#include <algorithm>

#include "api/kinds.h"
#include "api/object_fields.h"
#include "cli/commands/exit_codes.h"
#include "cli/commands/list_objects.h"
#include "cli/commands/queue_usage.h"
#include "cli/commands/resource_paths.h"
#include "cli/commands/server_errors.h"
#include "cli/commands/table_printer.h"

namespace tessera {
namespace {

// Why an object the list lacks is missing, in the server's words (`Error from
// server (NotFound): clusterqueues.kueue.x-k8s.io "x" not found`): asked for by name.
std::string NotListedError(ApiClient& client, const ClientConfig& config, const std::string& object_path) {
  auto r = client.Request("GET", object_path);
  if (!r) return LocalError(r.error());
  return ServerError(*r, config);
}

}  // namespace

int RunQueues(const CommandContext& ctx, const QueuesOptions& options) {
  const KindInfo* kind = FindKindByApiVersion("kueue.x-k8s.io/v1beta1", "ClusterQueue");
  auto client = ctx.Client();
  auto list = ListObjects(*client, ctx.config, CollectionPath(*kind, ""), "");
  if (!list) {
    *ctx.err << list.error() << "\n";
    return kExitFailure;
  }
  std::vector<const nlohmann::json*> queues;
  for (const nlohmann::json& q : list->items) queues.push_back(&q);
  std::sort(queues.begin(), queues.end(),
            [](const nlohmann::json* a, const nlohmann::json* b) { return NameOf(*a) < NameOf(*b); });

  int rc = kExitOk;
  std::vector<const nlohmann::json*> shown;
  if (options.names.empty()) {
    shown = queues;
  } else {
    for (const std::string& name : options.names) {
      auto it = std::find_if(queues.begin(), queues.end(), [&](const nlohmann::json* q) { return NameOf(*q) == name; });
      if (it == queues.end()) {
        *ctx.err << NotListedError(*client, ctx.config, ObjectPath(*kind, "", name)) << "\n";
        rc = kExitFailure;
      } else {
        shown.push_back(*it);
      }
    }
  }
  if (shown.empty()) {
    if (options.names.empty()) *ctx.err << "No resources found\n";
    return rc;
  }

  Table table(
      {"CLUSTERQUEUE", "COHORT", "FLAVOR", "RESOURCE", "NOMINAL", "RESERVED", "USED", "BORROWED", "PENDING", "ADMITTED"});
  for (const nlohmann::json* q : shown) {
    const std::vector<QueueUsageRow> rows = QueueUsage(*q);
    const std::string cohort = TextAt(*q, "spec.cohort", "<none>");
    const std::string pending = TextAt(*q, "status.pendingWorkloads", "0");
    const std::string admitted = TextAt(*q, "status.admittedWorkloads", "0");
    if (rows.empty()) {
      table.AddRow({NameOf(*q), cohort, "<none>", "", "", "", "", "", pending, admitted});
      continue;
    }
    for (size_t i = 0; i < rows.size(); ++i) {
      const QueueUsageRow& u = rows[i];
      const bool first = i == 0;
      const bool new_flavor = first || rows[i - 1].flavor != u.flavor;
      table.AddRow({first ? NameOf(*q) : "", first ? cohort : "", new_flavor ? u.flavor : "", u.resource, u.nominal,
                    u.reserved, u.used, u.borrowed, first ? pending : "", first ? admitted : ""});
    }
  }
  table.Print(*ctx.out);
  return rc;
}

}  // namespace tessera
