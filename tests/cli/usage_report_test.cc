// `tessera report usage`'s arithmetic, to the second, on hand-made usage records.
#include "cli/commands/usage_report.h"

#include <gtest/gtest.h>

#include "common/time_format.h"

namespace tessera {
namespace {

using nlohmann::json;

json Record(const std::string& ns, const std::string& flavor, const std::string& user, int64_t milli,
            const std::string& start, const std::string& end = "") {
  json spec{{"workload", "w"}, {"clusterQueue", "cq-" + ns}, {"flavor", flavor}, {"gpuMilli", milli},
            {"user", user},    {"start", start}};
  if (!end.empty()) spec["end"] = end;
  return json{{"apiVersion", "tessera.dev/v1"},
              {"kind", "UsageRecord"},
              {"metadata", {{"name", "r"}, {"namespace", ns}}},
              {"spec", spec}};
}

Timestamp T(const std::string& text) { return *ParseRfc3339(text); }

TEST(UsageReportTest, ClipsToTheWindowCountsOpenIntervalsToNowAndPricesByFlavor) {
  const std::vector<json> records = {
      // 2 GPUs 10:00-11:00: wholly inside: 2 GPU-hours on spot.
      Record("nlp", "a100-spot", "ana", 2000, "2026-11-29T10:00:00Z", "2026-11-29T11:00:00Z"),
      // 0.5 GPU 08:00-10:30: clipped to 09:00-10:30 = 1.5 h x 0.5 = 0.75 GPU-hours on-demand.
      Record("nlp", "a100-ondemand", "bob", 500, "2026-11-29T08:00:00Z", "2026-11-29T10:30:00Z"),
      // 1 GPU from 11:30, still running at now = 12:15, window ends 12:00: 0.5 GPU-hours.
      Record("vision", "a100-ondemand", "ana", 1000, "2026-11-29T11:30:00Z"),
      // Before the window: nothing.
      Record("vision", "a100-spot", "carl", 8000, "2026-11-28T00:00:00Z", "2026-11-29T08:59:59Z"),
      // 1 GPU for 90 seconds exactly, on a flavor without a price.
      Record("vision", "h100", "carl", 1000, "2026-11-29T09:00:00Z", "2026-11-29T09:01:30Z"),
  };
  const std::map<std::string, double> prices = {{"a100-spot", 1.20}, {"a100-ondemand", 3.00}};
  const Timestamp since = T("2026-11-29T09:00:00Z"), until = T("2026-11-29T12:00:00Z"), now = T("2026-11-29T12:15:00Z");

  UsageSummary team = SummarizeUsage(records, prices, since, until, now, UsageGrouping::kTeam);
  ASSERT_EQ(team.rows.size(), 2u);
  EXPECT_EQ(team.rows[0].key, "nlp");
  EXPECT_EQ(team.rows[0].gpu_milli_seconds, 2000 * 3600 + 500 * 5400);
  EXPECT_NEAR(team.rows[0].GpuHours(), 2.75, 1e-12);
  EXPECT_NEAR(team.rows[0].cost, 2 * 1.20 + 0.75 * 3.00, 1e-9);
  EXPECT_EQ(team.rows[0].records, 2);
  EXPECT_EQ(team.rows[1].key, "vision");
  EXPECT_EQ(team.rows[1].gpu_milli_seconds, 1000 * 1800 + 1000 * 90);
  EXPECT_NEAR(team.rows[1].cost, 0.5 * 3.00, 1e-9);  // the h100 seconds cost nothing: no price
  EXPECT_EQ(team.rows[1].records, 2);
  EXPECT_EQ(team.total.gpu_milli_seconds, 2000 * 3600 + 500 * 5400 + 1000 * 1800 + 1000 * 90);
  EXPECT_EQ(team.unpriced_flavors, std::vector<std::string>{"h100"});

  UsageSummary flavor = SummarizeUsage(records, prices, since, until, now, UsageGrouping::kFlavor);
  ASSERT_EQ(flavor.rows.size(), 3u);
  EXPECT_EQ(flavor.rows[0].key, "a100-ondemand");
  EXPECT_EQ(flavor.rows[0].gpu_milli_seconds, 500 * 5400 + 1000 * 1800);
  EXPECT_EQ(flavor.rows[1].key, "a100-spot");
  EXPECT_EQ(flavor.rows[2].key, "h100");
  EXPECT_EQ(flavor.rows[2].gpu_milli_seconds, 90 * 1000);

  UsageSummary user = SummarizeUsage(records, prices, since, until, now, UsageGrouping::kUser);
  ASSERT_EQ(user.rows.size(), 3u);
  EXPECT_EQ(user.rows[0].key, "ana");
  EXPECT_EQ(user.rows[0].gpu_milli_seconds, 2000 * 3600 + 1000 * 1800);

  UsageSummary queue = SummarizeUsage(records, prices, since, until, now, UsageGrouping::kQueue);
  EXPECT_EQ(queue.rows[0].key, "cq-nlp");
}

TEST(UsageReportTest, UsedGpuTimeInProportionToTheWindow) {
  // 4 GPUs 10:00-12:00, measured: 3 GPU-hours used (of 8 allocated). The window
  // 11:00-13:00 holds half of it: 1.5 GPU-hours used, 4 allocated.
  json r = Record("nlp", "a100-spot", "ana", 4000, "2026-11-29T10:00:00Z", "2026-11-29T12:00:00Z");
  r["spec"]["usedGpuMilliSeconds"] = int64_t{3} * 3600 * 1000;
  r["spec"]["usedUpdatedAt"] = "2026-11-29T12:00:00Z";
  UsageSummary s = SummarizeUsage({r}, {}, T("2026-11-29T11:00:00Z"), T("2026-11-29T13:00:00Z"),
                                  T("2026-11-29T13:00:00Z"), UsageGrouping::kTeam);
  ASSERT_EQ(s.rows.size(), 1u);
  EXPECT_NEAR(s.rows[0].GpuHours(), 4, 1e-12);
  EXPECT_NEAR(s.rows[0].UsedGpuHours(), 1.5, 1e-12);
}

TEST(UsageReportTest, GroupingNamesAndErrors) {
  EXPECT_EQ(*ParseUsageGrouping("team"), UsageGrouping::kTeam);
  EXPECT_EQ(*ParseUsageGrouping("namespace"), UsageGrouping::kTeam);
  EXPECT_EQ(*ParseUsageGrouping("user"), UsageGrouping::kUser);
  auto bad = ParseUsageGrouping("color");
  ASSERT_FALSE(bad.has_value());
  EXPECT_EQ(bad.error().message(), "--by color: use team, flavor, user or queue");
}

}  // namespace
}  // namespace tessera
