// sim_scale: the simulator's performance target (DESIGN.md section 10): a
// 100,000-job trace on a 1,000-GPU cluster replays in under 10 s on one core.
//
// The trace is generated (deterministic for --seed): Poisson arrivals offering
// --load (0.8) of the cluster's capacity, run times log-normal (median 20 min), 4 teams
// with equal quotas in one cohort; per job 60 % one GPU, 20 % a fraction (0.25 or
// 0.5), 15 % 2, 4 or 8 GPUs, 5 % gangs of 2-4 pods of 8 GPUs; priorities from the
// four default classes (training most). Each policy replays it once, timed with
// steady_clock from the call to Simulate until it returns (trace generation and
// set-up excluded), on one thread.
//
// Last lines:
//   BENCH sim_100k_jobs_<policy>_replay_s <seconds> s      (each policy)
//   BENCH sim_100k_jobs_replay_s <seconds of the slowest policy> s
//
// Usage: sim_scale [--jobs 100000] [--nodes 125] [--load 0.8] [--seed 42] [--policies static,borrowing,fractional,preemption]
#include <algorithm>
#include <chrono>
#include <cmath>
#include <random>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include "sim/sim_cluster.h"
#include "sim/sim_metrics.h"
#include "sim/simulator.h"

namespace tessera {
namespace {

std::vector<TraceJob> GenerateTrace(int64_t jobs, int64_t gpus, double load, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::lognormal_distribution<double> runtime(std::log(1200.0), 1.2);
  std::uniform_real_distribution<double> u(0, 1);
  static const char* kTeams[] = {"nlp", "vision", "speech", "research"};
  static const char* kClasses[] = {"training", "training", "development", "batch", "production"};
  std::vector<TraceJob> out;
  out.reserve(jobs);
  // A job asks for 2.575 GPUs on average (0.6 x 1 + 0.2 x 0.375 + 0.15 x 14/3 +
  // 0.05 x 3 x 8) for E[runtime]; arrivals offer `load` x the cluster's GPUs.
  const double mean_runtime = std::exp(std::log(1200.0) + 1.2 * 1.2 / 2);
  const double mean_gap = 2.575 * mean_runtime / (load * static_cast<double>(gpus));
  std::exponential_distribution<double> gap(1.0 / mean_gap);
  double t = 0;
  for (int64_t i = 0; i < jobs; ++i) {
    TraceJob j;
    j.line = i + 2;
    j.name = fmt::format("job-{}", i);
    j.team = kTeams[rng() % 4];
    j.priority_class = kClasses[rng() % 5];
    j.submit_s = static_cast<int64_t>(t);
    t += gap(rng);
    j.duration_s = std::clamp<int64_t>(static_cast<int64_t>(runtime(rng)), 10, 7 * 86400);
    const double r = u(rng);
    if (r < 0.60) {
      j.gpu_milli = 1000;
    } else if (r < 0.80) {
      j.gpu_milli = rng() % 2 ? 250 : 500;
    } else if (r < 0.95) {
      j.gpu_milli = 1000 * (int64_t{2} << (rng() % 3));
    } else {
      j.gpu_milli = 8000;
      j.pods = static_cast<int32_t>(2 + rng() % 3);
    }
    j.cpu_milli = 4000;
    j.memory_bytes = int64_t{16} << 30;
    out.push_back(std::move(j));
  }
  return out;
}

int Main(int argc, char** argv) {
  CLI::App app{"The simulator at scale: a generated 100,000-job trace on 1,000 GPUs"};
  int64_t jobs = 100'000;
  int32_t nodes = 125;
  uint64_t seed = 42;
  double load = 0.8;
  std::vector<std::string> policies = {"static", "borrowing", "fractional", "preemption"};
  app.add_option("--jobs", jobs);
  app.add_option("--nodes", nodes, "8-GPU nodes");
  app.add_option("--seed", seed);
  app.add_option("--load", load, "Offered load: GPU demand / cluster GPUs");
  app.add_option("--policies", policies)->delimiter(',');
  CLI11_PARSE(app, argc, argv);

  auto node_list = LoadSimNodes(fmt::format("{}x8xH100-80GB", nodes));
  if (!node_list) {
    fmt::print(stderr, "{}\n", node_list.error().message());
    return 1;
  }
  const std::vector<TraceJob> trace = GenerateTrace(jobs, int64_t{nodes} * 8, load, seed);
  const std::string manifests = DefaultPolicyManifests(*node_list, {"nlp", "vision", "speech", "research"});
  auto cluster = SimClusterFromManifests(std::move(*node_list), manifests);
  if (!cluster) {
    fmt::print(stderr, "{}\n", cluster.error().message());
    return 1;
  }
  fmt::print("{} jobs over {:.1f} days on {} nodes, {} GPUs\n", jobs,
             static_cast<double>(trace.back().submit_s) / 86400, nodes, nodes * 8);
  std::vector<std::string> bench;
  double slowest = 0;
  for (const std::string& name : policies) {
    auto policy = BuiltinPolicy(name, JobOrder::kFifo);
    if (!policy) {
      fmt::print(stderr, "{}\n", policy.error().message());
      return 2;
    }
    const auto start = std::chrono::steady_clock::now();
    auto result = Simulate(*cluster, trace, *policy, SimOptions{});
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    if (!result) {
      fmt::print(stderr, "{}\n", result.error().message());
      return 1;
    }
    const PolicyMetrics m = ComputeMetrics(*result);
    fmt::print("  {:<11} {:6.2f} s  {:7} cycles  {:6.1f} us/job  finished {}  allocated {:.1f}%  avg wait {:.0f} s  "
               "preemptions {}\n",
               name, seconds, result->cycles, seconds * 1e6 / static_cast<double>(jobs), m.finished, m.allocation_pct,
               m.queue_s.mean, m.preemptions);
    bench.push_back(fmt::format("BENCH sim_100k_jobs_{}_replay_s {:.2f} s", name, seconds));
    slowest = std::max(slowest, seconds);
  }
  for (const std::string& line : bench) fmt::print("{}\n", line);
  fmt::print("BENCH sim_100k_jobs_replay_s {:.2f} s\n", slowest);
  return 0;
}

}  // namespace
}  // namespace tessera

int main(int argc, char** argv) { return tessera::Main(argc, argv); }
