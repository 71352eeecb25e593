// Plan: the decisions of one scheduling cycle, as data. The caller (server or
// simulator) carries them out: binds admitted pods, evicts victims, writes each
// pending workload's reason into its status.
#pragma once

#include <cstdint>
#include <vector>

#include "common/time.h"
#include "domain/admission.h"
#include "domain/ids.h"
#include "domain/quota_limit.h"
#include "domain/resources.h"

namespace tessera {

enum class PendingCode : uint8_t {
  kNoLocalQueue,           // the workload names a LocalQueue that does not exist
  kNoClusterQueue,         // the LocalQueue names a ClusterQueue that does not exist
  kClusterQueueInactive,   // stopped, or misconfigured (ClusterQueue::inactive_reason)
  kNamespaceNotSelected,   // the ClusterQueue's namespaceSelector excludes the namespace
  kResourceNotCovered,     // the ClusterQueue has no quota at all for a requested resource
  kNamespaceQuota,         // a namespace ResourceQuota ceiling
  kClusterQueueQuota,      // nominal quota used up and the cohort cannot lend enough
  kNoCapacity,             // quota allows it, but no placement on the nodes fits
  kNoMatchingNodes,        // no schedulable node matches the flavor, selector and taints
  kReservedForOther,       // fits only on resources reserved for an earlier workload
  kBlockedByStrictFIFO,    // StrictFIFO: waits behind the head of its queue
  kWaitingForPreemption,   // victims chosen; waits for them to release their resources
  kBudget,                 // its namespace's Budget for the period would be exceeded
};

// Why placement failed on a flavor's nodes.
enum class CapacityBottleneck : uint8_t {
  kNone,
  kWholeGpus,    // no node has enough free whole GPUs for one pod
  kFraction,     // no device has the fraction free
  kCpuMemory,    // GPUs exist but not the CPU/memory beside them
  kGangSize,     // some pods fit, not the minimum of the gang
  kTopology,     // fits only by breaking a required topology (one rack / one NVLink domain)
};

// The outcome of trying one flavor.
struct FlavorAttempt {
  FlavorId flavor;
  PendingCode code = PendingCode::kNoCapacity;
  // kClusterQueueQuota / kResourceNotCovered: the resource that did not fit.
  ResourceKind resource = ResourceKind::kGpu;
  int64_t used = 0;             // the queue's usage of (flavor, resource)
  int64_t nominal = 0;
  int64_t requested = 0;        // what this workload adds
  int64_t cohort_can_lend = 0;  // what the rest of the cohort can lend now
  Limit borrowing_limit;
  bool in_cohort = false;
  bool never_borrows = false;   // its priority class is never preempted: only nominal quota may hold it
  // kNoCapacity: the numbers behind the bottleneck.
  CapacityBottleneck bottleneck = CapacityBottleneck::kNone;
  int32_t pod_set = 0;
  int32_t pods_needed = 0;   // the gang minimum
  int32_t pods_placed = 0;   // how many fitted before placement gave up
  int64_t pod_gpu_milli = 0;        // per pod
  int64_t largest_free_milli = 0;   // largest free block of whole GPUs on one node, or best device for a fraction
  int64_t free_gpu_milli = 0;       // free GPU in the flavor, all nodes
  int32_t nodes = 0;                // schedulable nodes of the flavor
  // kGangSize: nodes with the GPUs free for one more pod but not its cpu or
  // memory (then those, not the GPUs, are what the gang lacks).
  int32_t nodes_short_of_cpu_memory = 0;

  friend bool operator==(const FlavorAttempt&, const FlavorAttempt&) = default;
};

struct PendingReason {
  PendingCode code = PendingCode::kNoCapacity;
  std::vector<FlavorAttempt> flavors;  // in the order tried, for quota/capacity codes
  // kNamespaceQuota (and kBudget: used, hard and requested are its GPU time or money).
  int32_t resource_quota = -1;  // index in Namespace::quotas
  int32_t budget = -1;          // kBudget: index in Namespace::budgets
  bool budget_cost = false;     // kBudget: money (else GPU time) is what is short
  ResourceKind resource = ResourceKind::kGpu;
  bool limits = false;  // the limits.* ceiling rather than requests.*
  int64_t used = 0, hard = 0, requested = 0;
  // kBlockedByStrictFIFO: the head; kReservedForOther: the reservation holder.
  WorkloadId blocker;
  int32_t victims = 0;  // kWaitingForPreemption: victims still terminating
  bool preemption_never = false;       // preemptionPolicy Never kept it from preempting
  bool no_victims = false;             // preemption was searched and found no victim set
  // From a reservation, when one is held: computed from the run-time limits
  // (Workload::max_run) of the running work whose ends make room, never guessed.
  Timestamp estimated_start = Timestamp::Never();
  // No estimate exists because the room it needs is held by running work
  // without a run-time limit (it would fit once that work ended).
  bool waits_for_unbounded_work = false;
  int32_t queue_position = 0;          // 1-based among the pending of its ClusterQueue

  // The same cause: everything but the progress (estimated start, queue
  // position) and the blocker, whose id names another workload in another
  // cycle; a caller comparing two cycles' reasons compares the blockers' keys.
  bool SameCause(const PendingReason& other) const {
    return code == other.code && flavors == other.flavors && resource_quota == other.resource_quota &&
           budget == other.budget && budget_cost == other.budget_cost &&
           resource == other.resource && limits == other.limits && used == other.used && hard == other.hard &&
           requested == other.requested && victims == other.victims && preemption_never == other.preemption_never &&
           no_victims == other.no_victims;
  }
};

struct AdmitDecision {
  WorkloadId workload;
  Admission admission;
};

enum class PreemptionReason : uint8_t {
  kInClusterQueue,       // a higher-priority workload of the same ClusterQueue
  kReclaimWithinCohort,  // the owner of lent quota takes it back
  kBorrowWithinCohort,   // a higher-priority borrower in the cohort
};

struct PreemptDecision {
  WorkloadId victim;
  WorkloadId preemptor;
  PreemptionReason reason = PreemptionReason::kInClusterQueue;
};

struct PendingDecision {
  WorkloadId workload;
  PendingReason reason;
};

// A blocked workload's claim on future capacity (backfill with reservations).
struct Reservation {
  WorkloadId workload;
  FlavorId flavor;
  Timestamp start;  // earliest start, from the runtime limits of running work
  std::vector<PodPlacement> pods;
};

// Free GPU capacity after the cycle, and how much of it is stranded.
struct FragmentationReport {
  int64_t total_gpu_milli = 0;      // schedulable nodes
  int64_t free_gpu_milli = 0;
  int64_t whole_free_gpus = 0;      // devices with nothing on them
  int64_t stranded_gpu_milli = 0;   // free milli on partly used devices
  int32_t partly_used_devices = 0;
  // stranded / free, in thousandths: 0 = every free GPU is whole.
  int64_t FragmentationMilli() const {
    return free_gpu_milli == 0 ? 0 : stranded_gpu_milli * 1000 / free_gpu_milli;
  }
};

struct CycleCounters {
  int64_t workloads_considered = 0;
  int64_t placement_attempts = 0;
  int64_t preemption_searches = 0;
  int64_t reservations_computed = 0;
};

struct Plan {
  std::vector<AdmitDecision> admissions;      // in admission order
  std::vector<PreemptDecision> preemptions;
  std::vector<PendingDecision> pending;       // every workload left pending, in queue order
  std::vector<Reservation> reservations;
  FragmentationReport fragmentation;
  CycleCounters counters;
};

}  // namespace tessera
