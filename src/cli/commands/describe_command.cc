#include "cli/commands/describe_command.h"
#include "cli/commands/pipelinerun_describe.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <optional>
#include <sstream>

#include "api/convert.h"
#include "api/age.h"
#include "api/object_fields.h"
#include "api/printer_columns.h"
#include "cli/commands/describe_writer.h"
#include "cli/commands/exit_codes.h"
#include "cli/commands/list_objects.h"
#include "cli/commands/queue_usage.h"
#include "cli/commands/resource_paths.h"
#include "cli/commands/server_errors.h"
#include "cli/commands/table_printer.h"
#include "cli/commands/workload_priority.h"

namespace tessera {
namespace {

using nlohmann::json;

constexpr size_t kDescribePadding = 2;  // kubectl describe's tables

// A table under a section, with kubectl describe's dashed line under the headers.
void WriteTable(DescribeWriter& w, int indent, const std::vector<std::string>& headers,
                const std::vector<std::vector<std::string>>& rows) {
  Table table(headers, kDescribePadding);
  std::vector<std::string> dashes;
  for (const std::string& h : headers) dashes.push_back(std::string(h.size(), '-'));
  table.AddRow(dashes);
  for (const auto& row : rows) table.AddRow(row);
  std::ostringstream text;
  table.Print(text);
  std::istringstream lines(text.str());
  for (std::string line; std::getline(lines, line);) w.Raw(indent, line);
}

std::string Timestamp(const std::string& text, int64_t now) {
  if (text.empty()) return "<unknown>";
  auto t = ParseTimeSeconds(text);
  return t ? fmt::format("{} ({} ago)", text, HumanDuration(now - *t)) : text;
}

// Devices of one pod's placement: [0, 1] or [{device: 2, milli: 250}] -> "0, 1" / "2 (0.25)".
std::string DeviceList(const json* devices) {
  if (!devices || !devices->is_array() || devices->empty()) return "<none>";
  std::string out;
  for (const json& d : *devices) {
    if (!out.empty()) out += ", ";
    if (!d.is_object()) {
      out += Text(&d);
      continue;
    }
    std::string index = TextAt(d, "device");
    if (index.empty()) index = TextAt(d, "index");
    const json* share = Child(&d, "milli");
    if (share && share->is_number_integer() && share->get<int64_t>() != 1000) {
      out += fmt::format("{} ({})", index, FormatQuantityValue("nvidia.com/gpu", share->get<int64_t>()));
    } else if (const json* fraction = Child(&d, "fraction"); fraction && Text(fraction) != "1") {
      out += fmt::format("{} ({})", index, Text(fraction));
    } else {
      out += index;
    }
  }
  return out;
}

class Describer {
 public:
  Describer(const CommandContext& ctx, ApiClient& client) : client_(client), now_(ctx.Now()) {}

  std::string Describe(const KindInfo& kind, const json& obj) {
    DescribeWriter w;
    Header(w, kind, obj);
    if (kind.store_key == "kueue.x-k8s.io/Workload") WorkloadSummary(w, obj);
    if (kind.store_key == "batch/Job" || kind.store_key == "batch.volcano.sh/Job" ||
        kind.store_key == "tessera.dev/TrainingJob") {
      JobWorkload(w, kind, obj);
    }
    if (kind.store_key == "tessera.dev/Sweep") WaitingParts(w, obj, "tessera.dev/sweep", "tessera.dev/trial", "Trial");
    if (kind.store_key == "tessera.dev/PipelineRun") {
      WaitingParts(w, obj, "tessera.dev/pipelinerun", "tessera.dev/step", "Step");
    }
    if (kind.store_key == "tessera.dev/InferenceService") InferenceReplicas(w, obj);
    w.Object(0, obj, {"apiVersion", "kind", "metadata", "spec", "status"});
    if (const json* spec = Child(&obj, "spec")) {
      w.Field(0, "Spec", std::nullopt);
      w.Object(2, *spec);
    }
    std::vector<std::string> status_skip = {"conditions"};
    if (kind.store_key == "tessera.dev/PipelineRun") {
      status_skip.push_back("pipelineSpec");  // drawn as its DAG below
      w.Field(0, "DAG", std::nullopt);
      for (const std::string& line : PipelineRunDagLines(obj)) w.Raw(2, line);
    }
    if (kind.store_key == "kueue.x-k8s.io/Workload") status_skip.push_back("admission");
    if (kind.store_key == "tessera.dev/InferenceService") {  // drawn as tables above; the templates are long
      for (const char* k : {"revisions", "stableTemplate", "previousTemplate"}) status_skip.push_back(k);
    }
    if (kind.store_key == "/Node") {
      w.Field(0, "GPUs", std::nullopt);
      NodeGpus(w, obj);
    }
    if (const json* status = Child(&obj, "status"); status && status->is_object()) {
      json rest = *status;
      for (const std::string& k : status_skip) rest.erase(k);
      if (!rest.empty()) {
        w.Field(0, "Status", std::nullopt);
        w.Object(2, rest);
      }
    }
    if (kind.store_key == "kueue.x-k8s.io/Workload") Admission(w, obj);
    if (kind.store_key == "kueue.x-k8s.io/ClusterQueue") ClusterQueueUsage(w, obj);
    if (kind.store_key == "/Namespace") NamespaceContents(w, NameOf(obj));
    Conditions(w, kind, obj);
    Events(w, kind, obj);
    return w.Render();
  }

