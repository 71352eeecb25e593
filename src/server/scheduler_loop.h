// SchedulerLoop: the control loop that turns stored objects into decisions and
// decisions into stored objects (DESIGN.md sections 3 and 5).
//
// One pass (RunOnce):
//   1. The controllers run in a fixed order (BuildControllers; each one file in
//      controllers/, behind controllers/controller.h), each pass's writes
//      flushed after each: namespaces' ServiceAccounts and uid ranges, Nodes'
//      pod ranges, claims' data, aggregated ClusterRoles, Jobs -> Workloads,
//      finished work, lost nodes' pods, Services' EndpointSlices, evicted work
//      requeued, usage records, idle notebooks, approval gates and budgets.
//   2. A ClusterSnapshot is built from the ObjectCache (the store's objects,
//      kept current from its event log, so a pass costs what changed): nodes, flavors, queues,
//      namespaces with their ResourceQuotas, priority classes, workloads; the
//      workloads gated by an approval are left out.
//   3. The scheduler core runs (RunCycle): a pure function of that snapshot.
//   4. Its plan is written back: admitted Workloads get status.admission, the
//      QuotaReserved/Admitted conditions and Pods bound to nodes and devices;
//      pending ones get the core's explanation in their conditions (written only
//      when it changes); victims are marked Evicted and their Pods terminating;
//      ClusterQueue and ResourceQuota status show usage; core v1 Events record
//      each decision for `describe`. Writes go in few transactions (BatchedWriter).
// The loop thread runs a pass whenever something relevant changed (Kick),
// batching bursts of writes into one pass, and at least every few seconds.
//
// Thread-safe: Kick from any thread; RunOnce from one thread at a time.
#pragma once

#include <chrono>
#include <condition_variable>
#include <functional>
#include <future>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <unordered_map>
#include <vector>

#include "common/result.h"
#include "common/time.h"
#include "common/token_bucket.h"
#include "sched/config.h"
#include "sched/plan.h"
#include "sched/snapshot.h"
#include "server/controllers/approval_controller.h"
#include "server/batched_writer.h"
#include "server/controllers/budget_controller.h"
#include "server/controllers/claim_reclaimer.h"
#include "server/controllers/clusterrole_aggregation.h"
#include "server/controllers/endpointslice_controller.h"
#include "server/event_recorder.h"
#include "server/controllers/controller.h"
#include "server/pod_index.h"
#include "server/metrics_registry.h"
#include "server/controllers/node_ipam_controller.h"
#include "server/controllers/dependency_controller.h"
#include "server/controllers/ttl_after_finished_controller.h"
#include "server/object_cache.h"
#include "server/workload_subsets.h"
#include "store/store.h"

namespace tessera {

struct SchedulerLoopStats {
  int64_t passes = 0;
  int64_t admitted = 0;
  int64_t preempted = 0;
  int64_t pending = 0;
  int64_t pending_rendered = 0;  // pending messages rendered (the rest were known unchanged)
  int64_t workloads_converted = 0;  // workloads converted from JSON (the rest were kept from earlier passes)
};

// Workloads converted from their JSON, kept from pass to pass (by the cache's
// object, whose address stays while the object lives: the revision tells a
// new object at a freed address from the old one): a pass converts only the
// ones whose revision changed, as long as the names
// the conversion resolves to ids (flavors, ClusterQueues, nodes) and the
// priority classes are those of the pass that converted them (`context`).
struct ConvertedWorkloads {
  struct Entry {
    int64_t revision = 0;
    Workload workload;
    uint64_t pass = 0;  // the last pass that held it
  };
  std::unordered_map<const StoredObject*, Entry> by_key;
  uint64_t context = 0;
  uint64_t pass = 0;
};

class SchedulerLoop {
 public:
  using Clock = std::function<Timestamp()>;

  // `written` is called after the loop wrote to the store (to wake watchers).
  SchedulerLoop(Store& store, SchedulerConfig config, Clock clock, std::function<void()> written);
  ~SchedulerLoop();

  void Start();
  void Stop();
  void Kick();

  // One pass, synchronously (tests call this directly, without Start).
  Status RunOnce();

  // What the scheduler would do with `object` (a workload kind, its namespace
  // and name set) submitted now: the SchedulingReview status that the next
  // pass computes (scheduling_forecast.h). Kicks the loop and waits for that
  // pass; Unavailable when none answers within `wait` (the loop is stopped,
  // or busy) — a test that calls RunOnce itself gives that pass from another
  // thread. Thread-safe.
  Result<nlohmann::json> Forecast(nlohmann::json object, std::chrono::milliseconds wait);
  SchedulerLoopStats stats() const;

