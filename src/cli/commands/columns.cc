#include "cli/commands/columns.h"

#include <fmt/format.h>

#include <functional>
#include <map>

#include "cli/commands/age.h"
#include "cli/commands/object_fields.h"
#include "cli/commands/workload_priority.h"

namespace tessera {
namespace {

using nlohmann::json;
using CellFn = std::function<std::string(const json&, const ColumnOptions&)>;

struct Column {
  std::string header;
  CellFn cell;
  bool wide_only = false;
};

std::string Age(const json& o, const ColumnOptions& options) {
  return AgeSince(TextAt(o, "metadata.creationTimestamp"), options.now);
}
std::string Name(const json& o, const ColumnOptions&) { return NameOf(o); }

Column NameColumn() { return {"NAME", Name}; }
Column AgeColumn() { return {"AGE", Age}; }
Column Field(std::string header, std::string path, std::string fallback = "", bool wide_only = false) {
  return {std::move(header),
          [path, fallback](const json& o, const ColumnOptions&) { return TextAt(o, path, fallback); },
          wide_only};
}

std::string ConditionStatus(const json& o, std::string_view type, std::string_view fallback = "") {
  const json* c = FindCondition(o, type);
  return c ? Text(Child(c, "status"), fallback) : std::string(fallback);
}

// --- nodes

std::string NodeStatus(const json& o, const ColumnOptions&) {
  const std::string ready = ConditionStatus(o, "Ready");
  std::string s = ready == "True" ? "Ready" : ready == "False" ? "NotReady" : "Unknown";
  if (const json* u = Find(o, "spec.unschedulable"); u && u->is_boolean() && u->get<bool>()) {
    s += ",SchedulingDisabled";
  }
  return s;
}

// --- pods

// As kubectl shows it: Terminating, else the container's waiting or terminated
// reason (CrashLoopBackOff, Completed, Error, OOMKilled), else the phase.
std::string PodStatus(const json& o, const ColumnOptions&) {
  if (Find(o, "metadata.deletionTimestamp")) return "Terminating";
  if (const json* statuses = Find(o, "status.containerStatuses"); statuses && statuses->is_array() && !statuses->empty()) {
    const json* state = Child(&(*statuses)[0], "state");
    for (const char* kind : {"waiting", "terminated"}) {
      const std::string reason = Text(Child(Child(state, kind), "reason"));
      if (!reason.empty()) return reason;
    }
  }
  const std::string reason = TextAt(o, "status.reason");
  return reason.empty() ? Text(Find(o, "status.phase"), "Pending") : reason;
}

std::string Allocatable(const json& o, const std::string& resource) {
  const json* v = Child(Find(o, "status.allocatable"), resource);
  return v ? DisplayQuantity(resource, *v) : "0";
}

// --- jobs

std::string JobQueue(const json& o) { return Text(Child(Find(o, "metadata.labels"), "kueue.x-k8s.io/queue-name")); }

std::string JobStatus(const json& o, const ColumnOptions&) {
  if (ConditionStatus(o, "Complete") == "True") return "Complete";
  if (ConditionStatus(o, "Failed") == "True") return "Failed";
  if (const json* s = Find(o, "spec.suspend"); s && s->is_boolean() && s->get<bool>()) return "Suspended";
  const json* active = Find(o, "status.active");
  if (active && active->is_number_integer() && active->get<int64_t>() > 0) return "Running";
  return "Pending";
}

std::string JobCompletions(const json& o, const ColumnOptions&) {
  // kubectl's rule: succeeded/completions; without completions, "of parallelism" when above 1.
  const std::string succeeded = TextAt(o, "status.succeeded", "0");
  if (const json* c = Find(o, "spec.completions"); c && c->is_number_integer()) {
    return fmt::format("{}/{}", succeeded, c->get<int64_t>());
  }
  const json* p = Find(o, "spec.parallelism");
  const int64_t parallelism = p && p->is_number_integer() ? p->get<int64_t>() : 1;
  return parallelism > 1 ? fmt::format("{}/1 of {}", succeeded, parallelism) : fmt::format("{}/1", succeeded);
}

std::string JobDuration(const json& o, const ColumnOptions& options) {
  auto start = ParseTimeSeconds(TextAt(o, "status.startTime"));
  if (!start) return "";
  auto end = ParseTimeSeconds(TextAt(o, "status.completionTime"));
  return HumanDuration((end ? *end : options.now) - *start);
}

std::string TemplateContainers(const json& o, const std::function<std::string(const json&)>& field) {
  const json* containers = Find(o, "spec.template.spec.containers");
  if (!containers || !containers->is_array()) return "";
  std::string out;
  for (const json& c : *containers) {
    if (!out.empty()) out += ",";
    out += field(c);
  }
  return out;
}

std::string CommandLine(const json& container) {
  std::string out;
  for (const char* key : {"command", "args"}) {
    const json* parts = Child(&container, key);
    if (!parts || !parts->is_array()) continue;
    for (const json& p : *parts) {
      if (!out.empty()) out += ' ';
      out += Text(&p);
    }
  }
  return out.empty() ? "<none>" : out;
}

// --- pods

std::string PodReady(const json& o, const ColumnOptions&) {
  const json* spec_containers = Find(o, "spec.containers");
  const size_t total = spec_containers && spec_containers->is_array() ? spec_containers->size() : 0;
  size_t ready = 0;
  if (const json* statuses = Find(o, "status.containerStatuses"); statuses && statuses->is_array()) {
    for (const json& s : *statuses) {
      const json* r = Child(&s, "ready");
      if (r && r->is_boolean() && r->get<bool>()) ++ready;
    }
  }
  return fmt::format("{}/{}", ready, total);
}

std::string PodRestarts(const json& o, const ColumnOptions&) {
  int64_t restarts = 0;
  if (const json* statuses = Find(o, "status.containerStatuses"); statuses && statuses->is_array()) {
    for (const json& s : *statuses) {
      const json* r = Child(&s, "restartCount");
      if (r && r->is_number_integer()) restarts += r->get<int64_t>();
    }
  }
  return std::to_string(restarts);
}

std::string PodGpus(const json& o, const ColumnOptions&) {
  int64_t milli = 0;
  if (const json* containers = Find(o, "spec.containers"); containers && containers->is_array()) {
    for (const json& c : *containers) {
      const json* r = Child(Find(c, "resources.requests"), "nvidia.com/gpu");
      if (!r) r = Child(Find(c, "resources.limits"), "nvidia.com/gpu");
      if (r) milli += QuantityValue("nvidia.com/gpu", *r);
    }
  }
  return FormatQuantityValue("nvidia.com/gpu", milli);
}

// --- workloads

// The class a workload names, else the priority it runs at without one.
std::string WorkloadPriority(const json& o, const ColumnOptions& options) {
  const std::string cls = TextAt(o, "spec.priorityClassName");
  return cls.empty() ? std::to_string(UnnamedClassPriority(o, options.default_priority)) : cls;
}

// --- resource quotas: "requests.cpu: 0/64, pods: 0/50" as kubectl prints them.

std::string QuotaUsage(const json& o, bool limits) {
  const json* hard = Find(o, "status.hard");
  if (!hard || !hard->is_object()) hard = Find(o, "spec.hard");
  if (!hard || !hard->is_object()) return "";
  const json* used = Find(o, "status.used");
  std::string out;
  for (const auto& [resource, amount] : hard->items()) {
    if (resource.starts_with("limits.") != limits) continue;
    const json* u = Child(used, resource);
    if (!out.empty()) out += ", ";
    out += fmt::format("{}: {}/{}", resource, u ? DisplayQuantity(resource, *u) : "0",
                       DisplayQuantity(resource, amount));
  }
  return out;
}

// --- events

std::string EventLastSeen(const json& o, const ColumnOptions& options) {
  for (const char* f : {"lastTimestamp", "eventTime", "firstTimestamp", "metadata.creationTimestamp"}) {
    const std::string t = TextAt(o, f);
    if (!t.empty()) return AgeSince(t, options.now);
  }
  return "<unknown>";
}

std::string EventObject(const json& o, const ColumnOptions&) {
  std::string kind = TextAt(o, "involvedObject.kind");
  for (char& c : kind) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return fmt::format("{}/{}", kind, TextAt(o, "involvedObject.name"));
}

// --- services and endpoint slices, as kubectl prints them

// "80/TCP,443/TCP"; "<none>" without ports.
std::string ServicePorts(const json& o, const ColumnOptions&) {
  const json* ports = Find(o, "spec.ports");
  if (!ports || !ports->is_array() || ports->empty()) return "<none>";
  std::string out;
  for (const json& p : *ports) {
    if (!out.empty()) out += ",";
    const std::string node_port = TextAt(p, "nodePort");
    out += TextAt(p, "port") + (node_port.empty() || node_port == "0" ? "" : ":" + node_port) + "/" +
           TextAt(p, "protocol", "TCP");
  }
  return out;
}

// The first three of `items`, then " + N more...", as kubectl lists them; "<unset>" when none.
std::string FirstThree(const std::vector<std::string>& items) {
  if (items.empty()) return "<unset>";
  std::string out;
  for (size_t i = 0; i < items.size() && i < 3; ++i) out += (i == 0 ? "" : ",") + items[i];
  if (items.size() > 3) out += fmt::format(" + {} more...", items.size() - 3);
  return out;
}

std::string SlicePorts(const json& o, const ColumnOptions&) {
  std::vector<std::string> ports;
  if (const json* list = Find(o, "ports"); list && list->is_array()) {
    for (const json& p : *list) {
      const json* port = Child(&p, "port");
      ports.push_back(port ? Text(port) : TextAt(p, "name", "*"));
    }
  }
  return FirstThree(ports);
}

std::string SliceEndpoints(const json& o, const ColumnOptions&) {
  std::vector<std::string> addresses;
  if (const json* list = Find(o, "endpoints"); list && list->is_array()) {
    for (const json& e : *list) {
      const json* a = Child(&e, "addresses");
      if (!a || !a->is_array()) continue;
      for (const json& address : *a) addresses.push_back(Text(&address));
    }
  }
  return FirstThree(addresses);
}

const std::vector<Column>& ColumnsFor(const KindInfo& kind) {
  static const std::map<std::string_view, std::vector<Column>> table = {
      {"/Namespace", {NameColumn(), Field("STATUS", "status.phase", "Active"), AgeColumn()}},
      {"/Node",
       {NameColumn(),
        {"STATUS", NodeStatus},
        {"GPUS", [](const json& o, const ColumnOptions&) { return Allocatable(o, "nvidia.com/gpu"); }},
        {"GPU MODEL", [](const json& o, const ColumnOptions&) {
           return Text(Child(Find(o, "metadata.labels"), "nvidia.com/gpu.product"), "<none>");
         }},
        AgeColumn(),
        {"CPU", [](const json& o, const ColumnOptions&) { return Allocatable(o, "cpu"); }, true},
        {"MEMORY", [](const json& o, const ColumnOptions&) { return Allocatable(o, "memory"); }, true}}},
      {"scheduling.k8s.io/PriorityClass",
       {NameColumn(), Field("VALUE", "value", "0"), Field("GLOBAL-DEFAULT", "globalDefault", "false"), AgeColumn(),
        Field("PREEMPTIONPOLICY", "preemptionPolicy", "PreemptLowerPriority")}},
      {"kueue.x-k8s.io/ClusterQueue",
       {NameColumn(), Field("COHORT", "spec.cohort"), Field("STRATEGY", "spec.queueingStrategy", "BestEffortFIFO"),
        Field("PENDING WORKLOADS", "status.pendingWorkloads"), Field("ADMITTED WORKLOADS", "status.admittedWorkloads"),
        AgeColumn()}},
      {"kueue.x-k8s.io/LocalQueue",
       {NameColumn(), Field("CLUSTERQUEUE", "spec.clusterQueue"), Field("PENDING WORKLOADS", "status.pendingWorkloads"),
        Field("ADMITTED WORKLOADS", "status.admittedWorkloads"), AgeColumn()}},
      {"kueue.x-k8s.io/ResourceFlavor",
       {NameColumn(),
        {"NODE LABELS", [](const json& o, const ColumnOptions&) { return JoinMap(Find(o, "spec.nodeLabels")); }},
        AgeColumn(),
        {"TAINTS",
         [](const json& o, const ColumnOptions&) {
           const json* taints = Find(o, "spec.nodeTaints");
           if (!taints || !taints->is_array() || taints->empty()) return std::string("<none>");
           std::string out;
           for (const json& t : *taints) {
             if (!out.empty()) out += ",";
             const std::string value = TextAt(t, "value");
             out += TextAt(t, "key") + (value.empty() ? "" : "=" + value) + ":" + TextAt(t, "effect");
           }
           return out;
         },
         true}}},
      {"kueue.x-k8s.io/Workload",
       {NameColumn(), Field("QUEUE", "spec.queueName"), Field("RESERVED IN", "status.admission.clusterQueue"),
        {"ADMITTED", [](const json& o, const ColumnOptions&) { return ConditionStatus(o, "Admitted"); }},
        {"FINISHED", [](const json& o, const ColumnOptions&) { return ConditionStatus(o, "Finished"); }},
        {"PRIORITY", WorkloadPriority},
        AgeColumn(),
        {"MESSAGE", [](const json& o, const ColumnOptions&) { return PendingMessage(o); }, true}}},
      {"batch/Job",
       {NameColumn(),
        {"QUEUE", [](const json& o, const ColumnOptions&) { return JobQueue(o); }},
        {"STATUS", JobStatus},
        {"COMPLETIONS", JobCompletions},
        {"DURATION", JobDuration},
        AgeColumn(),
        {"CONTAINERS",
         [](const json& o, const ColumnOptions&) {
           return TemplateContainers(o, [](const json& c) { return TextAt(c, "name"); });
         },
         true},
        {"COMMAND", [](const json& o, const ColumnOptions&) { return TemplateContainers(o, CommandLine); }, true}}},
      {"batch.volcano.sh/Job",
       {NameColumn(), Field("STATUS", "status.state.phase", "Pending"), Field("MINAVAILABLE", "spec.minAvailable"),
        Field("RUNNINGS", "status.running", "0"),
        {"QUEUE",
         [](const json& o, const ColumnOptions&) {
           const std::string q = TextAt(o, "spec.queue");
           return q.empty() ? JobQueue(o) : q;
         }},
        AgeColumn()}},
      {"/Pod",
       {NameColumn(),
        {"READY", PodReady},
        {"STATUS", PodStatus},
        {"RESTARTS", PodRestarts},
        AgeColumn(),
        // -o wide: its IP (the pod network's), as kubectl shows it before NODE.
        {"IP",
         [](const json& o, const ColumnOptions&) {
           const std::string ip = TextAt(o, "status.podIP");
           return ip.empty() ? std::string("<none>") : ip;
         },
         true},
        Field("NODE", "spec.nodeName", "<none>"),
        {"GPUS", PodGpus, true},
        {"GPU DEVICES",
         [](const json& o, const ColumnOptions&) {
           return Text(Child(Find(o, "metadata.annotations"), "tessera.dev/gpu-devices"), "<none>");
         },
         true}}},
      {"/ResourceQuota",
       {NameColumn(),
        AgeColumn(),
        {"REQUEST", [](const json& o, const ColumnOptions&) { return QuotaUsage(o, false); }},
        {"LIMIT", [](const json& o, const ColumnOptions&) { return QuotaUsage(o, true); }}}},
      {"/Event",
       {{"LAST SEEN", EventLastSeen}, Field("TYPE", "type"), Field("REASON", "reason"), {"OBJECT", EventObject},
        Field("MESSAGE", "message")}},
      {"/ServiceAccount", {NameColumn(), AgeColumn()}},
      {"/Service",
       {NameColumn(), Field("TYPE", "spec.type", "ClusterIP"), Field("CLUSTER-IP", "spec.clusterIP", "<none>"),
        {"EXTERNAL-IP",
         [](const json& o, const ColumnOptions&) {
           const json* ips = Find(o, "spec.externalIPs");
           if (!ips || !ips->is_array() || ips->empty()) return std::string("<none>");
           std::string out;
           for (const json& ip : *ips) out += (out.empty() ? "" : ",") + Text(&ip);
           return out;
         }},
        {"PORT(S)", ServicePorts},
        AgeColumn(),
        {"SELECTOR", [](const json& o, const ColumnOptions&) { return JoinMap(Find(o, "spec.selector")); }, true}}},
      {"discovery.k8s.io/EndpointSlice",
       {NameColumn(), Field("ADDRESSTYPE", "addressType"), {"PORTS", SlicePorts}, {"ENDPOINTS", SliceEndpoints},
        AgeColumn()}},
      {"/Secret",
       {NameColumn(), Field("TYPE", "type", "Opaque"),
        {"DATA", [](const json& o, const ColumnOptions&) {
           const json* data = Find(o, "data");
           return std::to_string(data != nullptr && data->is_object() ? data->size() : 0);
         }},
        AgeColumn()}},
      // kubectl's.
      {"/PersistentVolumeClaim",
       {NameColumn(), Field("STATUS", "status.phase", "Pending"), Field("VOLUME", "spec.volumeName", ""),
        Field("CAPACITY", "status.capacity.storage", ""),
        {"ACCESS MODES", [](const json& o, const ColumnOptions&) {
           static const std::map<std::string, std::string> kShort{
               {"ReadWriteOnce", "RWO"}, {"ReadOnlyMany", "ROX"}, {"ReadWriteMany", "RWX"}, {"ReadWriteOncePod", "RWOP"}};
           std::string out;
           const json* modes = Find(o, "spec.accessModes");
           if (modes == nullptr || !modes->is_array()) return out;
           for (const json& m : *modes) {
             auto it = m.is_string() ? kShort.find(m.get<std::string>()) : kShort.end();
             if (it != kShort.end()) out += (out.empty() ? "" : ",") + it->second;
           }
           return out;
         }},
        Field("STORAGECLASS", "spec.storageClassName", ""), AgeColumn()}},
      // kubectl's: the keys of data and binaryData together.
      {"/ConfigMap",
       {NameColumn(),
        {"DATA", [](const json& o, const ColumnOptions&) {
           size_t n = 0;
           for (const char* field : {"data", "binaryData"}) {
             const json* data = Find(o, field);
             if (data != nullptr && data->is_object()) n += data->size();
           }
           return std::to_string(n);
         }},
        AgeColumn()}},
      {"tessera.dev/Budget",
       {NameColumn(), Field("PERIOD", "spec.period", "Monthly"), Field("GPU-HOURS", "spec.gpuHours", "-"),
        Field("USED GPU-HOURS", "status.usedGpuHours", "0"), Field("COST", "spec.cost", "-"),
        Field("USED COST", "status.usedCost", "0"), AgeColumn(),
        Field("PERIOD END", "status.periodEnd", "", true)}},
      {"tessera.dev/ApprovalPolicy",
       {NameColumn(), Field("GPUS", "spec.thresholds.gpus", "-"), Field("GPU-HOURS", "spec.thresholds.gpuHours", "-"),
        Field("COST", "spec.thresholds.estimatedCost", "-"),
        {"PRIORITY CLASSES",
         [](const json& o, const ColumnOptions&) {
           const json* classes = Find(o, "spec.thresholds.priorityClasses");
           if (!classes || !classes->is_array() || classes->empty()) return std::string("-");
           std::string out;
           for (const json& c : *classes) out += (out.empty() ? "" : ",") + Text(&c);
           return out;
         }},
        Field("APPROVALS", "spec.requiredApprovals", "1"), AgeColumn()}},
      {"tessera.dev/ApprovalRequest",
       {NameColumn(), Field("WORKLOAD", "spec.workload"), Field("REQUESTER", "spec.requester"),
        Field("PHASE", "status.phase", "Pending"),
        {"APPROVALS",
         [](const json& o, const ColumnOptions&) {
           const json* approvals = Find(o, "status.approvals");
           const size_t got = approvals && approvals->is_array() ? approvals->size() : 0;
           return fmt::format("{}/{}", got, TextAt(o, "spec.requiredApprovals", "1"));
         }},
        AgeColumn(), Field("EXPIRES", "spec.expiresAt", "", true),
        {"REASON",
         [](const json& o, const ColumnOptions&) {
           const json* reasons = Find(o, "spec.reasons");
           return reasons && reasons->is_array() && !reasons->empty() ? Text(&(*reasons)[0]) : std::string();
         },
         true}}},
  };
  static const std::vector<Column> fallback = {NameColumn(), AgeColumn()};
  auto it = table.find(kind.store_key);
  return it == table.end() ? fallback : it->second;
}

}  // namespace

std::string PendingMessage(const json& workload) {
  if (ConditionStatus(workload, "Admitted") == "True") return "";
  for (std::string_view type : {"QuotaReserved", "Admitted"}) {
    const json* c = FindCondition(workload, type);
    if (c && Text(Child(c, "status")) != "True") {
      const std::string message = Text(Child(c, "message"));
      if (!message.empty()) return message;
    }
  }
  return "";
}

std::vector<std::string> TableHeaders(const KindInfo& kind, const ColumnOptions& options) {
  std::vector<std::string> headers;
  if (options.with_namespace && kind.namespaced) headers.push_back("NAMESPACE");
  for (const Column& c : ColumnsFor(kind)) {
    if (!c.wide_only || options.wide) headers.push_back(c.header);
  }
  if (options.show_labels) headers.push_back("LABELS");
  return headers;
}

std::vector<std::string> TableRow(const KindInfo& kind, const json& object, const ColumnOptions& options) {
  std::vector<std::string> cells;
  if (options.with_namespace && kind.namespaced) cells.push_back(NamespaceOf(object));
  for (const Column& c : ColumnsFor(kind)) {
    if (!c.wide_only || options.wide) cells.push_back(c.cell(object, options));
  }
  if (options.show_labels) {
    // As kubectl prints them: key=value, by key, comma-separated.
    std::string labels;
    const json* all = Find(object, "metadata.labels");
    if (all && all->is_object()) {
      for (const auto& [key, value] : all->items()) {
        labels += fmt::format("{}{}={}", labels.empty() ? "" : ",", key, value.is_string() ? value.get<std::string>() : value.dump());
      }
    }
    cells.push_back(labels.empty() ? "<none>" : labels);
  }
  return cells;
}

}  // namespace tessera
