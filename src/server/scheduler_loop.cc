#include "server/scheduler_loop.h"

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <pthread.h>

#include <algorithm>
#include <climits>
#include <chrono>
#include <map>
#include <set>
#include <utility>

#include "api/convert.h"
#include "common/time_format.h"
#include "domain/quantity.h"
#include "sched/apply_plan.h"
#include "sched/cycle.h"
#include "sched/pending_reason.h"
#include "sched/snapshot_builder.h"
#include "sched/workload_usage.h"
#include "server/controllers/approval_controller.h"
#include "server/controllers/budget_controller.h"
#include "server/api/claim_admission.h"
#include "server/cluster_gauges.h"
#include "server/controllers/clusterrole_aggregation.h"
#include "server/controllers/job_controller.h"
#include "server/controllers/pipeline_controller.h"
#include "server/controllers/job_lifecycle_controller.h"
#include "server/controllers/checkpoint_controller.h"
#include "server/controllers/trainingjob_controller.h"
#include "server/controllers/notebook_controller.h"
#include "server/controllers/inferenceservice_controller.h"
#include "server/controllers/namespace_controller.h"
#include "server/controllers/node_lifecycle.h"
#include "server/controllers/pod_history_controller.h"
#include "server/controllers/idle_reclaimer.h"
#include "server/object_json.h"
#include "server/pass_pacer.h"
#include "server/scheduling_forecast.h"
#include "server/controllers/usage_recorder.h"
#include "server/controllers/workload_lifecycle.h"
#include "server/controllers/requeue_controller.h"
#include "server/controllers/node_ipam_controller.h"
#include "server/controllers/claim_reclaimer.h"
#include "server/controllers/endpointslice_controller.h"
#include "server/controllers/sweep_controller.h"

