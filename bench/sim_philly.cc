// sim_philly: the Philly team-quota experiment (docs/simulator.md) and the replay
// time of the largest shared trace.
//
// The 11 teams of philly-sia/philly_vc.csv as ClusterQueues in one cohort, each
// with its node count x 8 GPUs as nominal quota (x --scale), on a cluster of
// exactly those GPUs; the jobs submitted in October and November 2017. Policies:
// static reservation (FIFO and shortest-job-first), quotas with borrowing, and
// borrowing with priority preemption (reclaim). At --scale 1 (2,816 GPUs, the
// study's quotas) this trace keeps the cluster about 14 % busy and little waits;
// the study's own copy of the trace was far heavier, so the experiment also runs
// at a quarter of the capacity, where queueing delay is of the published order.
//
// Then the whole trace (Sep-Dec 2017, 82,247 jobs) is replayed once at scale 1
// with every action on (policy "preemption"), timed from the Simulate call to
// its return on one thread: BENCH sim_philly_replay_s.
//
// Last lines:
//   BENCH sim_philly_q<scale>_<policy>_avg_jct_s / _avg_wait_s   per policy and scale
//   BENCH sim_philly_q<scale>_fifo_sjf_jct_ratio                 static FIFO / static SJF
//   BENCH sim_philly_replay_s
//
// Usage: sim_philly [--traces DIR] [--scales 1,0.25]
#include <chrono>
#include <fstream>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include "common/csv_rows.h"
#include "sim/sim_cluster.h"
#include "sim/sim_metrics.h"
#include "sim/simulator.h"
#include "sim/trace.h"
#include "sim_traces_dir.h"

