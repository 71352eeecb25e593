// sim_fragmentation: the FGD paper's fragmentation protocol on the openb trace
// (src/sim/fragmentation_experiment.h; ../shared/traces/README.md), for Tessera's
// placement beside the Random and BestFit baselines, with the published figures
// (fgd_expected_results/analysis_allo_discrete.csv, seed means) beside them.
//
// For each pod list (default, gpushare100) and each seed (42..51): GPUs allocated
// (%) once 130 % of the cluster's GPUs were requested; the figure is the mean
// over seeds (as the paper's), with min and max. Cost per decision: the time each
// placement call took, summed over every run of a method, per pod.
//
// Last lines:
//   BENCH sim_openb_default_alloc_pct <tessera mean> %
//   BENCH sim_openb_gpushare100_alloc_pct <tessera mean> %
//   BENCH sim_openb_<list>_{bestfit,random}_alloc_pct <mean> %
//   BENCH sim_openb_placement_us_per_pod <tessera> us
//
// Arrivals (--order): `published` (default) is what the authors' runs did, the
// pod list shuffled then random copies appended; `creation` samples with
// replacement and replays in creation order (src/sim/fragmentation_experiment.h).
//
// Usage: sim_fragmentation [--traces DIR] [--seeds 42-51] [--lists default,gpushare100]
//                          [--order published|creation] [--candidates N] [--out FILE.csv]
#include <algorithm>
#include <fstream>
#include <map>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include "common/csv_rows.h"
#include "sim/fragmentation_experiment.h"
#include "sim/sim_cluster.h"
#include "sim/trace.h"
#include "sim_traces_dir.h"