namespace tessera {
namespace {

constexpr auto kResyncPeriod = std::chrono::seconds(5);
constexpr Duration kProgressRefresh = Duration::Seconds(30);

using nlohmann::json;

const std::vector<std::string>& CachedKinds() {
  static const std::vector<std::string> kinds{kJobKind,
                                              kVolcanoJobKind,
                                              kTrainingJobKind,
                                              kNotebookKind,
                                              kInferenceServiceKind,
                                              kWorkloadKind,
                                              kPodKind,
                                              "kueue.x-k8s.io/LocalQueue",
                                              "kueue.x-k8s.io/ClusterQueue",
                                              "kueue.x-k8s.io/ResourceFlavor",
                                              "/Node",
                                              "/Namespace",
                                              "/ResourceQuota",
                                              "/PersistentVolumeClaim",
                                              "scheduling.k8s.io/PriorityClass",
                                              kLeaseKind,
                                              kUsageRecordKind,
                                              kServiceAccountKind,
                                              kBudgetKind,
                                              kApprovalPolicyKind,
                                              kApprovalRequestKind,
                                              kClusterRoleKind,
                                              std::string(kServiceKind),
                                              std::string(kEndpointSliceKind),
                                              "/Secret",  // notebooks' Jupyter tokens
                                              kPipelineKind,
                                              kPipelineRunKind,
                                              kSweepKind};
  return kinds;
}

// What the controllers no longer act on: finished Workloads, completed or failed
// Jobs, closed UsageRecords (they only accumulate).
std::map<std::string, ObjectCache::SettledTest> SettledTests() {
  return {{kWorkloadKind, [](const json& o) { return ConditionTrue(o, "Finished"); }},
          {kJobKind, [](const json& o) { return ConditionTrue(o, "Complete") || ConditionTrue(o, "Failed"); }},
          {kVolcanoJobKind,
           [](const json& o) {
             const std::string phase = StringAt(o, {"status", "state", "phase"});
             return phase == "Completed" || phase == "Failed";
           }},
          {kTrainingJobKind,
           [](const json& o) {
             const std::string phase = StringAt(o, {"status", "phase"});
             return phase == "Succeeded" || phase == "Failed";
           }},
          {kPipelineRunKind,
           [](const json& o) {
             const std::string phase = StringAt(o, {"status", "phase"});
             return phase == "Succeeded" || phase == "Failed";
           }},
          {kUsageRecordKind, [](const json& o) { return o.contains("spec") && o["spec"].contains("end"); }},
          {kSweepKind, [](const json& o) { return ConditionTrue(o, "Succeeded") || ConditionTrue(o, "Failed"); }}};
}

// A pass's view: the snapshot the core decides on, and for each of its
// workloads (by WorkloadId) the stored object it came from.
struct PassInput {
  ClusterSnapshot snapshot;
  PriorityClasses classes;  // by name, for forecasts
  std::vector<const StoredObject*> stored;
  int64_t converted = 0;  // workloads converted from JSON for this pass
};

constexpr const char* kAdmissionsMetric = "tessera_admissions_total";
constexpr const char* kPreemptionsMetric = "tessera_preemptions_total";
constexpr const char* kCycleDurationMetric = "tessera_scheduling_cycle_duration_seconds";
constexpr const char* kAdmissionWaitMetric = "tessera_admission_wait_seconds";
constexpr const char* kEventsDroppedMetric = "tessera_events_dropped_total";
constexpr const char* kControllerDurationMetric = "tessera_controller_duration_seconds";

PassInput BuildSnapshot(const ObjectCache& cache, ConvertedWorkloads& converted, const ApprovalController& approvals,
                        const DependencyController& dependencies,
                        const BudgetController& budgets) {
  SnapshotBuilder b;
  // What a workload's conversion depends on besides the workload: the ids of
  // the names it resolves (given in the order added) and the priority classes.
  std::string context;
  for (const auto& [unused, f] : cache.Of("kueue.x-k8s.io/ResourceFlavor")) {
    if (auto rf = ResourceFlavorFromJson(f.object)) {
      context += rf->name + '\n';
      b.AddFlavor(std::move(*rf));
    }
  }
  context += '\n';
  for (const auto& [unused, n] : cache.Of("/Node")) {
    if (auto node = NodeFromJson(n.object)) {
      context += node->name + '\n';
      b.AddNode(std::move(*node));
    }
  }
  context += '\n';
  for (const auto& [unused, c] : cache.Of("kueue.x-k8s.io/ClusterQueue")) {
    auto cq = ClusterQueueFromJson(
        c.object, [&](std::string_view name) { return b.FlavorIdOf(std::string(name)); },
        [&](std::string_view name) { return b.Cohort(std::string(name)); });
    if (cq) {
      context += cq->name + '\n';
      b.AddClusterQueue(std::move(*cq));
    }
  }
  for (const auto& [unused, l] : cache.Of("kueue.x-k8s.io/LocalQueue")) {
    if (auto lq = LocalQueueFromJson(l.object)) b.AddLocalQueue(lq->namespace_name, lq->name, lq->cluster_queue_name);
  }
  for (const auto& [key, ns] : cache.Of("/Namespace")) {
    // Its labels, and kubernetes.io/metadata.name (the API server sets it; a
    // namespace the server made itself may lack it).
    Labels labels;
    for (const auto& [k, v] : ObjectAt(ns.object, {"metadata", "labels"}).items()) {
      if (v.is_string()) labels.Set(k, v.get<std::string>());
    }
    labels.Set(std::string(kNamespaceNameLabel), key.second);
    b.SetNamespaceLabels(key.second, std::move(labels));
  }
  for (const auto& [unused, q] : cache.Of("/ResourceQuota")) {
    if (auto rq = ResourceQuotaFromJson(q.object)) b.AddResourceQuota(q.key.ns, std::move(*rq));
  }
  for (const auto& [ns, list] : budgets.budgets()) {
    for (const NamespaceBudget& budget : list) b.AddBudget(ns, budget);
  }
  context += '\n';
  PriorityClasses classes;
  const PriorityClass* default_class = nullptr;
  for (const auto& [unused, p] : cache.Of("scheduling.k8s.io/PriorityClass")) {
    context += fmt::format("{} {}\n", p.key.name, p.revision);
    if (auto pc = PriorityClassFromJson(p.object)) classes[pc->name] = *pc;
  }
  for (const auto& [name, pc] : classes) {
    if (pc.global_default) default_class = &pc;
  }
  if (const uint64_t hash = std::hash<std::string>{}(context); hash != converted.context) {
    converted.by_key.clear();
    converted.context = hash;
  }
  const uint64_t pass = ++converted.pass;
  PassInput in;
  // Finished workloads (settled) hold no quota and wait for nothing.
  for (const auto& [unused, active] : cache.ActiveOf(kWorkloadKind)) {
    const StoredObject& w = *active;
    // Suspended (spec.active false): not to be admitted until resumed.
    if (WorkloadInactive(w.object) && !ObjectAt(w.object, {"status"}).contains("admission")) continue;
    // Waiting for an approval: outside the queue, holding nothing.
    if (approvals.Gated(w)) continue;
    // Waiting for the Jobs it depends on (tessera.dev/depends-on): the same.
    if (dependencies.Gated(w)) continue;
    auto [entry, fresh] = converted.by_key.try_emplace(&w);
    if (fresh || entry->second.revision != w.revision) {
      auto wl = WorkloadFromJson(
          w.object,
          [&](std::string_view name) -> const PriorityClass* {
            auto it = classes.find(name);
            return it == classes.end() ? nullptr : &it->second;
          },
          default_class, [&](std::string_view name) { return b.ClusterQueueIdOf(std::string(name)); },
          [&](std::string_view name) { return b.FlavorIdOf(std::string(name)); },
          [&](std::string_view name) { return b.NodeIdOf(std::string(name)); });
      if (!wl) {
        spdlog::warn("workload {}/{}: {}", w.key.ns, w.key.name, wl.error().message());
        converted.by_key.erase(entry);
        continue;
      }
      entry->second.revision = w.revision;
      entry->second.workload = std::move(*wl);
      ++in.converted;
    }
    entry->second.pass = pass;
    b.AddWorkload(entry->second.workload);
    in.stored.push_back(&w);
  }
  // Forget the workloads no longer held (finished, deleted).
  if (converted.by_key.size() > in.stored.size()) {
    std::erase_if(converted.by_key, [&](const auto& e) { return e.second.pass != pass; });
  }
  in.snapshot = b.Build();
  in.classes = std::move(classes);
  return in;
}

// A Pod for replica `index` of pod set `p` of an admitted workload, bound to its node and devices.
json PodFor(const StoredObject& so, const Workload& w, size_t p, const PodSetAssignment& psa, size_t index,
            const Node& node, const std::string& now_text) {
  const PodPlacement& placement = psa.pods[index];
  const json& pod_sets = ObjectAt(so.object, {"spec"}).value("podSets", json::array());
  const json tmpl = p < pod_sets.size() ? pod_sets[p].value("template", json::object()) : json::object();
  std::vector<std::string> indices, uuids;
  for (const DeviceShare& d : placement.gpus) {
    indices.push_back(std::to_string(node.gpus[d.device].index));
    uuids.push_back(node.gpus[d.device].uuid);
  }
  json pod{{"apiVersion", "v1"},
           {"kind", "Pod"},
           {"metadata",
            {{"name", fmt::format("{}-{}-{}", so.key.name, w.pod_sets[p].name, index)},
             {"namespace", so.key.ns},
             {"creationTimestamp", now_text},
             {"labels", tmpl.value("metadata", json::object()).value("labels", json::object())},
             {"annotations",
              {{"tessera.dev/gpu-devices", fmt::format("{}", fmt::join(indices, ","))},
               {"tessera.dev/gpu-uuids", fmt::format("{}", fmt::join(uuids, ","))},
               {"tessera.dev/gpu-milli", std::to_string(PlacedGpuMilli(placement))},
               {"tessera.dev/pod-set", w.pod_sets[p].name},
               {"tessera.dev/rank", std::to_string(index)},
               {"tessera.dev/world-size", std::to_string(psa.count)}}},
             {"ownerReferences",
              {{{"apiVersion", "kueue.x-k8s.io/v1beta1"}, {"kind", "Workload"}, {"name", so.key.name},
                {"uid", StringAt(so.object, {"metadata", "uid"})}, {"controller", true}}}}}},
           {"spec", tmpl.value("spec", json::object())},
           {"status", {{"phase", "Pending"}}}};
  pod["metadata"]["labels"]["tessera.dev/workload"] = so.key.name;
  pod["spec"]["nodeName"] = node.name;
  pod["spec"]["schedulerName"] = "tessera";
  if (StringAt(so.object, {"metadata", "annotations", kCompletionModeAnnotation}) == "Indexed") {
    SetCompletionIndex(pod, static_cast<int64_t>(index));
  }
  return pod;
}

// What a pending message quotes from the snapshot besides its reason's numbers:
// the names of queues, flavors and namespace quotas, by the ids the reason uses,
// and why a queue is inactive. While this is the same, a reason with the same
// cause reads the same. (Not the objects' change counts: the loop's own status
// writes change a ClusterQueue every pass.)
uint64_t PendingTextContext(const ClusterSnapshot& snapshot) {
  std::string text;
  for (const ResourceFlavor& f : snapshot.flavors) text += f.name + '\n';
  for (const ClusterQueue& q : snapshot.cluster_queues) {
    text += fmt::format("{}\n{}\n{}\n", q.name, q.stopped, q.inactive_reason);
  }
  for (const LocalQueue& l : snapshot.local_queues) text += l.cluster_queue_name + '\n';
  for (const Namespace& ns : snapshot.namespaces) {
    for (const ResourceQuota& rq : ns.quotas) text += rq.name + '\n';
    text += '\n';
  }
  return std::hash<std::string>{}(text);
}

}  // namespace

SchedulerLoop::SchedulerLoop(Store& store, SchedulerConfig config, Clock clock, std::function<void()> written)
    : store_(store),
      config_(config),
      clock_(std::move(clock)),
      written_(std::move(written)),
      cache_(store, CachedKinds(), SettledTests()),
      pods_by_workload_(cache_),
      workload_subsets_(cache_),
      events_("tessera-scheduler"),
      approvals_(std::make_unique<ApprovalController>()),
      budgets_(std::make_unique<BudgetController>(cache_)),
      endpoint_slices_(std::make_unique<EndpointSliceController>(cache_)),
      ttl_after_finished_(std::make_unique<TtlAfterFinishedController>(cache_)),
      dependencies_(std::make_unique<DependencyController>(cache_)) {}

void SchedulerLoop::BuildControllers() {
  // The order matters where one controller reads what another wrote: a
  // namespace's ServiceAccount before its pods; Jobs' Workloads before their
  // lifecycle; lost nodes' pods gone before Services' endpoints and the
  // requeue of their workloads; approvals and budgets last, as the snapshot
  // reads them.
  auto own = [this](std::unique_ptr<Controller> c) {
    controllers_.push_back(c.get());
    owned_.push_back(std::move(c));
  };
  own(std::make_unique<NamespaceController>());
  if (node_cidrs_) own(std::make_unique<NodeIpamController>(*node_cidrs_));
  if (volume_root_) own(std::make_unique<ClaimReclaimer>(*volume_root_));
  own(std::make_unique<ClusterRoleAggregationController>(aggregated_rules_));
  own(std::make_unique<JobController>());
  own(std::make_unique<TrainingJobController>());
  own(std::make_unique<NotebookController>());
  own(std::make_unique<InferenceServiceController>());
  own(std::make_unique<JobLifecycleController>());
  own(std::make_unique<SweepController>());  // after the Jobs' ends this pass, to judge and replace its trials
  // After the Jobs' ends this pass, to start what follows them; artifacts on the volume root.
  own(std::make_unique<PipelineController>(volume_root_.value_or("")));
  own(std::make_unique<WorkloadLifecycleController>());
  own(std::make_unique<CheckpointController>());
  controllers_.push_back(ttl_after_finished_.get());  // after the Jobs' ends this pass, to wake for their expiry
  own(std::make_unique<NodeLifecycleController>());
  controllers_.push_back(endpoint_slices_.get());
  own(std::make_unique<RequeueController>());
  own(std::make_unique<UsageRecorder>());
  own(std::make_unique<IdleReclaimer>());
  own(std::make_unique<PodHistoryController>(cache_));  // after the pass's pod deletions, so their records go out this pass
  controllers_.push_back(dependencies_.get());
  controllers_.push_back(approvals_.get());
  controllers_.push_back(budgets_.get());
}

SchedulerLoop::~SchedulerLoop() { Stop(); }

void SchedulerLoop::Start() {
  thread_ = std::thread([this] {
    pthread_setname_np(pthread_self(), "scheduler");
    Run();
  });
}

void SchedulerLoop::Stop() {
  {
    std::lock_guard lock(mu_);
    stop_ = true;
  }
  cv_.notify_all();
  if (thread_.joinable()) thread_.join();
  std::lock_guard lock(mu_);
  for (const auto& ask : std::exchange(forecasts_, {})) {
    ask->answer.set_value(Err(Status::Unavailable("the scheduler is stopping on this server; try again")));
  }
}

void SchedulerLoop::Kick() {
  {
    std::lock_guard lock(mu_);
    ++writes_since_pass_;
    // Called for every write: once kicked, the loop runs a pass anyway, and a
    // wake-up per write would only interrupt its batch window again and again.
    if (kicked_) return;
    kicked_ = true;
  }
  cv_.notify_one();
}

SchedulerLoopStats SchedulerLoop::stats() const {
  std::lock_guard lock(mu_);
  return stats_;
}

void SchedulerLoop::Run() {
  std::unique_lock lock(mu_);
  PassPacer pacer;
  while (!stop_) {
    // At least every kResyncPeriod, sooner when a controller asked (a deadline,
    // a back-off's end).
    auto wait = std::chrono::duration_cast<std::chrono::milliseconds>(kResyncPeriod);
    if (wake_at_) wait = std::clamp(std::chrono::milliseconds((*wake_at_ - clock_()).ms), std::chrono::milliseconds(0), wait);
    cv_.wait_for(lock, wait, [this] { return kicked_ || stop_; });
    if (stop_) break;
    // A write after a quiet spell is scheduled at once; after a pass, the
    // pacer spaces the next (see PassPacer).
    cv_.wait_until(lock, pacer.NextPass(), [this] { return stop_; });
    while (!stop_ && PassPacer::Clock::now() < pacer.NextPassInStorm()) {
      const int64_t before = writes_since_pass_;
      const auto checked = PassPacer::Clock::now();
      cv_.wait_until(lock, std::min(checked + PassPacer::kStormCheck, pacer.NextPassInStorm()), [this] { return stop_; });
      if (!PassPacer::Storm(writes_since_pass_ - before, PassPacer::Clock::now() - checked)) break;
    }
    if (stop_) break;
    kicked_ = false;
    const int64_t writes = std::exchange(writes_since_pass_, 0);
    lock.unlock();
    const auto start = PassPacer::Clock::now();
    Status s = RunOnce();
    pacer.PassRan(start, PassPacer::Clock::now(), writes);
    if (!s.ok()) spdlog::warn("scheduling pass failed: {}", s.ToString());
    lock.lock();
  }
}

void SchedulerLoop::WritePendingConditions(const ClusterSnapshot& snapshot, const Plan& plan,
                                           const std::vector<const StoredObject*>& stored, Timestamp now,
                                           BatchedWriter& writer) {
  const std::string now_text = FormatRfc3339(now);
  const uint64_t context = PendingTextContext(snapshot);
  int64_t rendered = 0;
  // Workloads whose cause is unchanged and whose progress is due a refresh.
  struct ProgressDue {
    const PendingDecision* decision;
    PendingMemos::value_type* memo;
    int32_t position;  // in its ClusterQueue; none sorts last
  };
  std::vector<ProgressDue> refresh_due;
  auto blocker_of = [&](const PendingDecision& p) {
    return p.reason.blocker.valid() ? snapshot.workload(p.reason.blocker).Key() : std::string();
  };
  auto due = [](const PendingDecision& p, PendingMemos::value_type& memo) {
    return ProgressDue{&p, &memo, p.reason.queue_position > 0 ? p.reason.queue_position : INT32_MAX};
  };
  // Renders `p`'s message and writes it when its cause changed, or when only
  // its progress did and that was last written kProgressRefresh ago: at once
  // when `paced` (the refresh is within the pace), else among the refreshes due.
  auto render_and_write = [&](const PendingDecision& p, PendingMemos::value_type& memo_entry, bool paced) {
    const StoredObject& so = *stored[p.workload.value()];
    PendingMemo& memo = memo_entry.second;
    memo.revision = so.revision;
    memo.context = context;
    memo.reason = p.reason;
    memo.blocker = blocker_of(p);
    memo.rendered = now;
    ++rendered;

    const std::string message = DescribePending(snapshot, p.workload, p.reason, now);
    const std::string progress = DescribePendingProgress(snapshot, p.workload, p.reason, now);
    const std::string cause = message.substr(0, message.size() - progress.size());
    const std::string reason(PendingReasonName(p.reason.code));
    // A new cause is written at once (with an event); the progress alone (queue
    // position, estimated start) moves every pass, so it is refreshed at most
    // every kProgressRefresh, or every pending workload would be rewritten each pass.
    const std::string written = ConditionValue(so.object, "QuotaReserved", "message");
    const bool cause_changed = ConditionValue(so.object, "QuotaReserved", "reason") != reason ||
                               written.compare(0, cause.size(), cause) != 0 ||
                               (written.size() > cause.size() && written[cause.size()] != ';');
    const bool progress_due =
        written != message && (!memo.progress_written || now - *memo.progress_written >= kProgressRefresh);
    if (!cause_changed && !progress_due) return;
    if (!cause_changed && !paced) {
      // Only the progress, for a workload not rendered before (a restart, a
      // relist of the cache): paced like any other refresh.
      refresh_due.push_back(due(p, memo_entry));
      return;
    }
    json next = so.object;
    SetCondition(next, "QuotaReserved", false, reason, message, now_text);
    SetCondition(next, "Admitted", false, reason, message, now_text);
    memo.progress_written = now;
    pending_written_.push_back(PendingWrite{.memo_key = memo_entry.first, .key = so.key, .message = message});
    writer.Add(WriteOp{.op = WriteOp::Kind::kUpdate, .key = so.key, .object = std::move(next), .expected_revision = so.revision},
               fmt::format("pending condition of {}/{}", so.key.ns, so.key.name));
    if (cause_changed) events_.Record(writer, so, EventRecorder::Type::kWarning, "Pending", cause, now);
  };
  for (const PendingDecision& p : plan.pending) {
    const StoredObject& so = *stored[p.workload.value()];
    auto [memo_it, fresh] = pending_.try_emplace(&so);
    const PendingMemo& memo = memo_it->second;
    // Rendering every waiting workload's message each pass would cost a pass
    // in proportion to the queue: unchanged since the last rendering (the
    // workload, the cause, the names quoted), only the progress can differ,
    // and that is due every kProgressRefresh.
    const bool same = !fresh && memo.revision == so.revision && memo.context == context &&
                      memo.blocker == blocker_of(p) && memo.reason.SameCause(p.reason);
    if (!same) {
      render_and_write(p, *memo_it, /*paced=*/false);
    } else if (now - memo.rendered >= kProgressRefresh) {
      refresh_due.push_back(due(p, *memo_it));
    }
  }
  // Progress refreshes are paced (progress_budget_), the heads of
  // the queues first: refreshing every waiting workload every kProgressRefresh
  // would write 667 a second, forever, for a queue of 20,000. Further back,
  // a position is refreshed as the workload nears the head.
  const size_t refreshes = std::min<size_t>(refresh_due.size(), static_cast<size_t>(progress_budget_.Available(now)));
  std::partial_sort(refresh_due.begin(), refresh_due.begin() + static_cast<std::ptrdiff_t>(refreshes), refresh_due.end(),
                    [](const ProgressDue& a, const ProgressDue& b) { return a.position < b.position; });
  for (size_t i = 0; i < refreshes; ++i) {
    const ProgressDue& d = refresh_due[i];
    render_and_write(*d.decision, *d.memo, /*paced=*/true);
  }
  progress_budget_.Take(static_cast<int64_t>(refreshes));
  if (pending_.size() > 2 * plan.pending.size() + 1024) {
    // Forget workloads that no longer wait.
    std::set<const StoredObject*> pending_keys;
    for (const PendingDecision& p : plan.pending) pending_keys.insert(stored[p.workload.value()]);
    std::erase_if(pending_, [&](const auto& entry) { return !pending_keys.count(entry.first); });
  }
  std::lock_guard lock(mu_);
  stats_.pending_rendered += rendered;
}

void SchedulerLoop::NotePendingWritten() {
  // What landed is the rendering just made: the next pass need not render it
  // again to find it unchanged. (A write that failed leaves the old revision,
  // and the next pass renders.)
  for (const PendingWrite& w : pending_written_) {
    auto memo = pending_.find(w.memo_key);
    const StoredObject* now = cache_.Find(w.key);
    if (memo == pending_.end() || now != w.memo_key) continue;  // gone, or the cache was listed again
    if (ConditionValue(now->object, "QuotaReserved", "message") == w.message) memo->second.revision = now->revision;
  }
  pending_written_.clear();
}

void SchedulerLoop::SetMetrics(MetricsRegistry* registry) {
  metrics_ = registry;
  if (registry == nullptr) return;
  registry->AddCounter(kAdmissionsMetric, "Workloads admitted, by ClusterQueue");
  registry->AddCounter(kPreemptionsMetric, "Workloads preempted, by the victim's ClusterQueue and the reason");
  registry->AddCounter(kEventsDroppedMetric, "Events the scheduler dropped over its budget (a storm of changes)");
  registry->AddHistogram(kCycleDurationMetric, "Duration of one scheduling cycle (the core's decision)",
                         {0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1});
  registry->AddHistogram(kControllerDurationMetric, "Duration of one controller's part of a pass, by controller",
                         {0.0001, 0.0005, 0.001, 0.005, 0.01, 0.05, 0.1, 0.5, 1});
  registry->AddHistogram(kAdmissionWaitMetric, "Time from a workload's creation to its admission, by ClusterQueue",
                         {1, 5, 15, 30, 60, 300, 900, 1800, 3600, 7200, 14400, 43200, 86400});
}

std::vector<GaugeFamily> SchedulerLoop::Gauges() const {
  std::lock_guard lock(mu_);
  return gauges_;
}

Status SchedulerLoop::RunOnce() {
  const Timestamp now = clock_();
  const std::string now_text = FormatRfc3339(now);
  std::vector<std::shared_ptr<ForecastAsk>> asks;
  {
    std::lock_guard lock(mu_);
    asks.swap(forecasts_);
  }
  if (Status synced = cache_.Sync(); !synced.ok()) {
    std::lock_guard lock(mu_);
    forecasts_.insert(forecasts_.end(), asks.begin(), asks.end());  // for the next pass
    return synced;
  }
  BatchedWriter writer(store_, cache_);

  // Kept current by the cache as writes land; read between Flushes.
  const PodIndex& pods = pods_by_workload_.index();

  // 1. The controllers, in their order (BuildControllers), each pass's writes
  // flushed after each so that the next one reads them.
  if (controllers_.empty()) BuildControllers();
  PassContext pass(cache_, pods, workload_subsets_, now, writer, events_);
  pass.traffic = traffic_;
  for (Controller* c : controllers_) {
    const auto started = std::chrono::steady_clock::now();
    c->Reconcile(pass);
    writer.Flush();
    if (metrics_ != nullptr) {
      metrics_->Observe(kControllerDurationMetric, {{"controller", std::string(c->name())}},
                        std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count());
    }
  }
  const GpuUsageByDevice& usage = pass.gpu_usage();
  {
    std::lock_guard lock(mu_);
    wake_at_ = pass.wake_at();
  }

  // 2. The snapshot; 3. decide.
  PassInput in = BuildSnapshot(cache_, converted_, *approvals_, *dependencies_, *budgets_);
  const ClusterSnapshot& snapshot = in.snapshot;
  const auto cycle_start = std::chrono::steady_clock::now();
  const Plan plan = RunCycle(snapshot, config_, now);
  if (metrics_ != nullptr) {
    metrics_->Observe(kCycleDurationMetric, {},
                      std::chrono::duration<double>(std::chrono::steady_clock::now() - cycle_start).count());
  }

  // 4. Write the decisions back, in few transactions.
  auto queue_name = [&](ClusterQueueId id) { return snapshot.cluster_queue(id).name; };
  auto flavor_name = [&](FlavorId id) { return snapshot.flavor(id).name; };
  auto node_name = [&](NodeId id) { return snapshot.node(id).name; };
  for (const AdmitDecision& a : plan.admissions) {
    const StoredObject& so = *in.stored[a.workload.value()];
    const Workload& w = snapshot.workload(a.workload);
    json next = so.object;
    next["status"]["admission"] = AdmissionToJson(a.admission, w, queue_name, flavor_name, node_name, now_text);
    const std::string cq = snapshot.cluster_queue(a.admission.cluster_queue).name;
    SetCondition(next, "QuotaReserved", true, "QuotaReserved", fmt::format("Quota reserved in ClusterQueue {}", cq), now_text);
    SetCondition(next, "Admitted", true, "Admitted", fmt::format("The workload is admitted by ClusterQueue {}", cq), now_text);
    std::vector<WriteOp> unit;
    unit.push_back(WriteOp{.op = WriteOp::Kind::kUpdate, .key = so.key, .object = std::move(next), .expected_revision = so.revision});
    // Pods bound to their nodes and devices; the agent on each node runs them.
    // A placeholder holds its room with no pods (kPlaceholderAnnotation).
    std::vector<std::pair<ObjectKey, std::string>> scheduled;  // pod, node
    const bool placeholder =
        StringAt(so.object, {"metadata", "annotations", std::string(kPlaceholderAnnotation).c_str()}) == "true";
    for (size_t p = 0; !placeholder && p < a.admission.pod_sets.size(); ++p) {
      const PodSetAssignment& psa = a.admission.pod_sets[p];
      for (size_t i = 0; i < psa.pods.size(); ++i) {
        const Node& node = snapshot.node(psa.pods[i].node);
        json pod = PodFor(so, w, p, psa, i, node, now_text);
        ObjectKey key{kPodKind, so.key.ns, StringAt(pod, {"metadata", "name"})};
        scheduled.emplace_back(key, node.name);
        unit.push_back(WriteOp{.op = WriteOp::Kind::kCreate, .key = std::move(key), .object = std::move(pod)});
      }
    }
    writer.Add(std::move(unit), fmt::format("admit workload {}/{}", so.key.ns, so.key.name));
    const Duration waited = now - w.creation_time;
    if (metrics_ != nullptr) {
      metrics_->Increment(kAdmissionsMetric, {{"cluster_queue", cq}});
      metrics_->Observe(kAdmissionWaitMetric, {{"cluster_queue", cq}}, static_cast<double>(waited.ms) / 1000.0);
    }
    events_.Record(writer, so, EventRecorder::Type::kNormal, "Admitted",
                   fmt::format("Admitted by ClusterQueue {}, wait time since queued was {}s", cq, waited.ms / 1000), now);
    for (const auto& [pod_key, node] : scheduled) {
      StoredObject pod_ref{pod_key, 0, json{{"apiVersion", "v1"}, {"kind", "Pod"}, {"metadata", {{"uid", ""}}}}};
      events_.Record(writer, pod_ref, EventRecorder::Type::kNormal, "Scheduled",
                     fmt::format("Successfully assigned {}/{} to {}", pod_key.ns, pod_key.name, node), now);
    }
  }
  for (const PreemptDecision& p : plan.preemptions) {
    const StoredObject& so = *in.stored[p.victim.value()];
    static const char* kWhy[] = {"InClusterQueue", "InCohortReclamation", "InCohortReclaimWhileBorrowing"};
    const std::string message =
        fmt::format("preempted by {} ({})", snapshot.workload(p.preemptor).Key(), kWhy[static_cast<int>(p.reason)]);
    if (metrics_ != nullptr) {
      const Workload& victim = snapshot.workload(p.victim);
      const std::string victim_cq = victim.admission && victim.admission->cluster_queue.valid()
                                        ? snapshot.cluster_queue(victim.admission->cluster_queue).name
                                        : "";
      metrics_->Increment(kPreemptionsMetric, {{"cluster_queue", victim_cq}, {"reason", kWhy[static_cast<int>(p.reason)]}});
    }
    std::vector<WriteOp> unit = EvictionOps(so, pods, "Preempted", message, now_text);
    writer.Add(std::move(unit), fmt::format("evict workload {}/{}", so.key.ns, so.key.name));
    events_.Record(writer, so, EventRecorder::Type::kNormal, "Preempted", message, now);
  }
  WritePendingConditions(snapshot, plan, in.stored, now, writer);
  WriteQueueStatus(snapshot, plan, writer);
  WriteQuotaStatus(snapshot, plan, writer);
  events_.Expire(writer, now);
  writer.Flush();
  NotePendingWritten();
  if (metrics_ != nullptr && events_.dropped() > events_dropped_reported_) {
    metrics_->Increment(kEventsDroppedMetric, {}, static_cast<double>(events_.dropped() - events_dropped_reported_));
    events_dropped_reported_ = events_.dropped();
  }

  std::vector<GaugeFamily> gauges = ClusterGauges(snapshot, plan, now, usage);
  gauges.push_back(budgets_->Gauge());
  {
    std::lock_guard lock(mu_);
    gauges_ = std::move(gauges);
    ++stats_.passes;
    stats_.workloads_converted += in.converted;
    stats_.admitted += static_cast<int64_t>(plan.admissions.size());
    stats_.preempted += static_cast<int64_t>(plan.preemptions.size());
    stats_.pending = static_cast<int64_t>(plan.pending.size());
  }
  if (writer.wrote() && written_) written_();

  // The forecasts asked before this pass began (so that it sees what their
  // askers wrote first), on its state, its decisions carried out.
  if (!asks.empty()) {
    ApplyPlan(in.snapshot, plan, now);
    const ForecastPass fp{.cache = cache_, .approvals = *approvals_, .snapshot = in.snapshot,
                          .classes = in.classes, .config = config_, .now = now};
    for (const auto& ask : asks) {
      // A question the forecast could not take (an object it did not expect) is
      // answered as an error; it never stops the loop.
      const size_t workloads = in.snapshot.workloads.size(), namespaces = in.snapshot.namespaces.size();
      try {
        ask->answer.set_value(tessera::Forecast(fp, ask->object));
      } catch (const std::exception& e) {
        in.snapshot.workloads.resize(workloads);  // as the next question expects it
        in.snapshot.namespaces.resize(namespaces);
        ask->answer.set_value(Err(Status::Internal(fmt::format("the forecast failed: {}", e.what()))));
      }
    }
  }
  return Status::Ok();
}

Result<json> SchedulerLoop::Forecast(json object, std::chrono::milliseconds wait) {
  auto ask = std::make_shared<ForecastAsk>();
  ask->object = std::move(object);
  std::future<Result<json>> answer = ask->answer.get_future();
  {
    std::lock_guard lock(mu_);
    forecasts_.push_back(ask);
  }
  Kick();
  if (answer.wait_for(wait) == std::future_status::ready) return answer.get();
  {
    std::lock_guard lock(mu_);
    std::erase(forecasts_, ask);
  }
  // A pass may have taken it between the wait and the lock.
  if (answer.wait_for(std::chrono::milliseconds(0)) == std::future_status::ready) return answer.get();
  return Err(Status::Unavailable(fmt::format(
      "the scheduler did not answer within {}s: it is busy or not running on this server; try again", wait.count() / 1000)));
}

// ClusterQueue status: usage per flavor and resource, admitted and pending counts.
void SchedulerLoop::WriteQueueStatus(const ClusterSnapshot& snapshot, const Plan& plan, BatchedWriter& writer) {
  std::map<std::string, std::map<std::string, Resources>> usage;  // cq -> flavor -> used
  std::map<std::string, int64_t> admitted_count, pending_count;
  auto count_admitted = [&](const Workload& w) {
    const std::string cq = snapshot.cluster_queue(w.admission->cluster_queue).name;
    ++admitted_count[cq];
    ForEachFlavorUsage(snapshot, w, [&](int32_t f, const Resources& r) { usage[cq][snapshot.flavors[f].name] += r; });
  };
  for (const Workload& w : snapshot.workloads) {
    if (w.admission) count_admitted(w);
  }
  for (const AdmitDecision& a : plan.admissions) {
    Workload w = snapshot.workload(a.workload);
    w.admission = a.admission;
    count_admitted(w);
  }
  for (const PendingDecision& p : plan.pending) {
    const Workload& w = snapshot.workload(p.workload);
    if (!w.local_queue.valid() || !snapshot.local_queue(w.local_queue).cluster_queue.valid()) continue;
    ++pending_count[snapshot.cluster_queue(snapshot.local_queue(w.local_queue).cluster_queue).name];
  }
  for (const auto& [unused, c] : cache_.Of("kueue.x-k8s.io/ClusterQueue")) {
    const std::string& name = c.key.name;
    json flavors_usage = json::array();
    for (const ClusterQueue& cq : snapshot.cluster_queues) {
      if (cq.name != name) continue;
      for (const ResourceGroup& g : cq.resource_groups) {
        for (const FlavorQuotas& fq : g.flavors) {
          if (!fq.flavor.valid()) continue;
          const std::string fname = snapshot.flavor(fq.flavor).name;
          const Resources used = usage[name][fname];
          json resources = json::array();
          for (ResourceKind k : g.covered_resources) {
            const ResourceQuotaSpec* spec = fq.Find(k);
            const int64_t borrowed = std::max<int64_t>(0, used.get(k) - (spec ? spec->nominal : 0));
            resources.push_back({{"name", ResourceName(k)},
                                 {"total", FormatAmount(k, used.get(k))},
                                 {"borrowed", FormatAmount(k, borrowed)}});
          }
          flavors_usage.push_back({{"name", fname}, {"resources", resources}});
        }
      }
    }
    json status = c.object.value("status", json::object());
    status["flavorsUsage"] = flavors_usage;
    status["admittedWorkloads"] = admitted_count[name];
    status["reservingWorkloads"] = admitted_count[name];
    status["pendingWorkloads"] = pending_count[name];
    if (status == c.object.value("status", json::object())) continue;
    json next = c.object;
    next["status"] = std::move(status);
    writer.Add(WriteOp{.op = WriteOp::Kind::kUpdate, .key = c.key, .object = std::move(next), .expected_revision = c.revision},
               fmt::format("status of ClusterQueue {}", name));
  }
}

// ResourceQuota status: what admitted work uses against each hard ceiling.
void SchedulerLoop::WriteQuotaStatus(const ClusterSnapshot& snapshot, const Plan& plan, BatchedWriter& writer) {
  std::map<std::string, std::pair<Resources, Resources>> ns_used;  // ns -> (requests, limits)
  auto charge = [&](const Workload& w, const Admission& a) {
    for (size_t p = 0; p < a.pod_sets.size(); ++p) {
      for (const PodPlacement& pod : a.pod_sets[p].pods) {
        ns_used[w.namespace_name].first += PodCharge(w.pod_sets[p], pod);
        ns_used[w.namespace_name].second += PodLimitCharge(w.pod_sets[p], pod);
      }
    }
  };
  for (const Workload& w : snapshot.workloads) {
    if (w.admission) charge(w, *w.admission);
  }
  for (const AdmitDecision& a : plan.admissions) charge(snapshot.workload(a.workload), a.admission);
  // Claims, counted as the API server counts them when one is made (claim_admission.h).
  std::map<std::string, std::pair<int64_t, int64_t>> ns_claims;  // ns -> (claims, requested bytes)
  for (const auto& [key, claim] : cache_.Of("/PersistentVolumeClaim")) {
    ++ns_claims[claim.key.ns].first;
    ns_claims[claim.key.ns].second += ClaimBytes(claim.object);
  }
  for (const auto& [unused, q] : cache_.Of("/ResourceQuota")) {
    const json hard = q.object.value("spec", json::object()).value("hard", json::object());
    json used = json::object();
    for (const auto& [key, value] : hard.items()) {
      if (key == "persistentvolumeclaims") {
        used[key] = std::to_string(ns_claims[q.key.ns].first);
        continue;
      }
      if (key == "requests.storage") {
        used[key] = FormatBytes(ns_claims[q.key.ns].second);
        continue;
      }
      std::string resource = key;
      bool limits = false;
      if (resource.rfind("requests.", 0) == 0) resource = resource.substr(9);
      if (resource.rfind("limits.", 0) == 0) {
        resource = resource.substr(7);
        limits = true;
      }
      const auto kind = ParseResourceName(resource);
      if (!kind) continue;  // counted by nothing Tessera runs (count/jobs.batch...): not reported
      const auto& u = ns_used[q.key.ns];
      used[key] = FormatAmount(*kind, (limits ? u.second : u.first).get(*kind));
    }
    const json status{{"hard", hard}, {"used", used}};
    if (q.object.value("status", json::object()) == status) continue;
    json next = q.object;
    next["status"] = status;
    writer.Add(WriteOp{.op = WriteOp::Kind::kUpdate, .key = q.key, .object = std::move(next), .expected_revision = q.revision},
               fmt::format("status of ResourceQuota {}/{}", q.key.ns, q.key.name));
  }
}

}  // namespace tessera
