#include "cli/sim_command.h"

#include <algorithm>
#include <chrono>

#include <fmt/format.h>

#include "cli/commands/table_printer.h"
#include "common/time_format.h"
#include "sim/sim_cluster.h"
#include "sim/sim_metrics.h"
#include "sim/sim_report.h"
#include "sim/simulator.h"
#include "sim/trace.h"

namespace tessera {
namespace {

// --since/--until: an offset from the first submission ("30d", "3600"), or, for a
// trace with a wall clock, a date or RFC 3339 time. Returns seconds from the
// first submission.
Result<int64_t> WindowBound(const std::string& text, int64_t origin_unix_ms, const char* flag) {
  if (auto d = ParseDuration(text)) return d->seconds();
  auto t = ParseDateOrRfc3339(text);
  if (!t) {
    return Err(Status::InvalidArgument(
        fmt::format("{} {}: not an offset (like 30d) or a date (like 2017-10-01)", flag, text)));
  }
  if (origin_unix_ms < 0) {
    return Err(Status::InvalidArgument(fmt::format(
        "{} {}: this trace format has no wall clock; give an offset from its first submission, like 30d", flag,
        text)));
  }
  return (t->ms - origin_unix_ms) / 1000;
}

void PrintTable(const TableRows& rows, std::ostream& out) {
  Table table(rows.headers);
  for (const auto& r : rows.rows) table.AddRow(r);
  table.Print(out);
}

Status Run(const SimCommandOptions& o, std::ostream& out, std::ostream& err) {
  ASSIGN_OR_RETURN(TraceFormat format, ParseTraceFormat(o.format));
  ASSIGN_OR_RETURN(Duration checkpoint, ParseDuration(o.checkpoint_interval));
  JobOrder order = JobOrder::kFifo;
  if (o.order == "sjf") {
    order = JobOrder::kSjf;
  } else if (o.order != "fifo") {
    return Status::InvalidArgument(fmt::format("--order {}: use fifo or sjf", o.order));
  }
  std::vector<SimPolicy> policies;
  for (const std::string& name : o.policies) {
    ASSIGN_OR_RETURN(SimPolicy p, BuiltinPolicy(name, order));
    if (order == JobOrder::kSjf) p.name += "-sjf";
    policies.push_back(std::move(p));
  }

  const auto read_start = std::chrono::steady_clock::now();
  ASSIGN_OR_RETURN(TraceRead trace,
                   ReadTraceFile(o.trace, TraceReadOptions{.format = format,
                                                           .strict = o.strict,
                                                           .max_gpus_per_pod = o.max_gpus_per_pod}));
  for (const std::string& w : trace.warnings) err << "warning: " << w << "\n";
  if (!o.since.empty() || !o.until.empty()) {
    int64_t since = 0, until = std::numeric_limits<int64_t>::max();
    if (!o.since.empty()) {
      ASSIGN_OR_RETURN(since, WindowBound(o.since, trace.origin_unix_ms, "--since"));
    }
    if (!o.until.empty()) {
      ASSIGN_OR_RETURN(until, WindowBound(o.until, trace.origin_unix_ms, "--until"));
    }
    std::erase_if(trace.jobs, [&](const TraceJob& j) { return j.submit_s < since || j.submit_s >= until; });
    if (!trace.jobs.empty()) {
      const int64_t first = trace.jobs.front().submit_s;
      for (TraceJob& j : trace.jobs) j.submit_s -= first;
    }
  }

  ASSIGN_OR_RETURN(std::vector<Node> nodes, LoadSimNodes(o.cluster));
  SimCluster cluster;
  if (o.policy.empty()) {
    std::vector<std::string> teams;
    for (const TraceJob& j : trace.jobs) teams.push_back(j.team);
    std::sort(teams.begin(), teams.end());
    teams.erase(std::unique(teams.begin(), teams.end()), teams.end());
    const std::string manifests = DefaultPolicyManifests(nodes, teams);
    ASSIGN_OR_RETURN(cluster, SimClusterFromManifests(std::move(nodes), manifests));
  } else {
    ASSIGN_OR_RETURN(cluster, SimClusterFromPolicyFile(std::move(nodes), o.policy));
  }
  for (const std::string& w : cluster.warnings) err << "warning: " << w << "\n";
  const double read_s =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - read_start).count();

