#include "cli/commands/trace_report.h"

#include <fmt/format.h>

#include <fstream>

#include "api/kinds.h"
#include "cli/commands/exit_codes.h"
#include "cli/commands/list_objects.h"
#include "cli/commands/resource_paths.h"
#include "cli/commands/usage_report.h"
#include "common/time_format.h"
#include "sim/sim_report.h"

namespace tessera {
namespace {

using nlohmann::json;

std::string GpusText(int64_t milli) {
  if (milli % 1000 == 0) return std::to_string(milli / 1000);
  std::string text = fmt::format("{}.{:03d}", milli / 1000, milli % 1000);
  while (text.back() == '0') text.pop_back();
  return text;
}

}  // namespace

std::string TraceCsv(const HistoryTrace& trace) {
  std::string out = "name,submit_time,duration,gpus,pods,team,queue,user,priority_class,cpu,memory\n";
  for (const TraceJob& j : trace.jobs) {
    out += fmt::format("{},{},{},{},{},{},{},{},{},{},{}\n", CsvField(j.name), j.submit_s, j.duration_s,
                       GpusText(j.gpu_milli), j.pods, CsvField(j.team), CsvField(j.queue), CsvField(j.user),
                       CsvField(j.priority_class), j.cpu_milli > 0 ? fmt::format("{}m", j.cpu_milli) : "",
                       j.memory_bytes > 0 ? std::to_string(j.memory_bytes) : "");
  }
  return out;
}

int RunReportTrace(const CommandContext& ctx, const ReportTraceOptions& options) {
  const Timestamp now = SystemNow();
  auto window = ParseWindow(options.since, options.until, now);
  if (!window) {
    *ctx.err << "error: " << window.error().message() << "\n";
    return kExitUsage;
  }
  const auto [since, until] = *window;
  if (since >= until) {
    *ctx.err << "error: --since must be before --until\n";
    return kExitUsage;
  }
  auto client = ctx.Client();
  auto list = [&](const char* api_version, const char* kind) {
    return ListObjects(*client, ctx.config, CollectionPath(*FindKindByApiVersion(api_version, kind), ""), "");
  };
  auto records = list("tessera.dev/v1", "UsageRecord");
  if (!records) {
    *ctx.err << records.error() << "\n";
    return kExitFailure;
  }
  auto workloads = list("kueue.x-k8s.io/v1beta1", "Workload");
  if (!workloads) {
    *ctx.err << workloads.error() << "\n";
    return kExitFailure;
  }
  const HistoryTrace trace = TraceFromHistory(records->items, workloads->items, since, std::min(until, now), now);
  const std::string csv = TraceCsv(trace);
  if (options.out.empty()) {
    *ctx.out << csv;
  } else {
    std::ofstream file(options.out, std::ios::binary | std::ios::trunc);
    file << csv;
    if (!file.flush()) {
      *ctx.err << "error: cannot write " << options.out << "\n";
      return kExitFailure;
    }
  }
  *ctx.err << fmt::format("{} jobs submitted from {} to {}; time 0 is {}", trace.jobs.size(), FormatRfc3339(since),
                          FormatRfc3339(std::min(until, now)), FormatRfc3339(trace.origin));
  if (trace.never_ran > 0) *ctx.err << fmt::format("; {} never ran and are left out (run time unknown)", trace.never_ran);
  if (trace.still_running > 0) *ctx.err << fmt::format("; {} still run (run time so far)", trace.still_running);
  *ctx.err << "\n";
  return kExitOk;
}

}  // namespace tessera
