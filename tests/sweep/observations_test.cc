// MetricSeries' rules for steps, and the JSON round trip the agent relies on.
#include "sweep/observations.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "sweep/rng.h"

namespace tessera::sweep {
namespace {

using nlohmann::json;
using ::testing::HasSubstr;

TEST(MetricSeries, AReportWithoutStepTakesTheNextStep) {
  // No step, no step, step 10, no step: steps 1, 2, 10, 11.
  MetricSeries s;
  s.Add(std::nullopt, 1.0);
  s.Add(std::nullopt, 0.9);
  s.Add(10, 0.8);
  s.Add(std::nullopt, 0.7);
  EXPECT_EQ(s.points(), (std::vector<MetricPoint>{{1, 1.0}, {2, 0.9}, {10, 0.8}, {11, 0.7}}));
}

TEST(MetricSeries, AnEarlierStepRewindsTheSeries) {
  // A trial restarted from its step-2 checkpoint reports step 3 again: the old 3 and 4 go.
  MetricSeries s;
  for (int step = 1; step <= 4; ++step) s.Add(step, 1.0 / step);
  s.Add(3, 0.6);
  EXPECT_EQ(s.points(), (std::vector<MetricPoint>{{1, 1.0}, {2, 0.5}, {3, 0.6}}));
  EXPECT_EQ(s.min(), (MetricPoint{4, 0.25}));  // the best ever reported stays
}

TEST(MetricSeries, AverageUpToAndFirstAtOrAfter) {
  // Points (1, 3), (2, 1), (4, 2): average up to 2 = (3 + 1) / 2 = 2; up to 3 the same;
  // first at or after 3 is (4, 2); nothing at or after 5.
  MetricSeries s;
  s.Add(1, 3);
  s.Add(2, 1);
  s.Add(4, 2);
  EXPECT_EQ(s.AverageUpTo(2), 2.0);
  EXPECT_EQ(s.AverageUpTo(3), 2.0);
  EXPECT_FALSE(s.AverageUpTo(0).has_value());
  EXPECT_EQ(s.FirstAtOrAfter(3), (MetricPoint{4, 2}));
  EXPECT_FALSE(s.FirstAtOrAfter(5).has_value());
}

TEST(Observations, EncodeDecodeEncodeIsTheSameDocument) {
  // Two metrics of seeded random values (seed 5), 50 points each, with the bound at 20.
  Observations o;
  Rng rng(5);
  for (const char* name : {"loss", "acc"}) {
    MetricSeries s(20);
    for (int step = 1; step <= 50; ++step) s.Add(step, rng.Uniform(-1, 1) * 1e-3);
    o.emplace(name, s);
  }
  json first = ObservationsToJson(o);
  Result<Observations> decoded = ObservationsFromJson(first, "status.observations", 20);
  ASSERT_TRUE(decoded.has_value()) << decoded.error().ToString();
  EXPECT_EQ(*decoded, o);
  EXPECT_EQ(ObservationsToJson(*decoded), first);
  EXPECT_EQ(ObservationsToJson(*ObservationsFromJson(json::parse(first.dump()), "x", 20)), first);  // through text
}

TEST(Observations, HandWrittenDocumentsWithoutMinAndMaxDeriveThem) {
  Result<Observations> o = ObservationsFromJson(json::parse(R"({"loss": {"points": [[1, 0.5], [2, 0.25]]}})"), "o");
  ASSERT_TRUE(o.has_value());
  EXPECT_EQ(o->at("loss").min(), (MetricPoint{2, 0.25}));
  EXPECT_EQ(o->at("loss").max(), (MetricPoint{1, 0.5}));
  EXPECT_EQ(o->at("loss").reported(), 2);
}

TEST(Observations, BadDocumentsAreRefusedWithTheirPath) {
  auto error = [](const char* text) {
    Result<Observations> o = ObservationsFromJson(json::parse(text), "status.observations");
    EXPECT_FALSE(o.has_value()) << text;
    return o.has_value() ? std::string() : o.error().message();
  };
  EXPECT_THAT(error(R"({"loss": {"points": [[2, 0.5], [1, 0.25]]}})"),
              HasSubstr("status.observations.loss.points[1]: steps must ascend (1 follows 2)"));
  EXPECT_THAT(error(R"({"loss": {"points": [[1, "x"]]}})"),
              HasSubstr("status.observations.loss.points[0]: must be a [step, value] pair"));
  EXPECT_THAT(error(R"({"loss": 3})"), HasSubstr("status.observations.loss: must be an object"));
}

}  // namespace
}  // namespace tessera::sweep
