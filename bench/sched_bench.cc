// Micro-benchmarks of one scheduling cycle (RunCycle) on synthetic fleets of
// several sizes (DESIGN.md section 10).
//
// Each size's snapshot is built once per process, outside the timed loop; only
// RunCycle is timed. items_per_second counts the workloads the cycle considered
// (Plan::counters.workloads_considered), so it is the cycle's throughput in
// queued workloads per second. The admitted/pending counters are per cycle.
//
// Two starting points:
//   - BM_RunCycle*: the synthetic fleet as generated: every GPU free, every
//     workload queued (the first cycle after a cold start);
//   - BM_RunCycleSteadyState: the same fleet after that first cycle has been
//     carried out (its admissions running, started at staggered times within
//     their runtime limits), the rest still queued: the fleet is full, so this
//     cycle exercises preemption and reservations rather than placement.
//
// Run: build/bench/sched_bench [--benchmark_min_time=0.5] [--benchmark_filter=...]
#include <benchmark/benchmark.h>

#include <algorithm>
#include <cstdint>
#include <map>
#include <memory>
#include <tuple>
#include <utility>

#include "common/time.h"
#include "sched/apply_plan.h"
#include "sched/config.h"
#include "sched/cycle.h"
#include "sched/plan.h"
#include "sim/synthetic_fleet.h"

namespace tessera {
namespace {

constexpr Timestamp kNow = Timestamp::FromSeconds(2'000'000);
constexpr int kWarmupCycles = 1;

// Carries out `plan` on `snapshot` (ApplyPlan: admitted workloads start), then
// staggers the start times within each workload's runtime limit, so that
// reservations see a spread of end times and preemption a spread of lost work.
void Apply(const Plan& plan, ClusterSnapshot* snapshot) {
  ApplyPlan(*snapshot, plan, kNow);
  for (const AdmitDecision& a : plan.admissions) {
    Workload& w = snapshot->workloads[a.workload.value()];
    const int64_t limit_s = w.max_run.infinite() ? 3600 : std::max<int64_t>(1, w.max_run.seconds());
    w.start_time = Timestamp::FromSeconds(kNow.seconds() - (int64_t{a.workload.value()} * 7919) % limit_s);
  }
}

// The snapshot for (nodes, workloads), built on first use and kept for the
// process: Google Benchmark calls a benchmark function several times (to size
// its iteration count), and a 100k-workload fleet takes a while to build.
const ClusterSnapshot& Fleet(int32_t nodes, int32_t workloads, bool steady_state) {
  static std::map<std::tuple<int32_t, int32_t, bool>, std::unique_ptr<ClusterSnapshot>> cache;
  auto& slot = cache[{nodes, workloads, steady_state}];
  if (slot == nullptr) {
    SyntheticFleetSpec spec;  // 8 GPUs per node, 200 queues in 10 cohorts
    spec.nodes = nodes;
    spec.workloads = workloads;
    slot = std::make_unique<ClusterSnapshot>(MakeSyntheticFleet(spec));
    if (steady_state) Apply(RunCycle(*slot, SchedulerConfig{}, kNow), slot.get());
  }
  return *slot;
}

void RunCycleOn(benchmark::State& state, const SchedulerConfig& config, bool steady_state = false) {
  const ClusterSnapshot& snapshot =
      Fleet(static_cast<int32_t>(state.range(0)), static_cast<int32_t>(state.range(1)), steady_state);
  int64_t considered = 0;
  int64_t admitted = 0;
  int64_t pending = 0;
  int64_t preemptions = 0;
  // Untimed warm-up: a process's first cycles at a new size are up to twice as
  // slow (fresh pages from the kernel for the cycle's and the plan's vectors);
  // a scheduler loop runs many cycles, so the warm figure is the one to track.
  for (int i = 0; i < kWarmupCycles; ++i) benchmark::DoNotOptimize(RunCycle(snapshot, config, kNow));
  for (auto _ : state) {
    Plan plan = RunCycle(snapshot, config, kNow);
    considered = plan.counters.workloads_considered;
    admitted = static_cast<int64_t>(plan.admissions.size());
    pending = static_cast<int64_t>(plan.pending.size());
    preemptions = static_cast<int64_t>(plan.preemptions.size());
    benchmark::DoNotOptimize(plan);
  }
  state.SetItemsProcessed(state.iterations() * considered);
  state.counters["admitted"] = static_cast<double>(admitted);
  state.counters["pending"] = static_cast<double>(pending);
  state.counters["preemptions"] = static_cast<double>(preemptions);
}

// The production configuration: borrowing, preemption, backfill, fair sharing
// and GPU sharing all on.
void BM_RunCycle(benchmark::State& state) { RunCycleOn(state, SchedulerConfig{}); }

// Admission and placement alone: no preemption search, no reservations.
void BM_RunCycleAdmitOnly(benchmark::State& state) {
  SchedulerConfig config;
  config.enable_preemption = false;
  config.enable_backfill = false;
  RunCycleOn(state, config);
}

// A full fleet: the cycle after the first one has been carried out.
void BM_RunCycleSteadyState(benchmark::State& state) { RunCycleOn(state, SchedulerConfig{}, /*steady_state=*/true); }

// Args: {nodes, workloads}.
BENCHMARK(BM_RunCycle)
    ->ArgNames({"nodes", "workloads"})
    ->Args({100, 1'000})
    ->Args({1'000, 10'000})
    ->Args({10'000, 100'000})
    ->Unit(benchmark::kMillisecond);
BENCHMARK(BM_RunCycleAdmitOnly)
    ->ArgNames({"nodes", "workloads"})
    ->Args({1'000, 10'000})
    ->Args({10'000, 100'000})
    ->Unit(benchmark::kMillisecond);
BENCHMARK(BM_RunCycleSteadyState)
    ->ArgNames({"nodes", "workloads"})
    ->Args({1'000, 10'000})
    ->Args({10'000, 100'000})
    ->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace tessera

BENCHMARK_MAIN();