namespace tessera {
namespace {

struct Team {
  std::string vc;
  int64_t nodes = 0;
};

Result<std::vector<Team>> ReadVcs(const std::string& path) {
  std::ifstream in(path);
  if (!in) return Err(Status::NotFound(fmt::format("cannot open {}", path)));
  std::vector<Team> teams;
  Status s = ForEachCsvRow(
      in, [](CsvFields) { return Status::Ok(); },
      [&](int64_t, CsvFields f) -> Status {
        if (f.size() >= 2) teams.push_back(Team{std::string(f[0]), std::stoll(std::string(f[1]))});
        return Status::Ok();
      });
  if (!s.ok()) return Err(s);
  return teams;
}

// The teams as ClusterQueues in cohort "philly" and their LocalQueues.
std::string PolicyManifests(const std::vector<Team>& teams, double scale, int64_t* gpus) {
  std::string out = "apiVersion: kueue.x-k8s.io/v1beta1\nkind: ResourceFlavor\nmetadata: {name: default}\n";
  *gpus = 0;
  for (const Team& t : teams) {
    const auto quota = std::max<int64_t>(8, static_cast<int64_t>(static_cast<double>(t.nodes * 8) * scale) / 8 * 8);
    *gpus += quota;
    out += fmt::format(
        "---\napiVersion: kueue.x-k8s.io/v1beta1\nkind: ClusterQueue\nmetadata: {{name: vc-{0}}}\nspec:\n"
        "  cohort: philly\n  namespaceSelector: {{}}\n  resourceGroups:\n  - coveredResources: [nvidia.com/gpu]\n"
        "    flavors:\n    - name: default\n      resources:\n      - {{name: nvidia.com/gpu, nominalQuota: {1}}}\n"
        "---\napiVersion: kueue.x-k8s.io/v1beta1\nkind: LocalQueue\nmetadata: {{name: \"{0}\", namespace: \"{0}\"}}\n"
        "spec: {{clusterQueue: vc-{0}}}\n",
        t.vc, quota);
  }
  return out;
}

Result<SimCluster> ClusterFor(const std::vector<Team>& teams, double scale) {
  int64_t gpus = 0;
  const std::string manifests = PolicyManifests(teams, scale, &gpus);
  ASSIGN_OR_RETURN(auto nodes, LoadSimNodes(fmt::format("{}x8xP100", gpus / 8)));
  return SimClusterFromManifests(std::move(nodes), manifests);
}

int Main(int argc, char** argv) {
  CLI::App app{"The Philly team-quota experiment"};
  std::string traces = SharedTracesDir();
  std::vector<double> scales = {1, 0.25};
  app.add_option("--traces", traces, "The shared traces directory");
  app.add_option("--scales", scales, "Capacity scales to run the experiment at")->delimiter(',');
  CLI11_PARSE(app, argc, argv);
  if (traces.empty()) {
    fmt::print("sim_philly: ../shared/traces not found; skipped (give --traces DIR)\n");
    return 0;
  }
  auto fail = [](const Status& s) {
    fmt::print(stderr, "{}\n", s.message());
    return 1;
  };
  auto teams = ReadVcs(traces + "/philly-sia/philly_vc.csv");
  if (!teams) return fail(teams.error());
  auto all = ReadTraceFile(traces + "/philly-sia/philly.csv", TraceReadOptions{.format = TraceFormat::kPhilly});
  if (!all) return fail(all.error());
  // October and November 2017 (UTC), renumbered from the first of them.
  constexpr int64_t kOct1 = 1506816000, kDec1 = 1512086400;
  const int64_t origin_s = all->origin_unix_ms / 1000;
  std::vector<TraceJob> window;
  for (const TraceJob& j : all->jobs) {
    if (origin_s + j.submit_s >= kOct1 && origin_s + j.submit_s < kDec1) window.push_back(j);
  }
  const int64_t first = window.empty() ? 0 : window.front().submit_s;
  for (TraceJob& j : window) j.submit_s -= first;

  std::vector<std::string> bench;
  for (double scale : scales) {
    auto cluster = ClusterFor(*teams, scale);
    if (!cluster) return fail(cluster.error());
    fmt::print("Oct-Nov 2017: {} jobs; capacity x{}: {} GPUs in {} team queues\n", window.size(), scale,
               cluster->TotalGpuMilli() / 1000, cluster->base.cluster_queues.size());
    fmt::print("  {:<16} {:>12} {:>12} {:>10} {:>12} {:>9}\n", "POLICY", "AVG JCT (s)", "AVG WAIT (s)", "ALLOCATED",
               "PREEMPTIONS", "TIME (s)");
    const std::string tag = fmt::format("q{}", scale == 1 ? std::string("1") : fmt::format("{:g}", scale).substr(2));
    double fifo_jct = 0, sjf_jct = 0;
    struct Run {
      const char* name;
      const char* policy;
      JobOrder order;
    };
    for (const Run& run : {Run{"static", "static", JobOrder::kFifo}, Run{"static_sjf", "static", JobOrder::kSjf},
                           Run{"borrowing", "borrowing", JobOrder::kFifo},
                           Run{"preemption", "preemption", JobOrder::kFifo}}) {
      auto policy = BuiltinPolicy(run.policy, run.order);
      if (!policy) return fail(policy.error());
      const auto start = std::chrono::steady_clock::now();
      auto result = Simulate(*cluster, window, *policy, SimOptions{});
      const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
      if (!result) return fail(result.error());
      const PolicyMetrics m = ComputeMetrics(*result);
      fmt::print("  {:<16} {:>12.0f} {:>12.0f} {:>9.1f}% {:>12} {:>9.2f}\n", run.name, m.jct_s.mean, m.queue_s.mean,
                 m.allocation_pct, m.preemptions, seconds);
      bench.push_back(fmt::format("BENCH sim_philly_{}_{}_avg_jct_s {:.0f} s", tag, run.name, m.jct_s.mean));
      bench.push_back(fmt::format("BENCH sim_philly_{}_{}_avg_wait_s {:.0f} s", tag, run.name, m.queue_s.mean));
      if (std::string_view(run.name) == "static") fifo_jct = m.jct_s.mean;
      if (std::string_view(run.name) == "static_sjf") sjf_jct = m.jct_s.mean;
    }
    const double ratio = sjf_jct > 0 ? fifo_jct / sjf_jct : 0;
    fmt::print("  FIFO / SJF average JCT: {:.2f} (published, Helios study: 86,072 / 34,272 = 2.51)\n\n", ratio);
    bench.push_back(fmt::format("BENCH sim_philly_{}_fifo_sjf_jct_ratio {:.2f} x", tag, ratio));
  }

  // The largest trace, whole.
  auto cluster = ClusterFor(*teams, 1);
  if (!cluster) return fail(cluster.error());
  auto policy = BuiltinPolicy("preemption", JobOrder::kFifo);
  if (!policy) return fail(policy.error());
  const auto start = std::chrono::steady_clock::now();
  auto result = Simulate(*cluster, all->jobs, *policy, SimOptions{});
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  if (!result) return fail(result.error());
  fmt::print("whole trace: {} jobs, {} cycles, replayed in {:.2f} s\n", all->jobs.size(), result->cycles, seconds);
  for (const std::string& line : bench) fmt::print("{}\n", line);
  fmt::print("BENCH sim_philly_replay_s {:.2f} s\n", seconds);
  return 0;
}

}  // namespace
}  // namespace tessera

int main(int argc, char** argv) { return tessera::Main(argc, argv); }
