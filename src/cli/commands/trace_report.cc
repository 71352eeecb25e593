#include "cli/commands/trace_report.h"

#include <fmt/format.h>

#include <fstream>

#include "api/kinds.h"
#include "cli/commands/exit_codes.h"
#include "cli/commands/list_objects.h"
#include "cli/commands/resource_paths.h"
#include "cli/commands/usage_report.h"
#include "common/time_format.h"

namespace tessera {
namespace {

using nlohmann::json;

// A field as CSV writes it: quoted when it holds a comma, a quote or a line break.
std::string Field(const std::string& text) {
  if (text.find_first_of(",\"\n\r") == std::string::npos) return text;
  std::string out = "\"";
  for (char c : text) {
    if (c == '"') out += '"';
    out += c;
  }
  return out + "\"";
}

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
    out += fmt::format("{},{},{},{},{},{},{},{},{},{},{}\n", Field(j.name), j.submit_s, j.duration_s,
                       GpusText(j.gpu_milli), j.pods, Field(j.team), Field(j.queue), Field(j.user),
                       Field(j.priority_class), j.cpu_milli > 0 ? fmt::format("{}m", j.cpu_milli) : "",
                       j.memory_bytes > 0 ? std::to_string(j.memory_bytes) : "");
  }
  return out;
}

int RunReportTrace(const CommandContext& ctx, const ReportTraceOptions& options) {
  const Timestamp now = SystemNow();
  auto until = options.until.empty() ? Result<Timestamp>(now) : ParseWhen(options.until, now, "--until");
  if (!until) {
    *ctx.err << "error: " << until.error().message() << "\n";
    return kExitUsage;
  }
  auto since = ParseWhen(options.since, *until, "--since");
  if (!since) {
    *ctx.err << "error: " << since.error().message() << "\n";
    return kExitUsage;
  }
  if (*since >= *until) {
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
  const HistoryTrace trace = TraceFromHistory(records->items, workloads->items, *since, std::min(*until, now), now);
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
  *ctx.err << fmt::format("{} jobs submitted from {} to {}; time 0 is {}", trace.jobs.size(), FormatRfc3339(*since),
                          FormatRfc3339(std::min(*until, now)), FormatRfc3339(trace.origin));
  if (trace.never_ran > 0) *ctx.err << fmt::format("; {} never ran and are left out (run time unknown)", trace.never_ran);
  if (trace.still_running > 0) *ctx.err << fmt::format("; {} still run (run time so far)", trace.still_running);
  *ctx.err << "\n";
  return kExitOk;
}

}  // namespace tessera