 private:
  void Header(DescribeWriter& w, const KindInfo& kind, const json& obj) {
    w.Field(0, "Name", NameOf(obj));
    if (kind.namespaced) w.Field(0, "Namespace", NamespaceOf(obj));
    const json* labels = Find(obj, "metadata.labels");
    if (!labels || !labels->is_object() || labels->empty()) {
      w.Field(0, "Labels", "<none>");
    } else {
      bool first = true;
      for (const auto& [k, v] : labels->items()) {
        std::string text = k + "=" + Text(&v);
        if (first) w.Field(0, "Labels", text); else w.Continue(0, text);
        first = false;
      }
    }
    const json* annotations = Find(obj, "metadata.annotations");
    bool first = true;
    if (annotations && annotations->is_object()) {
      for (const auto& [k, v] : annotations->items()) {
        if (kind.store_key == "/Node" && k == "tessera.dev/gpus") continue;  // shown as the GPUs table
        std::string text = k + ": " + Text(&v);
        if (first) w.Field(0, "Annotations", text); else w.Continue(0, text);
        first = false;
      }
    }
    if (first) w.Field(0, "Annotations", "<none>");
    w.Field(0, "API Version", TextAt(obj, "apiVersion"));
    w.Field(0, "Kind", TextAt(obj, "kind"));
    w.Field(0, "Creation Timestamp", Timestamp(TextAt(obj, "metadata.creationTimestamp"), now_));
  }

  // Queue, priority and, while it waits, why: the scheduler's own words.
  void WorkloadSummary(DescribeWriter& w, const json& obj) {
    w.Field(0, "Queue", TextAt(obj, "spec.queueName", "<none>"));
    w.Field(0, "Priority", Priority(obj));
    const json* admitted = FindCondition(obj, "Admitted");
    if (admitted && TextAt(*admitted, "status") == "True") {
      w.Field(0, "Admitted", fmt::format("in ClusterQueue {}", TextAt(obj, "status.admission.clusterQueue", "<unknown>")));
    } else if (const std::string message = PendingMessage(obj); !message.empty()) {
      w.Field(0, "Pending", message);
    } else if (!FindCondition(obj, "QuotaReserved") && !admitted) {
      w.Field(0, "Pending", "not yet considered by the scheduler (no QuotaReserved or Admitted condition yet)");
    }
    LastCheckpoint(w, obj);
  }

  // "Last Checkpoint: 4m ago (2026-12-02T10:00:00Z)": the newest of the
  // Workload's annotation tessera.dev/last-checkpoint (what least-waste
  // preemption reads) and its pods' (each pod's agent sets it from the pod's
  // checkpoint file; the server's checkpoint controller carries the newest to
  // the Workload, a pass later). Nothing when none has one.
  void LastCheckpoint(DescribeWriter& w, const json& workload) {
    std::string at = Text(Child(Find(workload, "metadata.annotations"), kLastCheckpointAnnotation));
    std::optional<int64_t> when = ParseTimeSeconds(at);
    {
      const KindInfo* pod_kind = FindKindByApiVersion("v1", "Pod");
      for (const json& pod : ListQuietly(*pod_kind, NamespaceOf(workload),
                                         fmt::format("tessera.dev/workload={}", NameOf(workload)))) {
        const std::string text = Text(Child(Find(pod, "metadata.annotations"), kLastCheckpointAnnotation));
        const std::optional<int64_t> t = ParseTimeSeconds(text);
        if (t && (!when || *t > *when)) {
          when = t;
          at = text;
        }
      }
    }
    if (when) w.Field(0, "Last Checkpoint", fmt::format("{} ago ({})", HumanDuration(now_ - *when), at));
  }

