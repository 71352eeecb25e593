// `tessera report usage`: GPU-hours and cost from the usage records the server
// keeps (server/usage_recorder.h), over a window, grouped by team (namespace),
// flavor, user or ClusterQueue. An interval still open counts up to `now`; each
// one is clipped to [since, until). GPU-hours used are each record's
// usedGpuMilliSeconds, in proportion to the part of it inside the window. Cost is
// GPU-hours (allocated) x the flavor's price per
// GPU-hour (the ResourceFlavor annotation tessera.dev/price-per-gpu-hour; a flavor
// without one costs 0, and the report says which have none).
#pragma once

#include <nlohmann/json.hpp>

#include <map>
#include <string>
#include <utility>
#include <vector>

#include "cli/commands/command_context.h"
#include "common/result.h"
#include "common/time.h"

namespace tessera {

enum class UsageGrouping { kTeam, kFlavor, kUser, kQueue };
Result<UsageGrouping> ParseUsageGrouping(const std::string& by);

struct UsageRow {
  std::string key;
  int64_t gpu_milli_seconds = 0;  // allocated, exact: milli-GPU x seconds (ms precision, rounded down)
  int64_t used_milli_seconds = 0; // used (allocation x utilisation, sampled), the window's share of each record's
  double cost = 0;
  int64_t records = 0;            // admissions that overlap the window
  double GpuHours() const { return static_cast<double>(gpu_milli_seconds) / 3.6e6; }
  double UsedGpuHours() const { return static_cast<double>(used_milli_seconds) / 3.6e6; }
};

struct UsageSummary {
  std::vector<UsageRow> rows;  // by key
  UsageRow total;
  std::vector<std::string> unpriced_flavors;  // used in the window, without a price
};

// `records`: UsageRecord objects; `prices`: flavor -> price per GPU-hour.
UsageSummary SummarizeUsage(const std::vector<nlohmann::json>& records, const std::map<std::string, double>& prices,
                            Timestamp since, Timestamp until, Timestamp now, UsageGrouping by);

// --since/--until: a date ("2026-11-29"), an RFC 3339 time, or a duration before
// `reference`; an error naming `flag` otherwise.
Result<Timestamp> ParseWhen(const std::string& text, Timestamp reference, const char* flag);
// --since and --until together: until (empty: `now`), then since before it.
Result<std::pair<Timestamp, Timestamp>> ParseWindow(const std::string& since, const std::string& until, Timestamp now);

struct ReportUsageOptions {
  std::string since = "24h";  // a duration before --until, a date, or an RFC 3339 time
  std::string until;          // empty: now
  std::string by = "team";
  std::string output = "table";  // table, csv, json
};

int RunReportUsage(const CommandContext& ctx, const ReportUsageOptions& options);

}  // namespace tessera
