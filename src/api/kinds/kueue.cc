// kueue.x-k8s.io/v1beta1: flavors, queues and Workloads, with the short names of
// Kueue's CRDs.
#include "api/kinds/groups.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "api/common_schemas.h"
#include "api/object_fields.h"
#include "api/printer_columns.h"
#include "api/schema.h"
#include "api/workload_priority.h"

namespace tessera {
namespace {

using nlohmann::json;
using namespace schema;  // NOLINT(google-build-using-namespace): schemas read as tables

SchemaRef ResourceFlavorSchema() {
  return Root({Doc(Opt("spec", Obj({
                                   Doc(Opt("nodeLabels", LabelMap()),
                                       "the labels of the nodes this flavor is: a workload placed in the flavor "
                                       "runs only on nodes that have all of them (nvidia.com/gpu.product: H100)"),
                                   Doc(Opt("nodeTaints", Arr(Taint())),
                                       "taints of the flavor's nodes: a workload is placed in the flavor only when "
                                       "it tolerates them"),
                                   Doc(Opt("tolerations", Arr(Toleration())),
                                       "tolerations added to the pods of workloads placed in this flavor"),
                                   Doc(Opt("topologyName", Str()), "the topology (racks, NVLink domains) of its nodes"),
                               })),
                   "a kind of capacity: which nodes, and (annotation tessera.dev/price-per-gpu-hour) at what price")},
              {[](const json& v, const std::string&, Errors& errors) {
                // Budgets and reports charge by the flavor's price: a typo must not make it free.
                const json* meta = Get(v, "metadata");
                const json* annotations = meta ? Get(*meta, "annotations") : nullptr;
                const json* price = annotations ? Get(*annotations, "tessera.dev/price-per-gpu-hour") : nullptr;
                if (price) CheckDecimal(*price, "metadata.annotations[tessera.dev/price-per-gpu-hour]", errors);
              }});
}

// A flavor's quota for one resource: amounts in the resource's unit, and
// lendingLimit <= nominalQuota (Kueue's rule).
void CheckResourceQuota(const json& v, const std::string& path, Errors& errors) {
  std::string name = GetString(v, "name");
  std::optional<int64_t> nominal;
  for (std::string_view field : {"nominalQuota", "borrowingLimit", "lendingLimit"}) {
    const json* amount = Get(v, field);
    if (!amount) continue;
    auto parsed = CheckAmount(name, *amount, FieldPath(path, field), errors);
    if (field == "nominalQuota") nominal = parsed;
    if (field == "lendingLimit" && parsed && nominal && *parsed > *nominal) {
      errors.Add(FieldPath(path, field),
                 fmt::format("{} is more than nominalQuota {}", *QuantityTextOf(*amount),
                             *QuantityTextOf(*Get(v, "nominalQuota"))));
    }
  }
}

// Every flavor lists the group's coveredResources (Kueue requires exactly them);
// borrowingLimit only makes sense in a cohort (Kueue refuses it without one).
void CheckClusterQueueSpec(const json& spec, const std::string& path, Errors& errors) {
  bool has_cohort = !GetString(spec, "cohort").empty();
  const json* groups = Get(spec, "resourceGroups");
  if (!groups) return;
  for (size_t g = 0; g < groups->size(); ++g) {
    const json& group = (*groups)[g];
    std::string gpath = IndexPath(FieldPath(path, "resourceGroups"), g);
    std::vector<std::string> covered;
    if (const json* c = Get(group, "coveredResources")) {
      for (const json& r : *c) covered.push_back(r.get<std::string>());
    }
    const json* flavors = Get(group, "flavors");
    if (!flavors) continue;
    for (size_t f = 0; f < flavors->size(); ++f) {
      const json& flavor = (*flavors)[f];
      std::string fpath = IndexPath(FieldPath(gpath, "flavors"), f);
      const json* resources = Get(flavor, "resources");
      std::set<std::string> listed;
      for (size_t r = 0; resources && r < resources->size(); ++r) {
        const json& res = (*resources)[r];
        std::string rpath = IndexPath(FieldPath(fpath, "resources"), r);
        std::string name = GetString(res, "name");
        listed.insert(name);
        if (std::find(covered.begin(), covered.end(), name) == covered.end()) {
          errors.Add(FieldPath(rpath, "name"),
                     fmt::format("\"{}\" is not in this group's coveredResources", name));
        }
        if (!has_cohort && Get(res, "borrowingLimit")) {
          errors.Add(FieldPath(rpath, "borrowingLimit"),
                     "must not be set when spec.cohort is empty (there is no one to borrow from)");
        }
      }
      for (const std::string& c : covered) {
        if (!listed.contains(c)) {
          errors.Add(FieldPath(fpath, "resources"),
                     fmt::format("missing \"{}\": every flavor lists each of coveredResources", c));
        }
      }
    }
  }
}

SchemaRef FairSharing() { return Obj({Opt("weight", Qty())}); }

SchemaRef ClusterQueueSchema() {
  SchemaRef resource = Obj({Doc(Req("name", Str()), "the resource, as a pod requests it: nvidia.com/gpu, cpu, memory"),
                            Doc(Req("nominalQuota", Qty()),
                                "how much of the resource, in this flavor, the ClusterQueue's workloads may use at "
                                "once, guaranteed; unused, it may be lent to the cohort"),
                            Doc(Opt("borrowingLimit", Qty()),
                                "at most this much more than nominalQuota may be borrowed from the cohort; unset: "
                                "no limit"),
                            Doc(Opt("lendingLimit", Qty()),
                                "at most this much of nominalQuota may be lent to the cohort while unused; unset: "
                                "all of it")},
                           {CheckResourceQuota});
  SchemaRef flavor = Obj({Doc(Req("name", Str(StringRule::kDns1123Subdomain)), "the ResourceFlavor's name"),
                          Doc(Req("resources", Arr(resource, /*non_empty=*/true)),
                              "the quota of each covered resource in this flavor")});
  SchemaRef group = Obj({Doc(Req("coveredResources", Arr(Str(), /*non_empty=*/true)),
                             "the resources this group's flavors give quota for; a workload's requests for them "
                             "are all placed in one flavor of the group"),
                         Doc(Req("flavors", Arr(flavor, /*non_empty=*/true)),
                             "the flavors, in the order they are tried, with their quotas")});
  return Root({Doc(
      Opt("spec", Obj(
                      {
                          Doc(Opt("cohort", Str(StringRule::kDns1123Subdomain)),
                              "the cohort this ClusterQueue belongs to: ClusterQueues of one cohort borrow each "
                              "other's unused quota"),
                          Doc(Opt("namespaceSelector", LabelSelector()),
                              "which namespaces may submit to this ClusterQueue (through their LocalQueues); "
                              "unset: none, {}: all"),
                          Doc(Opt("resourceGroups", Arr(group)),
                              "describes groups of resources; each group covers a list of resources and the "
                              "flavors that give quota for them, tried in order"),
                          Doc(Opt("queueingStrategy", Enum({"StrictFIFO", "BestEffortFIFO"})),
                              "the order pending workloads are tried in: StrictFIFO (by priority, then age; the "
                              "head blocks the rest) or BestEffortFIFO (the default: those that do not fit let "
                              "others go first)"),
                          Doc(Opt("preemption",
                                  Obj({
                                      Opt("reclaimWithinCohort", Enum({"Never", "LowerPriority", "Any"})),
                                      Opt("borrowWithinCohort",
                                          Obj({Opt("policy", Enum({"Never", "LowerPriority"})),
                                               Opt("maxPriorityThreshold", Int(kInt32Min))})),
                                      Opt("withinClusterQueue",
                                          Enum({"Never", "LowerPriority", "LowerOrNewerEqualPriority"})),
                                  })),
                              "which workloads a pending one may preempt: to reclaim lent quota from the cohort, "
                              "while borrowing, and within this ClusterQueue"),
                          Doc(Opt("flavorFungibility",
                                  Obj({Opt("whenCanBorrow", Enum({"Borrow", "TryNextFlavor"})),
                                       Opt("whenCanPreempt", Enum({"Preempt", "TryNextFlavor"}))})),
                              "whether a workload borrows or preempts in a flavor, or tries the next flavor first"),
                          Doc(Opt("fairSharing", FairSharing()), "this ClusterQueue's weight in fair sharing"),
                          Doc(Opt("stopPolicy", Enum({"None", "Hold", "HoldAndDrain"})),
                              "Hold: admit nothing new; HoldAndDrain: also evict what runs; None: run"),
                          Opt("admissionChecks", Arr(Str())),
                          Opt("admissionChecksStrategy",
                              Obj({Opt("admissionChecks",
                                       Arr(Obj({Req("name", Str()), Opt("onFlavors", Arr(Str()))})))})),
                      },
                      {CheckClusterQueueSpec})),
      "the ClusterQueue's quotas per resource and flavor, its cohort, and how it queues and preempts")});
}

SchemaRef LocalQueueSchema() {
  return Root({Doc(Opt("spec", Obj({
                                   Doc(Opt("clusterQueue", Str(StringRule::kDns1123Subdomain)),
                                       "the ClusterQueue whose quota this namespace's workloads use"),
                                   Doc(Opt("stopPolicy", Enum({"None", "Hold", "HoldAndDrain"})),
                                       "Hold: admit nothing new from this queue; HoldAndDrain: also evict what runs"),
                                   Doc(Opt("fairSharing", FairSharing()), "this queue's weight in fair sharing"),
                               })),
                   "where a namespace submits work: a LocalQueue points at a ClusterQueue")});
}

SchemaRef WorkloadSchema() {
  SchemaRef pod_set = Obj(
      {
          Opt("name", Str(StringRule::kDns1123Label)),
          Opt("count", Int()),
          Opt("minCount", Int()),
          Req("template", PodTemplateSpec()),
          Opt("topologyRequest", OpenObj()),
      },
      {[](const json& v, const std::string& path, Errors& errors) {
        auto count = GetInt(v, "count");
        auto min_count = GetInt(v, "minCount");
        if (count && min_count && *min_count > *count) {
          errors.Add(FieldPath(path, "minCount"),
                     fmt::format("{} is more than count {}", *min_count, *count));
        }
      }});
  return Root({Doc(Opt("spec", Obj({
                                   Doc(Req("podSets", Arr(pod_set, /*non_empty=*/true)),
                                       "the groups of identical pods the workload runs, admitted together (a gang): "
                                       "each a name, a count and a pod template"),
                                   Doc(Opt("queueName", Str()), "the LocalQueue of its namespace it waits in"),
                                   Doc(Opt("priorityClassName", Str()), "the PriorityClass it runs at"),
                                   Doc(Opt("priority", Int(kInt32Min)),
                                       "the priority it runs at; set from priorityClassName when that is given"),
                                   Opt("priorityClassSource", Str()),
                                   Doc(Opt("active", Bool()), "false: it is not admitted (and is evicted if it runs)"),
                                   Doc(Opt("maximumExecutionTimeSeconds", Int(1)),
                                       "it is ended this long after admission"),
                               })),
                   "the unit the scheduler admits: a job's pods and what they need; its status says where it runs, "
                   "or why it waits")});
}

// ---------------------------------------------------------------------------
// Printer columns, as Kueue's CRDs print them, with what a GPU platform adds.

std::string FlavorTaints(const json& o, const ColumnOptions&) {
  const json* taints = Find(o, "spec.nodeTaints");
  if (!taints || !taints->is_array() || taints->empty()) return std::string("<none>");
  std::string out;
  for (const json& t : *taints) {
    if (!out.empty()) out += ",";
    const std::string value = TextAt(t, "value");
    out += TextAt(t, "key") + (value.empty() ? "" : "=" + value) + ":" + TextAt(t, "effect");
  }
  return out;
}

// The class a workload names, else the priority it runs at without one.
std::string WorkloadPriority(const json& o, const ColumnOptions& options) {
  const std::string cls = TextAt(o, "spec.priorityClassName");
  return cls.empty() ? std::to_string(UnnamedClassPriority(o, options.default_priority)) : cls;
}

// Its place in its ClusterQueue while it waits, from the scheduler's message
// ("...; position 3 in ClusterQueue gpu"); empty once admitted or unknown.
std::string WorkloadPosition(const json& o, const ColumnOptions&) {
  constexpr std::string_view kAt = "; position ";
  const std::string message = PendingMessage(o);
  const size_t at = message.rfind(kAt);
  if (at == std::string::npos) return "";
  const size_t start = at + kAt.size();
  size_t end = start;
  while (end < message.size() && std::isdigit(static_cast<unsigned char>(message[end]))) ++end;
  return message.substr(start, end - start);
}

// Why it waits, in a word: the reason of its QuotaReserved condition while that
// is not True ("ClusterQueueQuota", "NoCapacity"); empty once admitted.
std::string WorkloadPendingReason(const json& o, const ColumnOptions&) {
  if (ConditionStatus(o, "Admitted") == "True") return "";
  const json* c = FindCondition(o, "QuotaReserved");
  if (c == nullptr || TextAt(*c, "status") == "True") return "";
  return TextAt(*c, "reason");
}

PrinterColumn ConditionColumn(std::string_view name, std::string type) {
  return {.name = name,
          .description = fmt::format("the status of the {} condition", type),
          .cell = [type](const json& o, const ColumnOptions&) { return ConditionStatus(o, type); }};
}

}  // namespace

std::vector<KindDefinition> KueueKinds() {
  return {
      {.info = {.group = "kueue.x-k8s.io", .version = "v1beta1", .kind = "ResourceFlavor",
                .api_version = "kueue.x-k8s.io/v1beta1", .plural = "resourceflavors", .singular = "resourceflavor",
                .short_names = {"flavor", "flavors", "rf"}, .categories = {"kueue"}, .namespaced = false,
                .store_key = "kueue.x-k8s.io/ResourceFlavor"},
       .schema = ResourceFlavorSchema(),
       .columns = {NameColumn(),
                   {.name = "NODE LABELS",
                    .description = ".spec.nodeLabels",
                    .cell = [](const json& o, const ColumnOptions&) { return JoinMap(Find(o, "spec.nodeLabels")); }},
                   AgeColumn(),
                   {.name = "TAINTS", .priority = 1, .description = ".spec.nodeTaints", .cell = FlavorTaints}},
       // Every signed-in user reads the flavors (and their prices) and the queues' quotas:
       // what one needs to choose where to run and what it costs. Writing is the batch admin's.
       .roles = RoleGrants{.grants = {{.role = DefaultRole::kBasicUser, .verbs = verbs::kRead}},
                           .kueue = KueueRoles::kBatchAdmin}},
      {.info = {.group = "kueue.x-k8s.io", .version = "v1beta1", .kind = "ClusterQueue",
                .api_version = "kueue.x-k8s.io/v1beta1", .plural = "clusterqueues", .singular = "clusterqueue",
                .short_names = {"cq"}, .categories = {"kueue"}, .namespaced = false, .store_key = "kueue.x-k8s.io/ClusterQueue"},
       .schema = ClusterQueueSchema(),
       .columns = {NameColumn(),
                   FieldColumn("COHORT", "spec.cohort"),
                   FieldColumn("STRATEGY", "spec.queueingStrategy", "BestEffortFIFO"),
                   FieldColumn("PENDING WORKLOADS", "status.pendingWorkloads", "", 0, ColumnType::kInteger),
                   FieldColumn("ADMITTED WORKLOADS", "status.admittedWorkloads", "", 0, ColumnType::kInteger),
                   AgeColumn()},
       .roles = RoleGrants{.grants = {{.role = DefaultRole::kBasicUser, .verbs = verbs::kRead}},
                           .kueue = KueueRoles::kBatchAdmin},
       .controller = "scheduler-loop"},
      {.info = {.group = "kueue.x-k8s.io", .version = "v1beta1", .kind = "LocalQueue",
                .api_version = "kueue.x-k8s.io/v1beta1", .plural = "localqueues", .singular = "localqueue",
                .short_names = {"queue", "queues", "lq"}, .categories = {"kueue"}, .namespaced = true,
                .store_key = "kueue.x-k8s.io/LocalQueue"},
       .schema = LocalQueueSchema(),
       .columns = {NameColumn(),
                   FieldColumn("CLUSTERQUEUE", "spec.clusterQueue"),
                   FieldColumn("PENDING WORKLOADS", "status.pendingWorkloads", "", 0, ColumnType::kInteger),
                   FieldColumn("ADMITTED WORKLOADS", "status.admittedWorkloads", "", 0, ColumnType::kInteger),
                   AgeColumn()},
       .roles = RoleGrants{.kueue = KueueRoles::kBatchAdminAndTeam},
       .controller = "scheduler-loop"},
      {.info = {.group = "kueue.x-k8s.io", .version = "v1beta1", .kind = "Workload",
                .api_version = "kueue.x-k8s.io/v1beta1", .plural = "workloads", .singular = "workload",
                .short_names = {"wl"}, .categories = {"kueue"}, .namespaced = true, .store_key = "kueue.x-k8s.io/Workload"},
       .schema = WorkloadSchema(),
       .columns = {NameColumn(),
                   FieldColumn("QUEUE", "spec.queueName"),
                   FieldColumn("RESERVED IN", "status.admission.clusterQueue"),
                   ConditionColumn("ADMITTED", "Admitted"),
                   ConditionColumn("FINISHED", "Finished"),
                   {.name = "POSITION",
                    .type = ColumnType::kInteger,
                    .description = "its place in its ClusterQueue while it waits (1: next)",
                    .cell = WorkloadPosition},
                   {.name = "REASON",
                    .description = "why it waits, in a word (the QuotaReserved condition's reason)",
                    .cell = WorkloadPendingReason},
                   AgeColumn(),
                   {.name = "PRIORITY",
                    .priority = 1,
                    .description = "the PriorityClass named, else the priority it runs at",
                    .cell = WorkloadPriority},
                   {.name = "MESSAGE",
                    .priority = 1,
                    .description = "why it waits, in the scheduler's words",
                    .cell = [](const json& o, const ColumnOptions&) { return PendingMessage(o); }}},
       .roles = RoleGrants{.grants = {EditWrites()}, .kueue = KueueRoles::kBatchAdminAndTeam},
       .controller = "scheduler-loop"},
  };
}

}  // namespace tessera