  // The class a workload names (with spec.priority when set), else the priority
  // it runs at without one (workload_priority.h), saying where that comes from.
  std::string Priority(const json& workload) {
    const std::string cls = TextAt(workload, "spec.priorityClassName");
    const std::string value = TextAt(workload, "spec.priority");
    if (!cls.empty()) return value.empty() ? cls : fmt::format("{} ({})", cls, value);
    if (!value.empty()) return value;
    if (!default_class_) default_class_ = FetchDefaultPriorityClass(client_);
    if (default_class_->name.empty()) return "0 (no PriorityClass named, none is the global default)";
    return fmt::format("{} (the global default PriorityClass {})", default_class_->value, default_class_->name);
  }

  // A Job's or TrainingJob's Workload (owned by it, or named job-NAME,
  // vcjob-NAME, trainingjob-NAME) and what it says; a TrainingJob's growth
  // placeholder too, while it has one.
  void JobWorkload(DescribeWriter& w, const KindInfo& kind, const json& job) {
    const KindInfo* wl_kind = FindKindByApiVersion("kueue.x-k8s.io/v1beta1", "Workload");
    const std::vector<json> workloads = ListQuietly(*wl_kind, NamespaceOf(job));
    const std::string name = NameOf(job);
    const std::string prefix = kind.group == "batch" ? "job-" : kind.kind == "TrainingJob" ? "trainingjob-" : "vcjob-";
    const json* found = nullptr;
    const json* growth = nullptr;
    for (const json& wl : workloads) {
      if (Text(Child(Find(wl, "metadata.annotations"), kPlaceholderAnnotation)) == "true") {
        if (NameOf(wl) == prefix + name + "-grow") growth = &wl;
        continue;
      }
      if (found) continue;
      const json* owners = Find(wl, "metadata.ownerReferences");
      if (owners && owners->is_array()) {
        for (const json& o : *owners) {
          if (TextAt(o, "name") == name && TextAt(o, "kind") == kind.kind &&
              TextAt(o, "apiVersion", std::string(kind.api_version)) == kind.api_version) {
            found = &wl;
          }
        }
      }
      if (!found && NameOf(wl) == prefix + name) found = &wl;
    }
    if (!found) {
      w.Field(0, "Workload", "<none yet>");
      return;
    }
    w.Field(0, "Workload", NameOf(*found));
    WorkloadState(w, *found);
    LastCheckpoint(w, *found);
    if (growth) {
      const json* admitted = FindCondition(*growth, "Admitted");
      int64_t held = 0;
      if (const json* sets = Find(*growth, "status.admission.podSetAssignments"); sets && sets->is_array()) {
        for (const json& set : *sets) held += set.is_object() ? set.value("count", int64_t{0}) : 0;
      }
      const std::string why = PendingMessage(*growth);
      w.Field(0, "Growth", admitted && TextAt(*admitted, "status") == "True"
                               ? fmt::format("room for {} more workers is held ({}): the gang grows at its next checkpoint",
                                             held, NameOf(*growth))
                               : fmt::format("waiting for room ({}): {}", NameOf(*growth),
                                             why.empty() ? "not yet considered by the scheduler" : why));
    }
  }

  // "Admitted: in ClusterQueue X", or "Pending: <the scheduler's reason>".
  void WorkloadState(DescribeWriter& w, const json& workload) {
    const json* admitted = FindCondition(workload, "Admitted");
    if (admitted && TextAt(*admitted, "status") == "True") {
      w.Field(0, "Admitted", fmt::format("in ClusterQueue {}", TextAt(workload, "status.admission.clusterQueue")));
    } else if (std::string message = PendingMessage(workload); !message.empty()) {
      w.Field(0, "Pending", message);
    }
  }

