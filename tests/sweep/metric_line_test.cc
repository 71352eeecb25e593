// Metric lines and the collector that folds a trial's output into observations.
#include "sweep/metric_line.h"

#include <gtest/gtest.h>

#include <string>

#include "sweep/metric_collector.h"

namespace tessera::sweep {
namespace {

TEST(ParseMetricLine, ReadsOneMetric) {
  std::optional<MetricObservation> m = ParseMetricLine("tessera-metric loss=0.25");
  ASSERT_TRUE(m.has_value());
  EXPECT_FALSE(m->step.has_value());
  ASSERT_EQ(m->values.size(), 1u);
  EXPECT_EQ(m->values[0].first, "loss");
  EXPECT_EQ(m->values[0].second, 0.25);
}

TEST(ParseMetricLine, ReadsSeveralMetricsAndAStepAnywhereOnTheLine) {
  // As Python's print writes it, with a '\r' from a Windows-style stream.
  std::optional<MetricObservation> m = ParseMetricLine("  tessera-metric loss=0.25 step=3\tacc=9.1e-1\r\n");
  ASSERT_TRUE(m.has_value());
  EXPECT_EQ(m->step, 3);
  EXPECT_EQ(m->values, (std::vector<std::pair<std::string, double>>{{"loss", 0.25}, {"acc", 0.91}}));
}

TEST(ParseMetricLine, AnythingElseIsNotAMetricLine) {
  for (const char* line : {
           "",
           "loss=0.25",
           "tessera-metric",
           "tessera-metric ",
           "tessera-metricloss=1",
           "tessera-metrics loss=1",
           "INFO tessera-metric loss=1",  // not at the start
           "tessera-metric loss",         // no value
           "tessera-metric loss=",        // empty value
           "tessera-metric loss=nan",     // not finite
           "tessera-metric loss=inf",
           "tessera-metric loss=1e999",
           "tessera-metric loss=0x1",
           "tessera-metric loss=1 loss=2",    // a metric twice
           "tessera-metric step=3",           // no metric
           "tessera-metric loss=1 step=-1",   // negative step
           "tessera-metric loss=1 step=1.5",  // fractional step
           "tessera-metric loss=1 step=1 step=2",
           "tessera-metric 1oss=1",  // not a metric name
           "tessera-metric loss=1 and more",
       }) {
    EXPECT_FALSE(ParseMetricLine(line).has_value()) << line;
  }
}

TEST(MetricCollector, FoldsLinesSplitAcrossChunksAndIgnoresOtherOutput) {
  // "tessera-metric loss=0.5 step=1" arrives in three pieces around ordinary log lines.
  MetricCollector c;
  c.Feed("epoch 1\ntessera-met");
  c.Feed("ric loss=0.5 st");
  c.Feed("ep=1\nwarning: slow\ntessera-metric loss=0.4 step=2\n");
  EXPECT_EQ(c.lines_taken(), 2);
  const MetricSeries& loss = c.observations().at("loss");
  EXPECT_EQ(loss.points(), (std::vector<MetricPoint>{{1, 0.5}, {2, 0.4}}));
}

TEST(MetricCollector, FinishTakesTheLastLineWithoutNewline) {
  MetricCollector c;
  c.Feed("tessera-metric acc=0.9");
  EXPECT_EQ(c.lines_taken(), 0);
  c.Finish();
  EXPECT_EQ(c.lines_taken(), 1);
  EXPECT_EQ(c.observations().at("acc").latest()->value, 0.9);
}

TEST(MetricCollector, DropsAnOverlongLineWhole) {
  // A line of 5,000 bytes ending in a metric is not read; the next line is.
  MetricCollector c;
  c.Feed("tessera-metric loss=1 " + std::string(5000, 'x'));
  c.Feed(" loss2=3\ntessera-metric loss=2\n");
  EXPECT_EQ(c.lines_taken(), 1);
  EXPECT_EQ(c.observations().at("loss").latest()->value, 2.0);
}

TEST(MetricCollector, KeepsTheLatestPointsAndAlwaysTheBest) {
  // 5 points kept of 12 reported (steps 1..12, values 12 - step except step 2's 0.1):
  // the points are steps 8..12, the minimum stays step 2's 0.1.
  MetricCollector c(5);
  for (int step = 1; step <= 12; ++step) {
    double value = step == 2 ? 0.1 : 12 - step + 0.5;
    ASSERT_TRUE(c.AddLine("tessera-metric loss=" + std::to_string(value) + " step=" + std::to_string(step)));
  }
  const MetricSeries& loss = c.observations().at("loss");
  ASSERT_EQ(loss.points().size(), 5u);
  EXPECT_EQ(loss.points().front().step, 8);
  EXPECT_EQ(loss.min(), (MetricPoint{2, 0.1}));
  EXPECT_EQ(loss.max(), (MetricPoint{1, 11.5}));
  EXPECT_EQ(loss.reported(), 12);
}

}  // namespace
}  // namespace tessera::sweep
