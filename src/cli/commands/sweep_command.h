// The Sweep's own commands (issue 20), read from the Sweep's status (what the
// sweep controller writes, server/controllers/sweep_controller.h):
//
//   tessera get trials SWEEP [-n NS]
//     one row per trial: TRIAL STATUS <each parameter> <objective metric> AGE
//     (the objective value as the controller folded it; "-" when none yet).
//   tessera report sweep NAME [-n NS] [-o FILE]
//     an SVG of the objective per trial (a point per trial that has a value,
//     in creation order) and the best so far as a line (in the objective's
//     direction); to FILE, or stdout without -o.
//
// TrialsTable and SweepSvg are the pure parts, for tests.
//
// Thread-safety: plain functions (a CommandContext's streams are one command's).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "cli/commands/command_context.h"

namespace tessera {

// `get trials SWEEP`: args[0] is "trials" (or "trial") and one name follows.
bool IsGetTrials(const std::vector<std::string>& args);
int RunGetTrials(const CommandContext& ctx, const std::string& sweep);

// The table's text for a stored Sweep, AGE measured from `now` (Unix seconds).
std::string TrialsTable(const nlohmann::json& sweep, int64_t now);

struct ReportSweepOptions {
  std::string name;
  std::string output;  // a file; empty: stdout
};
int RunReportSweep(const CommandContext& ctx, const ReportSweepOptions& options);

// The SVG document for a stored Sweep.
std::string SweepSvg(const nlohmann::json& sweep);

}  // namespace tessera
