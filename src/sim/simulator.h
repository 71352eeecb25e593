// Simulate: replays a trace against a cluster and policy with the scheduler core
// that runs in production (RunCycle), driven by a virtual clock instead of the
// server. Deterministic: the same inputs give the same outcome, byte for byte.
//
// The model:
//   - each job arrives at its submit time as a Workload of one pod set (its gang)
//     in the LocalQueue of its team (QueueNameForTeam, in the namespace of that
//     name; failing that the policy's only LocalQueue); jobs whose team has no
//     queue are left out and counted;
//   - at every instant where something happened (arrivals, completions) the core
//     runs a cycle on the current state; admitted jobs start at once and end after
//     their remaining run time; preemption victims stop at once, lose the work
//     since their last checkpoint (every `checkpoint_interval` of run time) and
//     go back to their queue, and the core runs again at the same instant so that
//     the preemptor takes the room;
//   - a cycle after nothing but arrivals considers only the new jobs, the jobs
//     holding reservations and pending jobs that could preempt one of the new
//     jobs: every other pending job was refused on a state that has only filled
//     since, so the core would refuse it again (this keeps long queues cheap);
//   - with `drop_unschedulable` (the fragmentation protocol: no queueing) a job
//     that the cycle after its arrival does not admit is dropped.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "common/time.h"
#include "sched/config.h"
#include "sim/sim_cluster.h"
#include "sim/trace.h"

namespace tessera {

enum class JobOrder {
  kFifo,  // the core's order: priority, then submission time
  kSjf,   // shortest job first (oracle: the trace's run time) within a priority
};

struct SimPolicy {
  std::string name;
  SchedulerConfig config;
  JobOrder order = JobOrder::kFifo;
  // Preemption settings for ClusterQueues whose policy sets none (all Never):
  // withinClusterQueue LowerPriority, reclaimWithinCohort Any. Off: as configured.
  bool default_preemption = false;
};

struct SimOptions {
  // A preempted job resumes from its last checkpoint; zero: from the start.
  Duration checkpoint_interval = Duration::Seconds(1800);
  // Give the core each job's run time as its runtime limit (maxRunSeconds), so
  // that backfill can reserve; off: no limits, as in the trace.
  bool runtime_limits = false;
  bool drop_unschedulable = false;
  // Stop at this virtual time (seconds from the first submission); jobs still
  // running or pending are reported unfinished. Negative: run to the end.
  int64_t horizon_s = -1;
};

struct JobRecord {
  int32_t trace_index = 0;  // in the trace's job vector
  int32_t team = 0;         // index in SimResult::teams
  int64_t submit_s = 0;
  int64_t first_start_s = -1;  // -1: never started
  int64_t end_s = -1;          // -1: not finished
  int64_t gpu_milli = 0;       // the whole gang, as requested
  int64_t held_gpu_milli = 0;  // as held on devices (a fraction takes a whole device without sharing)
  int64_t duration_s = 0;
  int32_t preemptions = 0;
  int64_t lost_gpu_milli_s = 0;  // work thrown away by preemptions (milli-GPU x s)
  int64_t run_gpu_milli_s = 0;   // device time held, including lost work
  bool dropped = false;          // drop_unschedulable refused it (never admitted work is unfinished)
};

// The cluster over time: one sample after each instant where something changed.
struct SimSample {
  int64_t t_s = 0;
  int64_t allocated_gpu_milli = 0;
  int64_t stranded_gpu_milli = 0;  // free on partly used devices
  int32_t running = 0;
  int32_t pending = 0;
};

struct SimResult {
  std::string policy;
  std::vector<std::string> teams;       // queue names, in order of first appearance
  std::vector<int64_t> team_nominal_gpu_milli;  // nominal GPU quota of each team's ClusterQueue
  std::vector<JobRecord> jobs;          // one per job simulated, in trace order
  std::vector<SimSample> samples;
  int64_t total_gpu_milli = 0;
  int64_t jobs_left_out = 0;            // no queue for their team
  std::vector<std::string> warnings;
  int64_t cycles = 0;
  int64_t preemptions = 0;
  int64_t end_s = 0;                    // the instant of the last event
  // Fairness while teams wait (some team has pending work): at each instant each
  // team's fair share of what is allocated is its weighted max-min share
  // (weights: nominal GPU quota; capped by its demand, running plus pending);
  // Jain's index of allocated / fair share, time-weighted over those instants.
  double fairness_jain = 1;
  int64_t contended_s = 0;
  std::vector<double> team_allocated_gpu_milli_s;  // per team, over the whole run
  std::vector<double> team_fair_gpu_milli_s;       // per team, fair share over the whole run
};

// `jobs` in submission order, each as trace.h describes (InvalidArgument naming
// the job otherwise). A job asking for several GPU models may run on any of them.
Result<SimResult> Simulate(const SimCluster& cluster, const std::vector<TraceJob>& jobs, const SimPolicy& policy,
                           const SimOptions& options);

// The built-in policies compared on one trace (tessera sim --policies):
//   static      every team capped at its nominal quota (no borrowing), fractions
//               take whole GPUs, no preemption: manual allocation
//   borrowing   nominal quotas with cohort borrowing
//   fractional  borrowing plus fractional packing (GPU sharing)
//   preemption  borrowing, fractional packing and priority preemption (queues
//               without a preemption policy get LowerPriority/reclaim Any)
//   configured  the policy file as written, every action on
// Each takes `order` as given. Errors name the valid policies.
Result<SimPolicy> BuiltinPolicy(std::string_view name, JobOrder order);

}  // namespace tessera
