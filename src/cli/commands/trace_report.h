// `tessera report trace`: the platform's own history over a window as a trace in
// the simulator's csv format (sim/history_trace.h has what each job is made
// of), so that `tessera sim --format csv` replays it with any cluster and
// policy: the CLI's side of the portal's What-if (SimulationReview).
#pragma once

#include <string>

#include "cli/commands/command_context.h"
#include "sim/history_trace.h"

namespace tessera {

// The header and one row per job: name,submit_time,duration,gpus,pods,team,
// queue,user,priority_class,cpu,memory (gpus per pod as a decimal, cpu in
// millicores as "500m", memory in bytes).
std::string TraceCsv(const HistoryTrace& trace);

struct ReportTraceOptions {
  std::string since = "7d";  // as tessera report usage takes it
  std::string until;         // empty: now
  std::string out;           // empty: standard output
};

int RunReportTrace(const CommandContext& ctx, const ReportTraceOptions& options);

}  // namespace tessera
