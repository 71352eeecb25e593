// sched_scale: the scheduler core at the scale of DESIGN.md section 10.
//
// Builds one synthetic fleet (default: 10,000 nodes x 8 GPUs, 200 ClusterQueues
// in 10 cohorts, 100,000 queued workloads), then runs the full cycle (RunCycle,
// production configuration) --runs times on one thread and reports the median.
//
// What is timed: each RunCycle call alone, with std::chrono::steady_clock, from
// the call until the Plan is returned. Destroying the Plan happens after the
// clock is read and is not timed; neither is printing. Building the snapshot is
// timed and printed separately and is not part of any cycle figure. Every run
// counts: the first one or two are slower (fresh pages for the cycle's and the
// plan's memory), which the median absorbs. Each run's process CPU time is
// printed beside it, for reading the figures on a busy machine.
//
// The last three lines are the headline figures (DESIGN.md section 11):
//   BENCH sched_full_cycle_ms <median> ms
//   BENCH sched_admissions_per_s <admitted in one cycle / median seconds> 1/s
//   BENCH sched_peak_rss_mb <getrusage ru_maxrss> MB
//
// Usage: sched_scale [--runs N] [--nodes N] [--workloads N] [--queues N]
//                    [--cohorts N] [--seed N]
#include <fmt/format.h>
#include <sys/resource.h>
#include <time.h>

#include <algorithm>
#include <charconv>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "common/time.h"
#include "domain/quantity.h"
#include "sched/config.h"
#include "sched/cycle.h"
#include "sched/pending_reason.h"
#include "sched/plan.h"
#include "sim/synthetic_fleet.h"