  // A Sweep's trials or a PipelineRun's steps that wait: each is a Job (labelled
  // `label`=NAME) whose Workload is not admitted; the scheduler's reason for each.
  void WaitingParts(DescribeWriter& w, const json& obj, const char* label, const char* part_label,
                    const char* part_header) {
    const KindInfo* job_kind = FindKindByApiVersion("batch/v1", "Job");
    const KindInfo* wl_kind = FindKindByApiVersion("kueue.x-k8s.io/v1beta1", "Workload");
    const std::string selector = fmt::format("{}={}", label, NameOf(obj));
    std::map<std::string, const json*> workloads;
    const std::vector<json> wls = ListQuietly(*wl_kind, NamespaceOf(obj));
    for (const json& wl : wls) workloads[NameOf(wl)] = &wl;
    std::vector<std::vector<std::string>> rows;
    for (const json& job : ListQuietly(*job_kind, NamespaceOf(obj), selector)) {
      const json* complete = FindCondition(job, "Complete");
      const json* failed = FindCondition(job, "Failed");
      if ((complete && TextAt(*complete, "status") == "True") || (failed && TextAt(*failed, "status") == "True")) continue;
      auto it = workloads.find("job-" + NameOf(job));
      std::string why;
      if (it == workloads.end()) {
        why = "no Workload yet (the job controller makes it on its next pass)";
      } else {
        const json* admitted = FindCondition(*it->second, "Admitted");
        if (admitted && TextAt(*admitted, "status") == "True") continue;
        why = PendingMessage(*it->second);
        if (why.empty()) why = "not yet considered by the scheduler";
      }
      const std::string part = Text(Child(Find(job, "metadata.labels"), part_label));
      rows.push_back({part.empty() ? NameOf(job) : part, NameOf(job), why});
    }
    if (rows.empty()) {
      w.Field(0, "Waiting", "<none>");
      return;
    }
    w.Field(0, "Waiting", std::nullopt);
    WriteTable(w, 2, {part_header, "Job", "Why"}, rows);
  }

  // An InferenceService's revisions (replicas, ready, traffic) and each
  // replica: its Workload, revision, pod and node, and why one waits.
  void InferenceReplicas(DescribeWriter& w, const json& obj) {
    std::vector<std::vector<std::string>> revisions;
    if (const json* list = Find(obj, "status.revisions"); list && list->is_array()) {
      for (const json& r : *list) {
        revisions.push_back({TextAt(r, "name"), TextAt(r, "replicas"), TextAt(r, "readyReplicas"),
                             TextAt(r, "trafficPercent") + "%"});
      }
    }
    if (revisions.empty()) {
      w.Field(0, "Revisions", "<none>");
    } else {
      w.Field(0, "Revisions", std::nullopt);
      WriteTable(w, 2, {"Revision", "Replicas", "Ready", "Traffic"}, revisions);
    }
    const KindInfo* wl_kind = FindKindByApiVersion("kueue.x-k8s.io/v1beta1", "Workload");
    const KindInfo* pod_kind = FindKindByApiVersion("v1", "Pod");
    const std::string selector = "tessera.dev/inferenceservice=" + NameOf(obj);
    std::map<std::string, const json*> pod_of;  // by workload
    const std::vector<json> pods = ListQuietly(*pod_kind, NamespaceOf(obj), selector);
    for (const json& p : pods) pod_of[Text(Child(Find(p, "metadata.labels"), "tessera.dev/workload"))] = &p;
    std::vector<std::vector<std::string>> rows;
    for (const json& wl : ListQuietly(*wl_kind, NamespaceOf(obj), selector)) {
      const std::string revision = Text(Child(Find(wl, "metadata.labels"), "tessera.dev/revision"));
      auto it = pod_of.find(NameOf(wl));
      std::string pod = "-", node = "-", state;
      if (it != pod_of.end()) {
        pod = NameOf(*it->second);
        node = TextAt(*it->second, "spec.nodeName");
        const json* ready = FindCondition(*it->second, "Ready");
        const std::string phase = TextAt(*it->second, "status.phase", "Pending");
        state = ready && TextAt(*ready, "status") == "True" ? "Ready" : phase + ", not ready";
      } else {
        const json* admitted = FindCondition(wl, "Admitted");
        state = admitted && TextAt(*admitted, "status") == "True" ? "admitted; its pod is being made" : PendingMessage(wl);
        if (state.empty()) state = "not yet considered by the scheduler";
        state = "Pending: " + state;
      }
      rows.push_back({NameOf(wl), revision, pod, node.empty() ? "-" : node, state});
    }
    if (rows.empty()) {
      w.Field(0, "Replicas", "<none>");
      return;
    }
    w.Field(0, "Replicas", std::nullopt);
    WriteTable(w, 2, {"Workload", "Revision", "Pod", "Node", "State"}, rows);
  }

