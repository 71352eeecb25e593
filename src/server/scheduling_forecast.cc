#include "server/scheduling_forecast.h"

#include <fmt/format.h>

#include <algorithm>
#include <set>
#include <string_view>
#include <vector>

#include "api/convert.h"
#include "api/kinds.h"
#include "common/time_format.h"
#include "domain/budget.h"
#include "domain/quantity.h"
#include "sched/cycle.h"
#include "sched/pending_reason.h"
#include "sched/snapshot_builder.h"
#include "server/controllers/idle_reclaimer.h"
#include "server/controllers/inferenceservice_controller.h"
#include "server/controllers/job_controller.h"
#include "server/controllers/notebook_controller.h"
#include "server/controllers/trainingjob_controller.h"
#include "server/object_json.h"
#include "server/pod_index.h"

namespace tessera {

using nlohmann::json;

namespace {

constexpr std::string_view kForecastable =
    "a batch/v1 Job, a batch.volcano.sh/v1alpha1 Job, a tessera.dev/v1 Notebook, TrainingJob or InferenceService, or a "
    "kueue.x-k8s.io/v1beta1 Workload";

template <typename Id, typename T>
Id IdByName(const std::vector<T>& items, std::string_view name) {
  for (size_t i = 0; i < items.size(); ++i) {
    if (items[i].name == name) return Id(static_cast<int32_t>(i));
  }
  return Id();
}

// Micro-units as a plain decimal ("0.62", "12.5", "0"), for a status field.
std::string MicroDecimal(int64_t micro) {
  std::string text = fmt::format("{}.{:06}", micro / 1'000'000, micro % 1'000'000);
  while (text.back() == '0') text.pop_back();
  if (text.back() == '.') text.pop_back();
  return text;
}

int64_t GpuMilli(const PodSet& ps, int32_t count) { return ps.requests.gpu() * count; }

// The dearest GPU-hour among the flavors of the ClusterQueue `w` would queue in
// (0 when it reaches none), as approval estimates count it.
int64_t DearestPrice(const ClusterSnapshot& snapshot, const Workload& w) {
  if (!w.local_queue.valid()) return 0;
  const ClusterQueueId cq = snapshot.local_queue(w.local_queue).cluster_queue;
  if (!cq.valid()) return 0;
  int64_t price = 0;
  for (const ResourceGroup& g : snapshot.cluster_queue(cq).resource_groups) {
    for (const FlavorQuotas& fq : g.flavors) {
      if (fq.flavor.valid()) price = std::max(price, snapshot.flavor(fq.flavor).price_micro_per_gpu_hour);
    }
  }
  return price;
}

}  // namespace

Result<json> WorkloadForObject(const ObjectCache& cache, const json& object, const std::string& now_text) {
  const std::string api_version = StringAt(object, {"apiVersion"});
  const std::string kind = StringAt(object, {"kind"});
  const KindInfo* info = FindKindByApiVersion(api_version, kind);
  const std::string_view key = info != nullptr ? info->store_key : std::string_view();
  StoredObject so{ObjectKey{std::string(key), StringAt(object, {"metadata", "namespace"}),
                            StringAt(object, {"metadata", "name"})},
                  0, object};
  // Owner references name the object by uid; one not yet created has none.
  if (StringAt(so.object, {"metadata", "uid"}).empty()) so.object["metadata"]["uid"] = "forecast";
  if (key == kJobKind || key == kVolcanoJobKind) return JobWorkload(cache, so, now_text);
  if (key == kNotebookKind) return NotebookWorkload(cache, so, now_text);
  if (key == kTrainingJobKind) return TrainingJobWorkload(cache, so, now_text);
  if (key == kInferenceServiceKind) return InferenceReplicaWorkload(cache, so, so.key.name + "-forecast", now_text);
  if (key == kWorkloadKind) {
    json wl = object;
    wl.erase("status");
    wl["metadata"]["creationTimestamp"] = now_text;
    return wl;
  }
  return Err(Status::Invalid(
      fmt::format("kind: a SchedulingReview forecasts {}; not {} {} (a Sweep's trials and a Pipeline's steps "
                  "queue as Jobs: forecast one of those)",
                  kForecastable, api_version.empty() ? "\"\"" : api_version, kind.empty() ? "\"\"" : kind),
      {FieldCause{.field = "kind", .message = fmt::format("Unsupported value: \"{}\"", kind)}}));
}

Result<json> Forecast(const ForecastPass& pass, const json& object) {
  const std::string now_text = FormatRfc3339(pass.now);
  auto wl_json = WorkloadForObject(pass.cache, object, now_text);
  if (!wl_json) return Err(wl_json.error());
  const PriorityClass* default_class = nullptr;
  for (const auto& [name, pc] : pass.classes) {
    if (pc.global_default) default_class = &pc;
  }
  ClusterSnapshot& snapshot = pass.snapshot;
  auto converted = WorkloadFromJson(
      *wl_json,
      [&](std::string_view name) -> const PriorityClass* {
        auto it = pass.classes.find(name);
        return it == pass.classes.end() ? nullptr : &it->second;
      },
      default_class, [&](std::string_view name) { return IdByName<ClusterQueueId>(snapshot.cluster_queues, name); },
      [&](std::string_view name) { return IdByName<FlavorId>(snapshot.flavors, name); },
      [&](std::string_view name) { return IdByName<NodeId>(snapshot.nodes, name); });
  if (!converted) return Err(converted.error());

  json st = json::object();
  int64_t gpu_milli = 0;
  for (const PodSet& ps : converted->pod_sets) gpu_milli += GpuMilli(ps, ps.count);
  st["gpus"] = FormatMilliDecimal(gpu_milli);

  // What an approval policy would say first: the workload waits outside the
  // queue, holding nothing, until approved.
  const StoredObject wl_stored{ObjectKey{kWorkloadKind, converted->namespace_name, converted->name}, 0, *wl_json};
  const std::vector<std::string> approval = pass.approvals.ApprovalReasons(pass.cache, wl_stored);
  if (WorkloadInactive(*wl_json)) {
    st["wouldAdmit"] = false;
    st["reason"] = "Inactive";
    st["message"] = "suspended (spec.suspend or spec.active false): it is not queued until it is resumed";
    return st;
  }

  const size_t namespaces_before = snapshot.namespaces.size();
  const WorkloadId id = AppendWorkload(snapshot, *converted);
  const Plan plan = RunCycle(snapshot, pass.config, pass.now);
  const Workload& w = snapshot.workload(id);
  std::string decision;
  auto admitted = std::find_if(plan.admissions.begin(), plan.admissions.end(),
                               [&](const AdmitDecision& a) { return a.workload == id; });
  auto pending = std::find_if(plan.pending.begin(), plan.pending.end(),
                              [&](const PendingDecision& p) { return p.workload == id; });
  int64_t price_micro_hour = 0;
  if (admitted != plan.admissions.end()) {
    const Admission& a = admitted->admission;
    std::vector<std::string> flavors, nodes, placed;
    for (size_t p = 0; p < a.pod_sets.size(); ++p) {
      const PodSetAssignment& psa = a.pod_sets[p];
      const ResourceFlavor& flavor = snapshot.flavor(psa.flavor);
      if (std::find(flavors.begin(), flavors.end(), flavor.name) == flavors.end()) flavors.push_back(flavor.name);
      price_micro_hour += GpuCostMicro(GpuMilli(w.pod_sets[p], psa.count), 3600, flavor.price_micro_per_gpu_hour);
      for (const PodPlacement& pod : psa.pods) {
        const Node& node = snapshot.node(pod.node);
        if (std::find(nodes.begin(), nodes.end(), node.name) == nodes.end()) nodes.push_back(node.name);
        std::vector<std::string> devices;
        for (const DeviceShare& d : pod.gpus) {
          devices.push_back(d.milli >= 1000 ? std::to_string(node.gpus[d.device].index)
                                            : fmt::format("{} ({})", node.gpus[d.device].index,
                                                          FormatMilliDecimal(d.milli)));
        }
        placed.push_back(devices.empty() ? node.name : fmt::format("{} GPU {}", node.name, fmt::join(devices, ",")));
      }
    }
    const std::string cq = snapshot.cluster_queue(a.cluster_queue).name;
    st["wouldAdmit"] = approval.empty();
    st["clusterQueue"] = cq;
    st["flavors"] = flavors;
    st["nodes"] = nodes;
    decision = fmt::format("would run now on {} in ClusterQueue {} ({})", fmt::join(flavors, ", "), cq,
                           fmt::join(placed, "; "));
    st["reason"] = "Admitted";
  } else if (pending != plan.pending.end()) {
    const PendingReason& why = pending->reason;
    st["wouldAdmit"] = false;
    if (w.local_queue.valid()) {
      const ClusterQueueId cq = snapshot.local_queue(w.local_queue).cluster_queue;
      if (cq.valid()) st["clusterQueue"] = snapshot.cluster_queue(cq).name;
    }
    st["reason"] = std::string(PendingReasonName(why.code));
    if (why.queue_position > 0) st["queuePosition"] = why.queue_position;
    if (why.estimated_start != Timestamp::Never()) st["estimatedStart"] = FormatRfc3339(why.estimated_start);
    decision = "waits: " + DescribePending(snapshot, id, why, pass.now);
    price_micro_hour = GpuCostMicro(gpu_milli, 3600, DearestPrice(snapshot, w));
  } else {
    st["wouldAdmit"] = false;
    st["reason"] = "Unknown";
    decision = "the scheduler made no decision for it this cycle";
  }
  RemoveAppended(snapshot, namespaces_before);

  if (!approval.empty()) {
    st["reason"] = "WaitingForApproval";
    st["approvalReasons"] = approval;
    st["message"] = fmt::format("needs an approval first, and waits for it holding no quota ({}); once approved it {}",
                                fmt::join(approval, "; "), decision);
  } else {
    st["message"] = decision;
  }
  st["costPerHour"] = MicroDecimal(price_micro_hour);
  return st;
}

}  // namespace tessera
