// SimReport: a comparison of policies on one trace as a terminal table, CSV files
// and SVG plots (docs/simulator.md lists the files and their columns).
#pragma once

#include <string>
#include <vector>

#include "common/status.h"
#include "sim/sim_metrics.h"
#include "sim/simulator.h"
#include "sim/trace.h"

namespace tessera {

struct TableRows {
  std::vector<std::string> headers;
  std::vector<std::vector<std::string>> rows;
};

// One row per policy: jobs, finished, allocation, fragmentation, JCT, queueing
// delay, makespan, preemptions, lost GPU-hours, Jain's index.
TableRows PolicySummaryRows(const std::vector<PolicyMetrics>& metrics);
// One row per (policy, team).
TableRows TeamRows(const std::vector<PolicyMetrics>& metrics);

// A CSV field: quoted when it holds a separator, a quote or a line break.
std::string CsvField(const std::string& s);

// "45s", "12m", "3.4h", "2.1d".
std::string FormatSeconds(double seconds);

// Writes into `dir` (created if missing): summary.csv, teams.csv,
// jobs-<policy>.csv, timeseries-<policy>.csv, allocation.svg, queue.svg,
// jct_cdf.svg. `trace` gives the jobs' names.
Status WriteSimReport(const std::string& dir, const std::vector<TraceJob>& trace,
                      const std::vector<SimResult>& results, const std::vector<PolicyMetrics>& metrics);

}  // namespace tessera