  // Where an admitted workload runs: flavors per pod set, node and GPU devices per pod.
  void Admission(DescribeWriter& w, const json& obj) {
    const json* admission = Find(obj, "status.admission");
    if (!admission || !admission->is_object()) return;
    w.Field(0, "Admission", std::nullopt);
    w.Field(2, "Cluster Queue", TextAt(*admission, "clusterQueue"));
    const json* sets = Child(admission, "podSetAssignments");
    if (!sets || !sets->is_array()) return;
    std::vector<std::vector<std::string>> set_rows, pod_rows;
    for (const json& set : *sets) {
      const std::string set_name = TextAt(set, "name");
      // One flavor for every resource (Tessera's rule) reads as its name alone.
      std::string flavors;
      if (const json* f = Child(&set, "flavors"); f && f->is_object() && !f->empty()) {
        const std::string first = Text(&f->begin().value());
        const bool same = std::all_of(f->begin(), f->end(), [&](const json& v) { return Text(&v) == first; });
        for (const auto& [resource, flavor] : f->items()) {
          if (same) {
            flavors = first;
            break;
          }
          if (!flavors.empty()) flavors += ", ";
          flavors += resource + "=" + Text(&flavor);
        }
      }
      set_rows.push_back({set_name, TextAt(set, "count"), flavors.empty() ? "<none>" : flavors});
      // Per-pod placement: Tessera's placements[] (node, gpus), or Kueue's
      // topologyAssignment (node-level domains with pod counts).
      for (const char* key : {"placements", "pods", "podPlacements"}) {
        const json* pods = Child(&set, key);
        if (!pods || !pods->is_array()) continue;
        for (size_t i = 0; i < pods->size(); ++i) {
          const json& p = (*pods)[i];
          std::string node = TextAt(p, "node");
          if (node.empty()) node = TextAt(p, "nodeName");
          const json* gpus = Child(&p, "gpus");
          if (!gpus) gpus = Child(&p, "devices");
          pod_rows.push_back({set_name, TextAt(p, "pod", std::to_string(i)), node, DeviceList(gpus)});
        }
        break;
      }
      if (const json* domains = Find(set, "topologyAssignment.domains"); domains && domains->is_array()) {
        for (const json& d : *domains) {
          const json* values = Child(&d, "values");
          const std::string node = values && values->is_array() && !values->empty() ? Text(&values->back()) : "";
          pod_rows.push_back({set_name, fmt::format("{} pods", TextAt(d, "count", "?")), node, "<not reported>"});
        }
      }
    }
    w.Field(2, "Pod Sets", std::nullopt);
    WriteTable(w, 4, {"Name", "Count", "Flavors"}, set_rows);
    if (!pod_rows.empty()) {
      w.Field(2, "Placement", std::nullopt);
      WriteTable(w, 4, {"Pod Set", "Pod", "Node", "GPU Devices"}, pod_rows);
    }
  }

  void ClusterQueueUsage(DescribeWriter& w, const json& obj) {
    std::vector<std::vector<std::string>> rows;
    for (const QueueUsageRow& u : QueueUsage(obj)) {
      rows.push_back({u.flavor, u.resource, u.nominal, u.reserved, u.borrowing_limit.empty() ? "-" : u.borrowing_limit, u.used,
                      u.borrowed});
    }
    if (rows.empty()) return;
    w.Field(0, "Usage", std::nullopt);
    WriteTable(w, 2, {"Flavor", "Resource", "Nominal", "Reserved", "Borrowing Limit", "Used", "Borrowed"}, rows);
  }

  void NodeGpus(DescribeWriter& w, const json& obj) {
    const std::string text = Text(Child(Find(obj, "metadata.annotations"), "tessera.dev/gpus"));
    const json gpus = json::parse(text, nullptr, false);
    if (!gpus.is_array() || gpus.empty()) {
      w.Raw(2, "<none>");
      return;
    }
    std::vector<std::vector<std::string>> rows;
    for (const json& g : gpus) {
      const json* memory = Child(&g, "memoryBytes");
      rows.push_back({TextAt(g, "index"), TextAt(g, "model"), memory ? DisplayQuantity("memory", *memory) : "",
                      TextAt(g, "nvlinkDomain"), TextAt(g, "uuid")});
    }
    WriteTable(w, 2, {"Index", "Model", "Memory", "NVLink Domain", "UUID"}, rows);
    if (Text(Child(Find(obj, "metadata.annotations"), "tessera.dev/gpus-simulated")) == "true") {
      w.Raw(2, "(simulated inventory: no NVIDIA driver on this node)");
    }
  }

