// SchedulerConfig: the knobs of one cycle. Defaults are what production uses.
#pragma once

#include <cstdint>

namespace tessera {

struct SchedulerConfig {
  // Actions, in the order the cycle runs them for each workload. Each can be
  // switched off (the simulator compares policies this way).
  bool enable_borrowing = true;   // cohort lending/borrowing; off: every queue is capped at nominal
  bool enable_preemption = true;  // within-queue priority preemption and cohort reclaim
  bool enable_backfill = true;    // reservations for blocked heads, backfill around them
  bool enable_fair_sharing = true;  // order borrowers by weighted dominant share
  bool enable_gpu_sharing = true;   // fractional pods share devices; off: a fraction takes a whole device

  // At most this many blocked workloads get a reservation per cycle (Slurm's
  // bf_max_job_test in spirit): computing one replays the ends of running work.
  int32_t max_reservations = 16;
  // Per cluster queue, preemption is searched until one search fails; this caps
  // the total searches per cycle so that a full fleet cannot make a cycle slow.
  int32_t max_preemption_searches = 256;

  // Fragmentation-aware placement (sched/demand_profile.h): a pod that fits on
  // several nodes goes where the expected fragmentation for the work in the
  // snapshot grows least, scoring at most this many candidate nodes (taken in
  // best-fit order); 0: plain best fit.
  int32_t fragmentation_candidates = 16;

  // Re-check every invariant after each action (tests; costly at fleet scale).
  bool check_invariants = false;
};

}  // namespace tessera
