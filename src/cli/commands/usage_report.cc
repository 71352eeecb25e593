#include "cli/commands/usage_report.h"

#include <fmt/format.h>

#include <algorithm>
#include <set>

#include "api/convert.h"
#include "api/kinds.h"
#include "cli/commands/exit_codes.h"
#include "cli/commands/list_objects.h"
#include "cli/commands/resource_paths.h"
#include "cli/commands/table_printer.h"
#include "common/time_format.h"

namespace tessera {
namespace {

using nlohmann::json;

std::string SpecString(const json& record, const char* field) {
  const json& spec = record.value("spec", json::object());
  auto it = spec.find(field);
  return it != spec.end() && it->is_string() ? it->get<std::string>() : "";
}


}  // namespace

Result<UsageGrouping> ParseUsageGrouping(const std::string& by) {
  if (by == "team" || by == "namespace") return UsageGrouping::kTeam;
  if (by == "flavor") return UsageGrouping::kFlavor;
  if (by == "user") return UsageGrouping::kUser;
  if (by == "queue" || by == "clusterqueue") return UsageGrouping::kQueue;
  return Err(Status::InvalidArgument(fmt::format("--by {}: use team, flavor, user or queue", by)));
}

UsageSummary SummarizeUsage(const std::vector<json>& records, const std::map<std::string, double>& prices,
                            Timestamp since, Timestamp until, Timestamp now, UsageGrouping by) {
  std::map<std::string, UsageRow> rows;
  std::set<std::string> unpriced;
  UsageSummary out;
  for (const json& r : records) {
    auto start = ParseRfc3339(SpecString(r, "start"));
    if (!start) continue;
    const std::string end_text = SpecString(r, "end");
    auto end = end_text.empty() ? Result<Timestamp>(now) : ParseRfc3339(end_text);
    if (!end) continue;
    const int64_t from = std::max(start->ms, since.ms);
    const int64_t to = std::min(end->ms, until.ms);
    if (to <= from) continue;
    const json& spec = r["spec"];
    const int64_t milli = spec.value("gpuMilli", int64_t{0});
    const int64_t gpu_milli_seconds = milli * (to - from) / 1000;
    // The use measured so far covers [start, usedUpdatedAt]; the window gets its share.
    int64_t used = 0;
    auto measured_until = ParseRfc3339(SpecString(r, "usedUpdatedAt"));
    const int64_t span = (measured_until ? measured_until->ms : end->ms) - start->ms;
    if (span > 0) {
      const int64_t in_window = std::max<int64_t>(0, std::min(to, start->ms + span) - from);
      used = static_cast<int64_t>(static_cast<double>(spec.value("usedGpuMilliSeconds", int64_t{0})) *
                                  static_cast<double>(in_window) / static_cast<double>(span));
    }
    const std::string flavor = SpecString(r, "flavor");
    double cost = 0;
    if (auto p = prices.find(flavor); p != prices.end()) {
      cost = static_cast<double>(gpu_milli_seconds) / 3.6e6 * p->second;
    } else if (milli > 0) {
      unpriced.insert(flavor.empty() ? "<none>" : flavor);
    }
    std::string key;
    switch (by) {
      case UsageGrouping::kTeam: key = r.value("metadata", json::object()).value("namespace", ""); break;
      case UsageGrouping::kFlavor: key = flavor; break;
      case UsageGrouping::kUser: key = SpecString(r, "user"); break;
      case UsageGrouping::kQueue: key = SpecString(r, "clusterQueue"); break;
    }
    if (key.empty()) key = "<none>";
    for (UsageRow* row : {&rows[key], &out.total}) {
      row->gpu_milli_seconds += gpu_milli_seconds;
      row->used_milli_seconds += used;
      row->cost += cost;
      ++row->records;
    }
  }
  for (auto& [key, row] : rows) {
    row.key = key;
    out.rows.push_back(row);
  }
  out.total.key = "TOTAL";
  out.unpriced_flavors.assign(unpriced.begin(), unpriced.end());
  return out;
}

Result<Timestamp> ParseWhen(const std::string& text, Timestamp reference, const char* flag) {
  if (auto d = ParseDuration(text)) return Timestamp::FromMillis(reference.ms - d->ms);
  auto t = ParseDateOrRfc3339(text);
  if (t) return *t;
  return Err(Status::InvalidArgument(
      fmt::format("{} {}: give a time (2026-11-29T08:00:00Z), a date (2026-11-29) or a duration ago (24h, 7d)", flag,
                  text)));
}

Result<std::pair<Timestamp, Timestamp>> ParseWindow(const std::string& since, const std::string& until, Timestamp now) {
  ASSIGN_OR_RETURN(Timestamp end, until.empty() ? Result<Timestamp>(now) : ParseWhen(until, now, "--until"));
  ASSIGN_OR_RETURN(Timestamp begin, ParseWhen(since, end, "--since"));
  return std::pair{begin, end};
}

int RunReportUsage(const CommandContext& ctx, const ReportUsageOptions& options) {
  auto by = ParseUsageGrouping(options.by);
  if (!by) {
    *ctx.err << "error: " << by.error().message() << "\n";
    return kExitUsage;
  }
  if (options.output != "table" && options.output != "csv" && options.output != "json") {
    *ctx.err << "error: -o " << options.output << ": use table, csv or json\n";
    return kExitUsage;
  }
  const Timestamp now = SystemNow();
  auto bounds = ParseWindow(options.since, options.until, now);
  if (!bounds) {
    *ctx.err << "error: " << bounds.error().message() << "\n";
    return kExitUsage;
  }
  const Timestamp* since = &bounds->first;
  const Timestamp* until = &bounds->second;
  auto client = ctx.Client();
  const KindInfo* record_kind = FindKindByApiVersion("tessera.dev/v1", "UsageRecord");
  const KindInfo* flavor_kind = FindKindByApiVersion("kueue.x-k8s.io/v1beta1", "ResourceFlavor");
  auto records = ListObjects(*client, ctx.config, CollectionPath(*record_kind, ""), "");
  if (!records) {
    *ctx.err << records.error() << "\n";
    return kExitFailure;
  }
  auto flavors = ListObjects(*client, ctx.config, CollectionPath(*flavor_kind, ""), "");
  if (!flavors) {
    *ctx.err << flavors.error() << "\n";
    return kExitFailure;
  }
  std::map<std::string, double> prices;
  for (const json& f : flavors->items) {
    const json annotations = f.value("metadata", json::object()).value("annotations", json::object());
    auto it = annotations.find(std::string(kPricePerGpuHourAnnotation));
    if (it == annotations.end() || !it->is_string()) continue;
    char* end = nullptr;
    const std::string text = it->get<std::string>();
    const double price = std::strtod(text.c_str(), &end);
    if (end != text.c_str() && *end == '\0' && price >= 0) prices[f["metadata"].value("name", "")] = price;
  }
  const UsageSummary s = SummarizeUsage(records->items, prices, *since, *until, now, *by);
  const std::string window = fmt::format("{} to {}", FormatRfc3339(Timestamp::FromSeconds(since->seconds())),
                                         FormatRfc3339(Timestamp::FromSeconds(until->seconds())));
  const char* column = *by == UsageGrouping::kTeam     ? "TEAM"
                       : *by == UsageGrouping::kFlavor ? "FLAVOR"
                       : *by == UsageGrouping::kUser   ? "USER"
                                                       : "CLUSTERQUEUE";
  if (options.output == "json") {
    json rows = json::array();
    for (const UsageRow& r : s.rows) {
      rows.push_back({{"key", r.key}, {"gpuHours", r.GpuHours()}, {"usedGpuHours", r.UsedGpuHours()}, {"cost", r.cost},
                      {"admissions", r.records}});
    }
    *ctx.out << json{{"since", FormatRfc3339(*since)},
                     {"until", FormatRfc3339(*until)},
                     {"by", options.by},
                     {"rows", rows},
                     {"total",
                      {{"gpuHours", s.total.GpuHours()},
                       {"usedGpuHours", s.total.UsedGpuHours()},
                       {"cost", s.total.cost},
                       {"admissions", s.total.records}}},
                     {"unpricedFlavors", s.unpriced_flavors}}
                    .dump(2)
             << "\n";
    return kExitOk;
  }
  if (options.output == "csv") {
    std::string lower(column);
    std::transform(lower.begin(), lower.end(), lower.begin(), [](unsigned char c) { return std::tolower(c); });
    *ctx.out << lower << ",gpu_hours,used_gpu_hours,cost,admissions\n";
    for (const UsageRow& r : s.rows) {
      *ctx.out << fmt::format("{},{:.6f},{:.6f},{:.6f},{}\n", r.key, r.GpuHours(), r.UsedGpuHours(), r.cost, r.records);
    }
    return kExitOk;
  }
  *ctx.out << "GPU usage " << window << "\n\n";
  Table table({column, "GPU-HOURS", "USED GPU-HOURS", "USED", "COST", "ADMISSIONS"});
  auto add = [&](const UsageRow& r) {
    const std::string pct = r.gpu_milli_seconds > 0 ? fmt::format("{:.0f}%", 100.0 * static_cast<double>(r.used_milli_seconds) /
                                                                                  static_cast<double>(r.gpu_milli_seconds))
                                                    : "-";
    table.AddRow({r.key, fmt::format("{:.2f}", r.GpuHours()), fmt::format("{:.2f}", r.UsedGpuHours()), pct,
                  fmt::format("{:.2f}", r.cost), std::to_string(r.records)});
  };
  for (const UsageRow& r : s.rows) add(r);
  add(s.total);
  table.Print(*ctx.out);
  if (!s.unpriced_flavors.empty()) {
    *ctx.out << fmt::format("\nNo price for flavor(s) {}: annotate the ResourceFlavor with {}: \"2.10\" (per GPU-hour).\n",
                            fmt::join(s.unpriced_flavors, ", "), kPricePerGpuHourAnnotation);
  }
  return kExitOk;
}

}  // namespace tessera