namespace tessera {
namespace {

// Published seed means at 130 %, by (pod list, policy): "default", "05-BestFit".
std::map<std::pair<std::string, std::string>, double> PublishedAt130(const std::string& path) {
  std::map<std::pair<std::string, std::string>, std::pair<double, int>> sums;
  std::ifstream in(path);
  size_t workload = 0, policy = 0, at130 = 0;
  (void)ForEachCsvRow(
      in,
      [&](CsvFields h) -> Status {
        auto w = FindCsvColumn(h, "workload"), p = FindCsvColumn(h, "sc_policy"), a = FindCsvColumn(h, "130");
        if (!w || !p || !a) return Status::InvalidArgument("columns");
        workload = *w;
        policy = *p;
        at130 = *a;
        return Status::Ok();
      },
      [&](int64_t, CsvFields f) -> Status {
        if (f.size() <= at130) return Status::Ok();
        auto& [sum, n] = sums[{std::string(f[workload]), std::string(f[policy])}];
        sum += std::stod(std::string(f[at130]));
        ++n;
        return Status::Ok();
      });
  std::map<std::pair<std::string, std::string>, double> out;
  for (const auto& [key, v] : sums) out[key] = v.first / v.second;
  return out;
}

struct Stats {
  double mean = 0, min = 0, max = 0;
};

Stats Of(const std::vector<double>& v) {
  Stats s{0, *std::min_element(v.begin(), v.end()), *std::max_element(v.begin(), v.end())};
  for (double x : v) s.mean += x;
  s.mean /= static_cast<double>(v.size());
  return s;
}

int Main(int argc, char** argv) {
  CLI::App app{"The FGD fragmentation protocol on the openb trace"};
  std::string traces = SharedTracesDir();
  std::string seeds = "42-51";
  std::vector<std::string> lists = {"default", "gpushare100"};
  std::string out_csv;
  int32_t candidates = SchedulerConfig{}.fragmentation_candidates;
  std::string order_name = "published";
  app.add_option("--candidates", candidates, "Nodes the core scores per pod (0: plain best fit)");
  app.add_option("--order", order_name,
                 "Arrivals: published (the authors' runs: the list shuffled, then copies) or creation "
                 "(sampled with replacement, in creation order)");
  app.add_option("--traces", traces, "The shared traces directory");
  app.add_option("--seeds", seeds, "Seeds, FIRST-LAST");
  app.add_option("--lists", lists, "Pod lists (openb_pod_list_<name>.csv)")->delimiter(',');
  app.add_option("--out", out_csv, "Write every run's curve (allocation % at 0..130 %) to this CSV");
  CLI11_PARSE(app, argc, argv);
  auto order = ParseArrivalOrder(order_name);
  if (!order) {
    fmt::print(stderr, "--order: {}\n", order.error().message());
    return 2;
  }
  if (traces.empty()) {
    fmt::print("sim_fragmentation: ../shared/traces not found; skipped (give --traces DIR)\n");
    return 0;
  }
  uint64_t first_seed = 42, last_seed = 51;
  if (std::sscanf(seeds.c_str(), "%lu-%lu", &first_seed, &last_seed) < 1) {
    fmt::print(stderr, "--seeds {}: use FIRST-LAST, like 42-51\n", seeds);
    return 2;
  }
  if (last_seed < first_seed) last_seed = first_seed;
  const std::string dir = traces + "/alibaba-openb-2023/";
  auto nodes = LoadSimNodes(dir + "openb_node_list_gpu_node.csv");
  if (!nodes) {
    fmt::print(stderr, "{}\n", nodes.error().message());
    return 1;
  }
  int64_t gpus = 0;
  for (const Node& n : *nodes) gpus += static_cast<int64_t>(n.gpus.size());
  const auto published = PublishedAt130(dir + "fgd_expected_results/analysis_allo_discrete.csv");
  fmt::print("openb: {} GPU nodes, {} GPUs; seeds {}..{}; arrivals: {}; GPUs allocated (%) at 130 % requested "
             "(mean [min, max])\n\n",
             nodes->size(), gpus, first_seed, last_seed, ArrivalOrderName(*order));
  fmt::print("{:<13} {:<9} {:>24} {:>10} {:>12}   {}\n", "POD LIST", "METHOD", "TESSERA RUN", "PUBLISHED",
             "US PER POD", "PODS PLACED/ARRIVED");
  std::ofstream curves;
  if (!out_csv.empty()) {
    curves.open(out_csv);
    curves << "pod_list,method,seed";
    for (int k = 0; k <= 130; ++k) curves << "," << k;
    curves << "\n";
  }
  std::vector<std::string> bench;
  double tessera_ns = 0, tessera_pods = 0;
  for (const std::string& list : lists) {
    auto trace = ReadTraceFile(dir + "openb_pod_list_" + list + ".csv", TraceReadOptions{.format = TraceFormat::kOpenb});
    if (!trace) {
      fmt::print(stderr, "{}\n", trace.error().message());
      return 1;
    }
    for (PlacementMethod method : {PlacementMethod::kTessera, PlacementMethod::kBestFit, PlacementMethod::kRandom}) {
      std::vector<double> at130;
      int64_t ns = 0, arrived = 0, placed = 0;
      for (uint64_t seed = first_seed; seed <= last_seed; ++seed) {
        FragmentationRun run = RunFragmentationProtocol(*nodes, trace->jobs, method, seed, 1.3, candidates, *order);
        at130.push_back(run.allocation_pct.back());
        ns += run.placement_ns;
        arrived += run.pods_arrived;
        placed += run.pods_placed;
        if (curves.is_open()) {
          curves << list << "," << PlacementMethodName(method) << "," << seed;
          for (double v : run.allocation_pct) curves << "," << fmt::format("{:.2f}", v);
          curves << "\n";
        }
      }
      const Stats s = Of(at130);
      const std::string key = "openb_pod_list_" + list;
      const char* published_policy = method == PlacementMethod::kTessera   ? "06-FGD"
                                     : method == PlacementMethod::kBestFit ? "05-BestFit"
                                                                           : "01-Random";
      auto it = published.find({key, published_policy});
      const std::string pub = it == published.end() ? "-" : fmt::format("{:.2f}", it->second);
      const double us = static_cast<double>(ns) / 1000.0 / static_cast<double>(std::max<int64_t>(arrived, 1));
      fmt::print("{:<13} {:<9} {:>24} {:>10} {:>12.2f}   {}/{}\n", list, PlacementMethodName(method),
                 fmt::format("{:.2f} [{:.2f}, {:.2f}]", s.mean, s.min, s.max),
                 pub + (method == PlacementMethod::kTessera ? " (FGD)" : ""), us, placed, arrived);
      const std::string name = method == PlacementMethod::kTessera
                                   ? fmt::format("sim_openb_{}_alloc_pct", list)
                                   : fmt::format("sim_openb_{}_{}_alloc_pct", list, PlacementMethodName(method));
      bench.push_back(fmt::format("BENCH {} {:.2f} %", name, s.mean));
      if (method == PlacementMethod::kTessera) {
        tessera_ns += static_cast<double>(ns);
        tessera_pods += static_cast<double>(arrived);
      }
    }
  }
  fmt::print("\n");
  for (const std::string& line : bench) fmt::print("{}\n", line);
  fmt::print("BENCH sim_openb_placement_us_per_pod {:.2f} us\n", tessera_ns / 1000.0 / std::max(tessera_pods, 1.0));
  return 0;
}

}  // namespace
}  // namespace tessera

int main(int argc, char** argv) { return tessera::Main(argc, argv); }
