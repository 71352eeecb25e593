#include "sim/sim_report.h"

#include <algorithm>
#include <filesystem>
#include <fstream>

#include <fmt/format.h>

#include "sim/svg_chart.h"

namespace tessera {
namespace {

std::string Pct(double v) { return fmt::format("{:.1f}%", v); }
std::string GpuHours(double v) { return v >= 100 ? fmt::format("{:.0f}", v) : fmt::format("{:.1f}", v); }

class CsvFile {
 public:
  CsvFile(const std::filesystem::path& path, const std::vector<std::string>& header) : path_(path), out_(path) {
    Row(header);
  }
  void Row(const std::vector<std::string>& cells) {
    for (size_t i = 0; i < cells.size(); ++i) out_ << (i ? "," : "") << CsvField(cells[i]);
    out_ << '\n';
  }
  Status Close() {
    out_.close();
    if (!out_) return Status::IoError(fmt::format("cannot write {}", path_.string()));
    return Status::Ok();
  }

 private:
  std::filesystem::path path_;
  std::ofstream out_;
};

std::string Num(double v) { return fmt::format("{:.6g}", v); }
std::string Num(int64_t v) { return std::to_string(v); }

Status WriteText(const std::filesystem::path& path, const std::string& text) {
  std::ofstream out(path, std::ios::binary);
  out << text;
  out.close();
  if (!out) return Status::IoError(fmt::format("cannot write {}", path.string()));
  return Status::Ok();
}

}  // namespace

std::string CsvField(const std::string& s) {
  if (s.find_first_of(",\"\n\r") == std::string::npos) return s;
  std::string out = "\"";
  for (char c : s) {
    if (c == '"') out += '"';
    out += c;
  }
  return out + "\"";
}

std::string FormatSeconds(double seconds) {
  if (seconds < 60) return fmt::format("{:.0f}s", seconds);
  if (seconds < 3600) return fmt::format("{:.0f}m", seconds / 60);
  if (seconds < 86400 * 2) return fmt::format("{:.1f}h", seconds / 3600);
  return fmt::format("{:.1f}d", seconds / 86400);
}

TableRows PolicySummaryRows(const std::vector<PolicyMetrics>& metrics) {
  TableRows t{{"POLICY", "JOBS", "FINISHED", "ALLOCATED", "FRAGMENTED", "AVG JCT", "P99 JCT", "AVG WAIT",
               "P99 WAIT", "MAKESPAN", "PREEMPTIONS", "LOST GPU-H", "JAIN"},
              {}};
  for (const PolicyMetrics& m : metrics) {
    t.rows.push_back({m.policy, std::to_string(m.jobs), std::to_string(m.finished), Pct(m.allocation_pct),
                      Pct(m.fragmentation_pct), FormatSeconds(m.jct_s.mean), FormatSeconds(static_cast<double>(m.jct_s.p99)),
                      FormatSeconds(m.queue_s.mean), FormatSeconds(static_cast<double>(m.queue_s.p99)),
                      FormatSeconds(static_cast<double>(m.makespan_s)), std::to_string(m.preemptions),
                      GpuHours(m.gpu_hours_lost), fmt::format("{:.3f}", m.jain_index)});
  }
  return t;
}

TableRows TeamRows(const std::vector<PolicyMetrics>& metrics) {
  TableRows t{{"POLICY", "TEAM", "QUOTA", "JOBS", "FINISHED", "AVG JCT", "AVG WAIT", "GPU-H USED", "SHARE",
               "FAIR SHARE", "PREEMPTIONS"},
              {}};
  for (const PolicyMetrics& m : metrics) {
    for (const TeamMetrics& team : m.teams) {
      t.rows.push_back({m.policy, team.team, fmt::format("{:g}", team.nominal_gpus), std::to_string(team.jobs),
                        std::to_string(team.finished), FormatSeconds(team.jct_s.mean), FormatSeconds(team.queue_s.mean),
                        GpuHours(team.gpu_hours_received), Pct(100 * team.share_received),
                        Pct(100 * team.share_deserved), std::to_string(team.preemptions)});
    }
  }
  return t;
}

Status WriteSimReport(const std::string& dir, const std::vector<TraceJob>& trace,
                      const std::vector<SimResult>& results, const std::vector<PolicyMetrics>& metrics) {
  namespace fs = std::filesystem;
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec) return Status::IoError(fmt::format("cannot create {}: {}", dir, ec.message()));
  const fs::path root(dir);