  // Registers the scheduler's counters and histograms in `registry` and updates
  // them from now on (admissions and preemptions by ClusterQueue, the cycle's
  // duration, admission waits). Call before Start. `registry` must outlive the loop.
  void SetMetrics(MetricsRegistry* registry);
  // The cluster as the last pass left it, as gauges (cluster_gauges.h).
  std::vector<GaugeFamily> Gauges() const;
  // Who may approve in a namespace, for the messages of workloads waiting for
  // approval (approval_controller.h). Call before Start.
  void SetApprovers(ApprovalController::Approvers approvers) { approvals_->SetApprovers(std::move(approvers)); }
  // The RBAC index's aggregation, written into aggregating ClusterRoles. Call before Start.
  void SetAggregatedRules(AggregatedRules rules) { aggregated_rules_ = std::move(rules); }
  // Gives each Node a pod range of `ranges` (node_ipam_controller.h); without
  // this call Nodes get none. Call before Start.
  void SetNodeCidrs(NodeCidrSet ranges) { node_cidrs_.emplace(ranges); }
  // Deletes the directories of claims that are gone from the shared volume
  // root (claim_reclaimer.h); without this call none are. Call before Start.
  void SetVolumeRoot(std::string root) { volume_root_.emplace(std::move(root)); }
  // The services proxy's load, for the InferenceService autoscaler (PassContext::traffic).
  void SetServiceTraffic(const ServiceTraffic* traffic) { traffic_ = traffic; }

 private:
  void Run();
  // The controllers a pass runs, in order (controllers/controller.h), from
  // the options set before the first pass.
  void BuildControllers();
  void WriteQueueStatus(const ClusterSnapshot& snapshot, const Plan& plan, BatchedWriter& writer);
  void WriteQuotaStatus(const ClusterSnapshot& snapshot, const Plan& plan, BatchedWriter& writer);
  // Each pending workload's QuotaReserved and Admitted conditions, with an event
  // when the cause changes; `stored` maps the snapshot's workloads to their objects.
  void WritePendingConditions(const ClusterSnapshot& snapshot, const Plan& plan,
                              const std::vector<const StoredObject*>& stored, Timestamp now, BatchedWriter& writer);
  // After the pass's writes: the memo of each pending condition written takes
  // the revision that holds it.
  void NotePendingWritten();

  Store& store_;
  SchedulerConfig config_;
  Clock clock_;
  std::function<void()> written_;
  ObjectCache cache_;  // owned by the thread running RunOnce
  PodsByWorkload pods_by_workload_;
  WorkloadSubsets workload_subsets_;  // the admitted and suspended Workloads, for the controllers
  EventRecorder events_;
  AggregatedRules aggregated_rules_;
  std::optional<NodeCidrSet> node_cidrs_;
  std::optional<std::string> volume_root_;
  const ServiceTraffic* traffic_ = nullptr;
  // The controllers the snapshot consults (approvals, budgets) or that observe
  // cache_ from construction; the others are made by BuildControllers.
  std::unique_ptr<ApprovalController> approvals_;
  std::unique_ptr<BudgetController> budgets_;                 // observes cache_
  std::unique_ptr<EndpointSliceController> endpoint_slices_;  // observes cache_
  std::unique_ptr<TtlAfterFinishedController> ttl_after_finished_;  // observes cache_
  std::unique_ptr<DependencyController> dependencies_;             // observes cache_
  std::vector<std::unique_ptr<Controller>> owned_;
  std::vector<Controller*> controllers_;  // in pass order
  int64_t events_dropped_reported_ = 0;  // to the metrics registry
  // What the last rendering of a pending workload's message was made from, by
  // the cache's object (as ConvertedWorkloads: the revision tells a new object
  // at a freed address from the old one); owned by the thread running RunOnce.
  struct PendingMemo {
    int64_t revision = 0;  // the workload's, when rendered
    uint64_t context = 0;  // a hash of the snapshot's names it quotes, when rendered
    PendingReason reason;
    std::string blocker;  // the blocker's key; "" when none
    Timestamp rendered;
    std::optional<Timestamp> progress_written;  // the queue position or estimated start, last written
  };
  using PendingMemos = std::unordered_map<const StoredObject*, PendingMemo>;
  PendingMemos pending_;
  ConvertedWorkloads converted_;  // owned by the thread running RunOnce
  struct PendingWrite {
    const StoredObject* memo_key;
    ObjectKey key;
    std::string message;
  };
  std::vector<PendingWrite> pending_written_;  // this pass's, until NotePendingWritten
  // Progress refreshes, at most 50 a second, 100 at once after a quiet spell,
  // as Kueue's controller writes (its client's QPS and burst); owned by the
  // thread running RunOnce.
  TokenBucket progress_budget_{50, 100};
  mutable std::mutex mu_;
  std::condition_variable cv_;
  bool kicked_ = false;
  std::optional<Timestamp> wake_at_;  // the pass a controller asked for (PassContext::WakeAt)
  struct ForecastAsk {
    nlohmann::json object;
    std::promise<Result<nlohmann::json>> answer;
  };
  std::vector<std::shared_ptr<ForecastAsk>> forecasts_;  // guarded by mu_; answered by the next pass
  int64_t writes_since_pass_ = 0;  // API writes (Kick) since the last pass started
  bool stop_ = false;
  std::thread thread_;
  SchedulerLoopStats stats_;
  MetricsRegistry* metrics_ = nullptr;
  std::vector<GaugeFamily> gauges_;  // guarded by mu_
};

}  // namespace tessera