  out << fmt::format("trace {}: {} jobs ({} rows, {} skipped); cluster: {} nodes, {} GPUs, {} ClusterQueues\n",
                     o.trace, trace.jobs.size(), trace.rows, trace.warnings.size(), cluster.base.nodes.size(),
                     cluster.TotalGpuMilli() / 1000, cluster.base.cluster_queues.size());
  const SimOptions options{.checkpoint_interval = checkpoint,
                           .runtime_limits = o.runtime_limits,
                           .drop_unschedulable = o.drop_unschedulable};
  std::vector<SimResult> results;
  std::vector<PolicyMetrics> metrics;
  for (const SimPolicy& p : policies) {
    const auto start = std::chrono::steady_clock::now();
    ASSIGN_OR_RETURN(SimResult r, Simulate(cluster, trace.jobs, p, options));
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    if (p.name == policies.front().name) {
      for (const std::string& w : r.warnings) err << "warning: " << w << "\n";
    }
    out << fmt::format("  {:<12} replayed in {:.2f} s ({} scheduling cycles)\n", p.name, seconds, r.cycles);
    metrics.push_back(ComputeMetrics(r));
    results.push_back(std::move(r));
  }
  out << fmt::format("  (trace read and set-up: {:.2f} s)\n\n", read_s);
  PrintTable(PolicySummaryRows(metrics), out);
  if (o.teams) {
    out << "\n";
    PrintTable(TeamRows(metrics), out);
  }
  if (!o.out.empty()) {
    RETURN_IF_ERROR(WriteSimReport(o.out, trace.jobs, results, metrics));
    out << fmt::format("\nwrote {}/summary.csv, teams.csv, jobs-*.csv, timeseries-*.csv, allocation.svg, queue.svg, "
                       "jct_cdf.svg\n",
                       o.out);
  }
  return Status::Ok();
}

}  // namespace

void AddSimFlags(CLI::App& c, SimCommandOptions& o) {
  c.add_option("--trace", o.trace, "The trace file")->required();
  c.add_option("--format", o.format, "philly, openb, alibaba-pai or csv (docs/simulator.md has the columns)")
      ->capture_default_str();
  c.add_option("--cluster", o.cluster,
               "Nodes: NODESxGPUSxMODEL (like 125x8xA100-80GB, groups joined by ','), a node-list .csv, or a "
               ".yaml/.json of Node manifests")
      ->required();
  c.add_option("--policy", o.policy,
               "Manifests (ResourceFlavor, ClusterQueue, LocalQueue, PriorityClass...) as the server takes them; "
               "default: one queue per team with equal GPU shares in one cohort");
  c.add_option("--policies", o.policies,
               "Policies to compare: static, borrowing, fractional, preemption, configured")
      ->delimiter(',')
      ->capture_default_str();
  c.add_option("--order", o.order, "Queue order: fifo, or sjf (shortest job first, from the trace's run times)")
      ->capture_default_str();
  c.add_option("--checkpoint-interval", o.checkpoint_interval,
               "A preempted job resumes from its last checkpoint, taken this often (0: from the start)")
      ->capture_default_str();
  c.add_flag("--runtime-limits", o.runtime_limits,
             "Give the scheduler each job's run time as its limit, so that backfill can reserve");
  c.add_flag("--drop-unschedulable", o.drop_unschedulable,
             "Drop a job the scheduler cannot place when it arrives, instead of queueing it");
  c.add_option("--since", o.since, "Only jobs submitted at or after this date (like 2017-10-01) or offset (like 30d)");
  c.add_option("--until", o.until, "Only jobs submitted before this date or offset");
  c.add_flag("--strict", o.strict, "Refuse the trace at its first malformed row instead of skipping the row");
  c.add_option("--max-gpus-per-pod", o.max_gpus_per_pod, "Larger jobs become gangs of pods of at most this many GPUs")
      ->check(CLI::Range(1, 64))
      ->capture_default_str();
  c.add_flag("--teams", o.teams, "Also print a table per team");
  c.add_option("--out", o.out, "Write CSV files and SVG plots into this directory");
}

int RunSimCommand(const SimCommandOptions& options, std::ostream& out, std::ostream& err) {
  Status s = Run(options, out, err);
  if (!s.ok()) {
    err << "error: " << s.message() << "\n";
    return 1;
  }
  return 0;
}

}  // namespace tessera