namespace tessera {
namespace {

constexpr Timestamp kNow = Timestamp::FromSeconds(2'000'000);

struct Options {
  int32_t runs = 7;
  SyntheticFleetSpec spec;
};

constexpr std::string_view kUsage =
    "usage: sched_scale [--runs N] [--nodes N] [--workloads N] [--queues N] [--cohorts N] [--seed N]\n"
    "  defaults: --runs 7 --nodes 10000 --workloads 100000 --queues 200 --cohorts 10 --seed 42\n";

bool ParsePositive(std::string_view text, int64_t* out) {
  int64_t v = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (ec != std::errc() || end != text.data() + text.size() || v <= 0) return false;
  *out = v;
  return true;
}

// Returns false (after printing why) on a bad command line.
bool ParseArgs(int argc, char** argv, Options* o) {
  for (int i = 1; i < argc; ++i) {
    const std::string_view flag = argv[i];
    if (flag == "--help" || flag == "-h") {
      fmt::print("{}", kUsage);
      std::exit(0);
    }
    std::string_view value;
    std::string_view name = flag;
    if (const size_t eq = flag.find('='); eq != std::string_view::npos) {
      name = flag.substr(0, eq);
      value = flag.substr(eq + 1);
    } else if (i + 1 < argc) {
      value = argv[++i];
    } else {
      fmt::print(stderr, "sched_scale: {} needs a value\n{}", flag, kUsage);
      return false;
    }
    int64_t v = 0;
    if (!ParsePositive(value, &v) || v > 100'000'000) {
      fmt::print(stderr, "sched_scale: {} takes a positive integer, got '{}'\n{}", name, value, kUsage);
      return false;
    }
    const auto n = static_cast<int32_t>(v);
    if (name == "--runs") {
      o->runs = n;
    } else if (name == "--nodes") {
      o->spec.nodes = n;
    } else if (name == "--workloads") {
      o->spec.workloads = n;
    } else if (name == "--queues") {
      o->spec.cluster_queues = n;
    } else if (name == "--cohorts") {
      o->spec.cohorts = n;
    } else if (name == "--seed") {
      o->spec.seed = static_cast<uint64_t>(v);
    } else {
      fmt::print(stderr, "sched_scale: unknown flag {}\n{}", name, kUsage);
      return false;
    }
  }
  return true;
}

double Millis(std::chrono::steady_clock::duration d) {
  return std::chrono::duration<double, std::milli>(d).count();
}

double Median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const size_t n = v.size();
  return n % 2 == 1 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

// CPU time of this process (one thread), for comparison with the wall-clock
// figures on a shared machine where other work steals the core.
double ProcessCpuMs() {
  timespec ts{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) * 1e3 + static_cast<double>(ts.tv_nsec) / 1e6;
}

double PeakRssMb() {
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  return static_cast<double>(usage.ru_maxrss) / 1024.0;  // Linux: kilobytes
}

int64_t AdmittedGpuMilli(const Plan& plan) {
  int64_t milli = 0;
  for (const AdmitDecision& a : plan.admissions) {
    for (const PodSetAssignment& ps : a.admission.pod_sets) {
      for (const PodPlacement& pod : ps.pods) {
        for (const DeviceShare& d : pod.gpus) milli += d.milli;
      }
    }
  }
  return milli;
}

// part / whole as a percentage with one decimal: (1, 8) -> "12.5".
std::string Percent(int64_t part, int64_t whole) {
  return whole == 0 ? "0.0" : fmt::format("{:.1f}", 100.0 * static_cast<double>(part) / static_cast<double>(whole));
}

void Report(const Plan& plan) {
  const FragmentationReport& f = plan.fragmentation;
  const int64_t allocated = f.total_gpu_milli - f.free_gpu_milli;
  fmt::print("admitted:      {} workloads, {} GPUs\n", plan.admissions.size(),
             FormatMilliDecimal(AdmittedGpuMilli(plan)));
  fmt::print("pending:       {} workloads\n", plan.pending.size());
  std::map<std::string_view, int64_t> reasons;
  for (const PendingDecision& p : plan.pending) ++reasons[PendingReasonName(p.reason.code)];
  for (const auto& [name, count] : reasons) fmt::print("  {:<26} {}\n", name, count);
  fmt::print("preemptions:   {}\n", plan.preemptions.size());
  fmt::print("reservations:  {}\n", plan.reservations.size());
  fmt::print("allocation:    {} of {} GPUs allocated ({}%)\n", FormatMilliDecimal(allocated),
             FormatMilliDecimal(f.total_gpu_milli), Percent(allocated, f.total_gpu_milli));
  fmt::print("fragmentation: {} GPUs free, {} whole; {} GPU stranded on {} partly used devices ({}% of free)\n",
             FormatMilliDecimal(f.free_gpu_milli), f.whole_free_gpus, FormatMilliDecimal(f.stranded_gpu_milli),
             f.partly_used_devices, Percent(f.stranded_gpu_milli, f.free_gpu_milli));
  const CycleCounters& c = plan.counters;
  fmt::print("counters:      {} workloads considered, {} placement attempts, {} preemption searches, "
             "{} reservations computed\n",
             c.workloads_considered, c.placement_attempts, c.preemption_searches, c.reservations_computed);
}

int Main(int argc, char** argv) {
  Options o;
  if (!ParseArgs(argc, argv, &o)) return 2;
  const SyntheticFleetSpec& spec = o.spec;

  const auto build_start = std::chrono::steady_clock::now();
  const ClusterSnapshot snapshot = MakeSyntheticFleet(spec);
  const double build_ms = Millis(std::chrono::steady_clock::now() - build_start);
  fmt::print("sched_scale: {} nodes x {} GPUs ({} GPUs), {} ClusterQueues in {} cohorts, {} workloads queued\n",
             spec.nodes, spec.gpus_per_node, int64_t{spec.nodes} * spec.gpus_per_node, spec.cluster_queues,
             spec.cohorts, spec.workloads);
  fmt::print("snapshot built in {:.1f} ms (not part of the cycle figures)\n", build_ms);

  const SchedulerConfig config;
  std::vector<double> times;
  std::vector<double> cpu_times;
  std::vector<double> teardown_times;  // destroying a plan: the driver's cost, not the cycle's
  Plan first;
  bool deterministic = true;
  for (int32_t run = 0; run < o.runs; ++run) {
    const double cpu_start = ProcessCpuMs();
    const auto start = std::chrono::steady_clock::now();
    Plan plan = RunCycle(snapshot, config, kNow);
    const double ms = Millis(std::chrono::steady_clock::now() - start);
    const double cpu_ms = ProcessCpuMs() - cpu_start;
    times.push_back(ms);
    cpu_times.push_back(cpu_ms);
    fmt::print("run {}: {:.1f} ms (cpu {:.1f} ms)\n", run + 1, ms, cpu_ms);
    if (run == 0) {
      first = std::move(plan);
      continue;
    }
    if (plan.admissions.size() != first.admissions.size() || plan.pending.size() != first.pending.size() ||
        plan.preemptions.size() != first.preemptions.size()) {
      deterministic = false;
    }
    const auto teardown_start = std::chrono::steady_clock::now();
    { Plan doomed = std::move(plan); }
    teardown_times.push_back(Millis(std::chrono::steady_clock::now() - teardown_start));
  }
  if (!deterministic) fmt::print("WARNING: runs produced different plans for the same snapshot\n");

  Report(first);
  const double median_ms = Median(times);
  const auto [min_it, max_it] = std::minmax_element(times.begin(), times.end());
  fmt::print("cycle over {} runs: median {:.1f} ms, min {:.1f} ms, max {:.1f} ms (wall); cpu median {:.1f} ms\n",
             o.runs, median_ms, *min_it, *max_it, Median(cpu_times));
  if (!teardown_times.empty()) fmt::print("plan teardown (not in the cycle figure): median {:.1f} ms\n", Median(teardown_times));
  const double admissions_per_s =
      median_ms > 0 ? static_cast<double>(first.admissions.size()) / (median_ms / 1000.0) : 0.0;
  fmt::print("BENCH sched_full_cycle_ms {:.1f} ms\n", median_ms);
  fmt::print("BENCH sched_admissions_per_s {:.0f} 1/s\n", admissions_per_s);
  fmt::print("BENCH sched_peak_rss_mb {:.1f} MB\n", PeakRssMb());
  return 0;
}

}  // namespace
}  // namespace tessera

int main(int argc, char** argv) { return tessera::Main(argc, argv); }