  CsvFile summary(root / "summary.csv",
                  {"policy", "jobs", "finished", "unfinished", "dropped", "left_out", "allocation_pct",
                   "fragmentation_pct", "jct_mean_s", "jct_p50_s", "jct_p90_s", "jct_p99_s", "queue_mean_s",
                   "queue_p50_s", "queue_p90_s", "queue_p99_s", "makespan_s", "preemptions", "gpu_hours_lost",
                   "jain_index", "cycles"});
  CsvFile teams(root / "teams.csv",
                {"policy", "team", "nominal_gpus", "jobs", "finished", "jct_mean_s", "jct_p99_s", "queue_mean_s",
                 "queue_p99_s", "preemptions", "gpu_hours_demand", "gpu_hours_received", "gpu_hours_lost",
                 "share_received", "share_deserved"});
  for (const PolicyMetrics& m : metrics) {
    summary.Row({m.policy, Num(m.jobs), Num(m.finished), Num(m.unfinished), Num(m.dropped), Num(m.left_out),
                 Num(m.allocation_pct), Num(m.fragmentation_pct), Num(m.jct_s.mean), Num(m.jct_s.p50),
                 Num(m.jct_s.p90), Num(m.jct_s.p99), Num(m.queue_s.mean), Num(m.queue_s.p50), Num(m.queue_s.p90),
                 Num(m.queue_s.p99), Num(m.makespan_s), Num(m.preemptions), Num(m.gpu_hours_lost),
                 Num(m.jain_index), Num(m.cycles)});
    for (const TeamMetrics& t : m.teams) {
      teams.Row({m.policy, t.team, Num(t.nominal_gpus), Num(t.jobs), Num(t.finished), Num(t.jct_s.mean),
                 Num(t.jct_s.p99), Num(t.queue_s.mean), Num(t.queue_s.p99), Num(int64_t{t.preemptions}),
                 Num(t.gpu_hours_demand), Num(t.gpu_hours_received), Num(t.gpu_hours_lost), Num(t.share_received),
                 Num(t.share_deserved)});
    }
  }
  RETURN_IF_ERROR(summary.Close());
  RETURN_IF_ERROR(teams.Close());

  Chart allocation{.title = "GPU allocation over time",
                   .x_label = "time (hours from the first submission)",
                   .y_label = "GPUs allocated (%)",
                   .step = true,
                   .y_min = 0,
                   .y_max = 100};
  Chart queue{.title = "Pending jobs over time", .x_label = "time (hours)", .y_label = "pending jobs", .step = true};
  Chart cdf{.title = "Job completion time (CDF)",
            .x_label = "JCT (seconds, log scale)",
            .y_label = "jobs finished within (%)",
            .log_x = true,
            .y_min = 0,
            .y_max = 100};
  for (const SimResult& r : results) {
    CsvFile jobs(root / fmt::format("jobs-{}.csv", r.policy),
                 {"name", "team", "submit_s", "first_start_s", "end_s", "gpu_milli", "duration_s", "preemptions",
                  "lost_gpu_hours", "dropped"});
    std::vector<int64_t> jct;
    for (const JobRecord& j : r.jobs) {
      jobs.Row({trace[j.trace_index].name, r.teams[j.team], Num(j.submit_s), Num(j.first_start_s), Num(j.end_s),
                Num(j.gpu_milli), Num(j.duration_s), Num(int64_t{j.preemptions}),
                Num(static_cast<double>(j.lost_gpu_milli_s) / 3.6e6), j.dropped ? "true" : "false"});
      if (j.end_s >= 0 && !j.dropped) jct.push_back(j.end_s - j.submit_s);
    }
    RETURN_IF_ERROR(jobs.Close());
    CsvFile series(root / fmt::format("timeseries-{}.csv", r.policy),
                   {"t_s", "allocated_gpus", "allocated_pct", "stranded_gpus", "running", "pending"});
    ChartSeries alloc_series{.name = r.policy}, queue_series{.name = r.policy}, cdf_series{.name = r.policy};
    for (const SimSample& s : r.samples) {
      const double pct = r.total_gpu_milli > 0 ? 100.0 * static_cast<double>(s.allocated_gpu_milli) /
                                                     static_cast<double>(r.total_gpu_milli)
                                               : 0;
      series.Row({Num(s.t_s), Num(static_cast<double>(s.allocated_gpu_milli) / 1000), Num(pct),
                  Num(static_cast<double>(s.stranded_gpu_milli) / 1000), Num(int64_t{s.running}),
                  Num(int64_t{s.pending})});
      const double hours = static_cast<double>(s.t_s) / 3600;
      alloc_series.points.push_back({hours, pct});
      queue_series.points.push_back({hours, static_cast<double>(s.pending)});
    }
    RETURN_IF_ERROR(series.Close());
    std::sort(jct.begin(), jct.end());
    for (size_t i = 0; i < jct.size(); ++i) {
      if (i + 1 < jct.size() && jct[i + 1] == jct[i]) continue;  // one point per distinct value
      cdf_series.points.push_back(
          {static_cast<double>(std::max<int64_t>(jct[i], 1)), 100.0 * static_cast<double>(i + 1) / static_cast<double>(jct.size())});
    }
    allocation.series.push_back(std::move(alloc_series));
    queue.series.push_back(std::move(queue_series));
    cdf.series.push_back(std::move(cdf_series));
  }
  RETURN_IF_ERROR(WriteText(root / "allocation.svg", RenderSvgChart(allocation)));
  RETURN_IF_ERROR(WriteText(root / "queue.svg", RenderSvgChart(queue)));
  RETURN_IF_ERROR(WriteText(root / "jct_cdf.svg", RenderSvgChart(cdf)));
  return Status::Ok();
}

}  // namespace tessera