  // What a namespace holds for its users: resource quotas and the local queues to submit to.
  void NamespaceContents(DescribeWriter& w, const std::string& ns) {
    const KindInfo* quota_kind = FindKindByApiVersion("v1", "ResourceQuota");
    const KindInfo* lq_kind = FindKindByApiVersion("kueue.x-k8s.io/v1beta1", "LocalQueue");
    std::vector<json> quotas = ListQuietly(*quota_kind, ns), queues = ListQuietly(*lq_kind, ns);
    if (quotas.empty()) {
      w.Field(0, "Resource Quotas", "<none>");
    } else {
      w.Field(0, "Resource Quotas", std::nullopt);
      for (const json& q : quotas) {
        w.Field(2, "Name", NameOf(q));
        std::vector<std::vector<std::string>> rows;
        const json* hard = Find(q, "status.hard");
        if (!hard || !hard->is_object()) hard = Find(q, "spec.hard");
        if (hard && hard->is_object()) {
          for (const auto& [resource, amount] : hard->items()) {
            const json* used = Child(Find(q, "status.used"), resource);
            rows.push_back({resource, used ? DisplayQuantity(resource, *used) : "0", DisplayQuantity(resource, amount)});
          }
        }
        WriteTable(w, 2, {"Resource", "Used", "Hard"}, rows);
      }
    }
    if (queues.empty()) {
      w.Field(0, "Local Queues", "<none>");
    } else {
      w.Field(0, "Local Queues", std::nullopt);
      std::vector<std::vector<std::string>> rows;
      for (const json& q : queues) {
        rows.push_back({NameOf(q), TextAt(q, "spec.clusterQueue"), TextAt(q, "status.pendingWorkloads", "0"),
                        TextAt(q, "status.admittedWorkloads", "0")});
      }
      WriteTable(w, 2, {"Name", "ClusterQueue", "Pending", "Admitted"}, rows);
    }
  }

  void Conditions(DescribeWriter& w, const KindInfo& kind, const json& obj) {
    const json* conditions = Find(obj, "status.conditions");
    const bool expected = kind.store_key == "kueue.x-k8s.io/Workload" || kind.store_key == "/Pod" ||
                          kind.store_key == "/Node" || kind.store_key == "batch/Job";
    if (!conditions || !conditions->is_array() || conditions->empty()) {
      if (expected || conditions) w.Field(0, "Conditions", "<none>");
      return;
    }
    std::vector<std::vector<std::string>> rows;
    for (const json& c : *conditions) {
      std::string when = TextAt(c, "lastTransitionTime");
      if (when.empty()) when = TextAt(c, "lastHeartbeatTime");
      rows.push_back({TextAt(c, "type"), TextAt(c, "status"), TextAt(c, "reason"), when.empty() ? "<unknown>" : when,
                      TextAt(c, "message")});
    }
    w.Field(0, "Conditions", std::nullopt);
    WriteTable(w, 2, {"Type", "Status", "Reason", "Last Transition", "Message"}, rows);
  }

