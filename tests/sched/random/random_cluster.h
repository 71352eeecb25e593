// Random clusters for property tests of the scheduler core.
//
// MakeRandomCluster(seed) builds a small fleet that exercises every feature the
// cycle handles: 1-3 flavors selected by node labels (one may match every node),
// 1-24 nodes of 1-8 GPUs with varied NVLink domains, racks, taints, CPU/memory,
// some not ready or cordoned; 1-6 ClusterQueues, some in 1-2 cohorts, with random
// nominal quotas, borrowing and lending limits, preemption policies, queueing
// strategies and fair-sharing weights; LocalQueues (one may name a missing
// ClusterQueue), namespaces with ResourceQuotas; priority classes (some
// preemptionPolicy Never, some non-preemptible); and 0-60 workloads: fractions,
// whole GPUs, GPU-memory requests, gangs with minCount, selectors, tolerations,
// topology, finite or infinite maxRun.
//
// Running work is valid by construction: the generator never places pods by
// hand. It runs warm-up cycles of RunCycle over a random subset of the workloads
// and carries out their plans (CarryOutPlan), so devices, nodes, quotas and
// namespace ceilings are consistent with what the scheduler itself admits. Only
// then, for some seeds, does the cluster "drift" the way an admin changes it
// under running work: a node cordoned or lost, a quota or ceiling lowered, a
// queue stopped.
//
// Deterministic for a seed on every platform: integers come from the raw
// std::mt19937_64 output (lo + rng() % (hi - lo + 1)), never from the standard
// distributions, whose algorithms differ between standard libraries.
//
// Not thread-safe (each Rng is single-owner); everything else is plain values.
#pragma once

#include <cstdint>
#include <functional>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "common/time.h"
#include "domain/priority_class.h"
#include "sched/config.h"
#include "sched/plan.h"
#include "sched/snapshot.h"

namespace tessera::testing {

class Rng {
 public:
  explicit Rng(uint64_t seed) : engine_(seed) {}

  // Uniform in [lo, hi]. REQUIRES: lo <= hi.
  int64_t Uniform(int64_t lo, int64_t hi) {
    return lo + static_cast<int64_t>(engine_() % static_cast<uint64_t>(hi - lo + 1));
  }
  // True with probability percent / 100.
  bool Chance(int percent) { return Uniform(0, 99) < percent; }
  template <typename T>
  const T& Pick(const std::vector<T>& v) {
    return v[static_cast<size_t>(Uniform(0, static_cast<int64_t>(v.size()) - 1))];
  }

 private:
  std::mt19937_64 engine_;
};

// What new workloads of a generated cluster may look like: the generator's
// choices for this seed, kept so that later cycles can add arrivals.
struct WorkloadMix {
  std::vector<PriorityClass> priority_classes;
  // (namespace, LocalQueue name); a few name a LocalQueue that does not exist.
  std::vector<std::pair<std::string, std::string>> queues;
  std::vector<std::string> zones;  // values of the "zone" node label
  int32_t next_id = 0;             // workloads are named w<id>
};

struct RandomCluster {
  uint64_t seed = 0;
  ClusterSnapshot snapshot;
  Timestamp now;
  WorkloadMix mix;
};

RandomCluster MakeRandomCluster(uint64_t seed);

// Each action on with probability 3/4; sometimes small reservation and
// preemption-search caps. check_invariants stays off (the caller checks).
SchedulerConfig RandomConfig(Rng& rng);

struct CarryOutOptions {
  int finish_percent = 15;  // chance that a running workload ends before the next cycle
  int checkpoint_percent = 30;
  int evict_percent = 5;  // chance that a running workload starts terminating (deleted)
  int max_arrivals = 4;   // new pending workloads per step (0 with no mix)
};

// The snapshot of the next cycle, at `next`, after `plan` (made at `now`) is
// carried out the way the server would:
//   - admitted workloads run from `now`;
//   - preemption victims and workloads that were terminating release everything
//     and are pending again;
//   - running work past its maxRun at `next`, and a random part of the rest,
//     finishes and leaves; some of what remains reports a checkpoint or starts
//     terminating;
//   - up to options.max_arrivals new workloads arrive (when `mix` is given).
ClusterSnapshot CarryOutPlan(const ClusterSnapshot& snapshot, const Plan& plan, Timestamp now, Timestamp next, Rng& rng,
                             WorkloadMix* mix, const CarryOutOptions& options = CarryOutOptions{});

// One cycle of a randomized run, as RunRandomCycles passes it on.
struct CycleRun {
  uint64_t seed = 0;
  int cycle = 0;  // 0-based
  const ClusterSnapshot* snapshot = nullptr;
  const SchedulerConfig* config = nullptr;
  Timestamp now;
  const Plan* plan = nullptr;
};

// Runs `cycles` cycles from MakeRandomCluster(seed) under one RandomConfig (drawn
// from a generator of its own, so the cluster does not depend on it): after each
// RunCycle calls fn, then applies the plan (CarryOutPlan, with arrivals) and moves
// time on by 1 s to 30 min.
void RunRandomCycles(uint64_t seed, int cycles, const std::function<void(const CycleRun&)>& fn);

// The seed range a randomized test runs: [first, first + count), unless the
// environment sets TESSERA_RANDOM_SEED=<seed> to replay one seed.
struct SeedRange {
  uint64_t first = 0;
  uint64_t count = 0;
  bool replay = false;  // one seed from the environment: describe every cycle
};
SeedRange SeedsFromEnvironment(uint64_t first, uint64_t count);

// One line per object, for failure messages and for minimising a case by hand.
std::string DescribeSnapshot(const ClusterSnapshot& snapshot);
std::string DescribePlan(const ClusterSnapshot& snapshot, const Plan& plan, Timestamp now);
std::string DescribeConfig(const SchedulerConfig& config);
// "=== seed S cycle C now=T config: ...", the snapshot, then the plan.
std::string DescribeCycle(const CycleRun& run);

}  // namespace tessera::testing
