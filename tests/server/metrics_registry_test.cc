// The Prometheus text exposition format as MetricsRegistry writes it.
#include "server/metrics_registry.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>

namespace tessera {
namespace {

TEST(MetricsRegistryTest, CountersWithHelpTypeAndEscapedLabels) {
  MetricsRegistry r;
  r.AddCounter("tessera_things_total", "Things done,\nby kind \\ path");
  r.Increment("tessera_things_total", {{"kind", "a\"b\\c\nd"}});
  r.Increment("tessera_things_total", {{"kind", "a\"b\\c\nd"}}, 2);
  r.Increment("tessera_things_total", {{"kind", "plain"}});
  EXPECT_EQ(r.Render({}),
            "# HELP tessera_things_total Things done,\\nby kind \\\\ path\n"
            "# TYPE tessera_things_total counter\n"
            "tessera_things_total{kind=\"a\\\"b\\\\c\\nd\"} 3\n"
            "tessera_things_total{kind=\"plain\"} 1\n");
}

TEST(MetricsRegistryTest, HistogramBucketsAreCumulativeWithInfSumAndCount) {
  MetricsRegistry r;
  r.AddHistogram("tessera_wait_seconds", "Waits", {1, 5, 0.5});  // sorted on registration
  for (double v : {0.2, 0.5, 3.0, 9.0}) r.Observe("tessera_wait_seconds", {{"q", "x"}}, v);
  EXPECT_EQ(r.Render({}),
            "# HELP tessera_wait_seconds Waits\n"
            "# TYPE tessera_wait_seconds histogram\n"
            "tessera_wait_seconds_bucket{q=\"x\",le=\"0.5\"} 2\n"  // le is inclusive: 0.5 counts
            "tessera_wait_seconds_bucket{q=\"x\",le=\"1\"} 2\n"
            "tessera_wait_seconds_bucket{q=\"x\",le=\"5\"} 3\n"
            "tessera_wait_seconds_bucket{q=\"x\",le=\"+Inf\"} 4\n"
            "tessera_wait_seconds_sum{q=\"x\"} 12.7\n"
            "tessera_wait_seconds_count{q=\"x\"} 4\n");
}

TEST(MetricsRegistryTest, GaugesSortedByNameAndLabelsAfterTheRegistry) {
  MetricsRegistry r;
  r.AddCounter("tessera_a_total", "A");
  std::vector<GaugeFamily> gauges = {
      {"tessera_z_gpus", "Z", {{{{"node", "n2"}}, 0.25}, {{{"node", "n1"}}, 8}}},
      {"tessera_b_ratio", "B", {}},
  };
  EXPECT_EQ(r.Render(gauges),
            "# HELP tessera_a_total A\n# TYPE tessera_a_total counter\n"
            "# HELP tessera_b_ratio B\n# TYPE tessera_b_ratio gauge\n"
            "# HELP tessera_z_gpus Z\n# TYPE tessera_z_gpus gauge\n"
            "tessera_z_gpus{node=\"n1\"} 8\n"
            "tessera_z_gpus{node=\"n2\"} 0.25\n");
}

TEST(MetricsRegistryTest, ValuesAsPrometheusReadsThem) {
  EXPECT_EQ(FormatMetricValue(3), "3");
  EXPECT_EQ(FormatMetricValue(-2), "-2");
  EXPECT_EQ(FormatMetricValue(0.125), "0.125");
  EXPECT_EQ(FormatMetricValue(std::numeric_limits<double>::infinity()), "+Inf");
  EXPECT_EQ(FormatMetricValue(-std::numeric_limits<double>::infinity()), "-Inf");
  EXPECT_EQ(FormatMetricValue(std::nan("")), "NaN");
  EXPECT_EQ(EscapeLabelValue("plain"), "plain");
}

}  // namespace
}  // namespace tessera