  // Events whose involvedObject is this object, oldest first: selected by the
  // server by name and kind, as kubectl does, and not those of an earlier
  // object of the same name (another uid).
  void Events(DescribeWriter& w, const KindInfo& kind, const json& obj) {
    const KindInfo* event_kind = FindKindByApiVersion("v1", "Event");
    const std::string uid = TextAt(obj, "metadata.uid");
    const std::string ns = kind.namespaced ? NamespaceOf(obj) : "";
    auto selected = ListObjects(client_, ClientConfig{}, CollectionPath(*event_kind, ns), "", kDefaultChunkSize,
                                fmt::format("involvedObject.name={}", NameOf(obj)));
    // A server without Events' field selectors (an older one) lists them all.
    std::vector<json> candidates = selected ? std::move(selected->items) : ListQuietly(*event_kind, ns);
    std::vector<json> events;
    for (json& e : candidates) {
      if (TextAt(e, "involvedObject.name") != NameOf(obj)) continue;
      const std::string k = TextAt(e, "involvedObject.kind");
      if (!k.empty() && k != kind.kind) continue;
      const std::string about_ns = TextAt(e, "involvedObject.namespace");
      if (kind.namespaced && !about_ns.empty() && about_ns != NamespaceOf(obj)) continue;
      const std::string about = TextAt(e, "involvedObject.uid");
      if (!uid.empty() && !about.empty() && about != uid) continue;
      events.push_back(std::move(e));
    }
    if (events.empty()) {
      w.Field(0, "Events", "<none>");
      return;
    }
    auto last_seen = [](const json& e) {
      for (const char* f : {"lastTimestamp", "eventTime", "firstTimestamp", "metadata.creationTimestamp"}) {
        if (auto t = ParseTimeSeconds(TextAt(e, f))) return *t;
      }
      return int64_t{0};
    };
    std::stable_sort(events.begin(), events.end(),
                     [&](const json& a, const json& b) { return last_seen(a) < last_seen(b); });
    std::vector<std::vector<std::string>> rows;
    for (const json& e : events) {
      const json* count = Child(&e, "count");
      std::string age = HumanDuration(now_ - last_seen(e));
      if (count && count->is_number_integer() && count->get<int64_t>() > 1) {
        const std::string first = TextAt(e, "firstTimestamp");
        age = fmt::format("{} (x{} over {})", age, count->get<int64_t>(),
                          first.empty() ? "?" : AgeSince(first, now_));
      }
      std::string from = TextAt(e, "source.component");
      if (from.empty()) from = TextAt(e, "reportingComponent");
      if (from.empty()) from = TextAt(e, "reportingController");
      rows.push_back({TextAt(e, "type", "Normal"), TextAt(e, "reason"), age, from, TextAt(e, "message")});
    }
    w.Field(0, "Events", std::nullopt);
    WriteTable(w, 2, {"Type", "Reason", "Age", "From", "Message"}, rows);
  }

  // The items of a list (those `selector` selects), or none when it cannot be
  // read (extras never fail describe).
  std::vector<json> ListQuietly(const KindInfo& kind, const std::string& ns, const std::string& selector = "") {
    auto list = ListObjects(client_, ClientConfig{}, CollectionPath(kind, ns), selector);
    return list ? std::move(list->items) : std::vector<json>();
  }

  ApiClient& client_;
  int64_t now_;
  std::optional<DefaultPriorityClass> default_class_;  // fetched for the first workload that needs it
};

}  // namespace

int RunDescribe(const CommandContext& ctx, const DescribeOptions& options) {
  auto parsed = ParseObjectArgs(options.args);
  if (!parsed) {
    *ctx.err << LocalError(parsed.error()) << "\n";
    return kExitUsage;
  }
  const bool named = !parsed->front().name.empty();
  if (named && (options.all_namespaces || !options.selector.empty())) {
    *ctx.err << "error: name the objects, or select them with -l/-A, not both\n";
    return kExitUsage;
  }
  auto client = ctx.Client();
  Describer describer(ctx, *client);
  int rc = kExitOk;
  bool first = true;
  auto emit = [&](const KindInfo& kind, const json& obj) {
    if (!first) *ctx.out << "\n";
    first = false;
    *ctx.out << describer.Describe(kind, obj);
  };
  if (!named) {
    const KindInfo& kind = *parsed->front().kind;
    const std::string ns = options.all_namespaces ? "" : ctx.ns;
    auto list = ListObjects(*client, ctx.config, CollectionPath(kind, ns), options.selector);
    if (!list) {
      *ctx.err << list.error() << "\n";
      return kExitFailure;
    }
    if (list->items.empty()) {
      *ctx.err << (kind.namespaced && !options.all_namespaces
                       ? fmt::format("No resources found in {} namespace.", ctx.ns)
                       : std::string("No resources found"))
               << "\n";
      return kExitOk;
    }
    for (const json& item : list->items) emit(kind, item);
    return kExitOk;
  }
  for (const ObjectArg& a : *parsed) {
    auto r = client->Request("GET", ObjectPath(*a.kind, ctx.ns, a.name));
    if (!r) {
      *ctx.err << LocalError(r.error()) << "\n";
      return kExitFailure;
    }
    if (r->status != 200) {
      *ctx.err << ServerError(*r, ctx.config) << "\n";
      if (r->status == 401) return kExitFailure;
      rc = kExitFailure;
      continue;
    }
    emit(*a.kind, json::parse(r->body, nullptr, false));
  }
  return rc;
}

}  // namespace tessera
