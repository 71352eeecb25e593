// `tessera get trials` and `tessera report sweep`: their pure parts over a
// stored Sweep document (what the sweep controller writes).
#include "cli/commands/sweep_command.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <string>

namespace tessera {
namespace {

using nlohmann::json;

json StoredSweep() {
  auto trial = [](const std::string& name, const std::string& state, const std::string& lr, json value) {
    return json{{"name", name},
                {"state", state},
                {"createdAt", "2026-12-01T00:00:00Z"},
                {"parameterAssignments", {{{"name", "lr"}, {"value", lr}}}},
                {"objectiveValue", value}};
  };
  return json{{"metadata", {{"name", "s"}}},
              {"spec",
               {{"objective", {{"type", "minimize"}, {"objectiveMetricName", "loss"}}},
                {"parameters", {{{"name", "lr"}, {"parameterType", "double"}}}}}},
              {"status",
               {{"trialList",
                 {trial("s-1", "Succeeded", "0.01", 0.5), trial("s-2", "EarlyStopped", "0.2", 0.9),
                  trial("s-3", "Succeeded", "0.05", 0.2), trial("s-4", "Running", "0.07", nullptr)}}}}};
}

TEST(SweepCommandTest, TheTrialsTableHasAColumnPerParameterAndTheObjective) {
  // Four trials of a sweep over lr minimizing loss; 60 s after their creation.
  const std::string table = TrialsTable(StoredSweep(), /*now=*/1796083260);
  EXPECT_EQ(table.rfind("TRIAL", 0), 0u) << table;
  EXPECT_NE(table.find("LR"), std::string::npos) << table;
  EXPECT_NE(table.find("LOSS"), std::string::npos) << table;
  EXPECT_NE(table.find("s-2     EarlyStopped   0.2    0.9"), std::string::npos) << table;
  EXPECT_NE(table.find("0.05"), std::string::npos) << table;
  EXPECT_NE(table.find("60s"), std::string::npos) << table;
  // A trial without a value yet shows "-".
  const size_t running = table.find("s-4");
  ASSERT_NE(running, std::string::npos);
  EXPECT_NE(table.find(" -", running), std::string::npos) << table;
}

TEST(SweepCommandTest, TheSvgHasAPointPerTrialWithAValueAndTheBestSoFarLine) {
  // Three trials have a value (0.5, 0.9, 0.2): three circles; the best-so-far
  // line has a vertex per point, falling at the third.
  const std::string svg = SweepSvg(StoredSweep());
  EXPECT_EQ(svg.rfind("<svg", 0), 0u);
  size_t circles = 0;
  for (size_t at = svg.find("<circle"); at != std::string::npos; at = svg.find("<circle", at + 1)) ++circles;
  EXPECT_EQ(circles, 3u) << svg;
  EXPECT_NE(svg.find("class=\"best\""), std::string::npos) << svg;
  EXPECT_NE(svg.find("s-3 loss=0.2"), std::string::npos) << svg;
  EXPECT_NE(svg.find("</svg>"), std::string::npos);
}

TEST(SweepCommandTest, GetTrialsIsRecognisedOnlyWithOneSweepName) {
  // `get trials s` is the trials table; `get trials` alone or with two names is not.
  EXPECT_TRUE(IsGetTrials({"trials", "s"}));
  EXPECT_FALSE(IsGetTrials({"trials"}));
  EXPECT_FALSE(IsGetTrials({"trials", "a", "b"}));
  EXPECT_FALSE(IsGetTrials({"jobs", "s"}));
}

}  // namespace
}  // namespace tessera
