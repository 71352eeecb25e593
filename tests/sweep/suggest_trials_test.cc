// SuggestTrials with grid and random: order, no repeats, exhaustion,
// determinism for a seed, and the distributions of the draws.
#include "sweep/suggest_trials.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <set>

#include "sweep/search_space.h"
#include "sweep_testing.h"

namespace tessera::sweep {
namespace {

using testing::MakeTrial;
using testing::MustParse;

std::vector<std::string> Texts(const std::vector<Assignment>& as) {
  std::vector<std::string> out;
  for (const Assignment& a : as) out.push_back(a.ToString());
  return out;
}

// Trials (all succeeded) of the given assignments, as the controller would record them.
std::vector<TrialRecord> History(const std::vector<Assignment>& as) {
  std::vector<TrialRecord> out;
  for (size_t i = 0; i < as.size(); ++i) {
    TrialRecord t = MakeTrial("t" + std::to_string(i)).Succeeded().Build();
    t.assignment = as[i];
    out.push_back(std::move(t));
  }
  return out;
}

const char* kGrid = R"({"objective": {"type": "minimize", "objectiveMetricName": "loss"},
  "algorithm": {"algorithmName": "grid"},
  "parameters": [
    {"name": "opt", "parameterType": "categorical", "feasibleSpace": {"list": ["sgd", "adam"]}},
    {"name": "layers", "parameterType": "int", "feasibleSpace": {"min": "1", "max": "5", "step": "2"}}]})";

TEST(GridSuggest, EnumeratesInAFixedOrderWithTheLastParameterFastest) {
  // 2 optimizers x layers {1, 3, 5} = 6 points; asking for 10 gives the 6.
  SweepSpec spec = MustParse(kGrid);
  EXPECT_EQ(Texts(SuggestTrials(spec, {}, 10, 1)),
            (std::vector<std::string>{"opt=sgd, layers=1", "opt=sgd, layers=3", "opt=sgd, layers=5",
                                      "opt=adam, layers=1", "opt=adam, layers=3", "opt=adam, layers=5"}));
}

TEST(GridSuggest, NeverRepeatsAnAssignmentOfTheHistory) {
  // The first two and the fourth are tried; the next two are the third and the fifth.
  SweepSpec spec = MustParse(kGrid);
  std::vector<Assignment> all = SuggestTrials(spec, {}, 6, 1);
  std::vector<TrialRecord> history = History({all[0], all[1], all[3]});
  EXPECT_EQ(Texts(SuggestTrials(spec, history, 2, 1)),
            (std::vector<std::string>{"opt=sgd, layers=5", "opt=adam, layers=3"}));
}

TEST(GridSuggest, ReturnsNothingOnceTheGridIsExhausted) {
  SweepSpec spec = MustParse(kGrid);
  std::vector<TrialRecord> history = History(SuggestTrials(spec, {}, 6, 1));
  EXPECT_TRUE(SuggestTrials(spec, history, 3, 1).empty());
}

TEST(GridSuggest, SteppedDoublePointsPrintAsWritten) {
  // min 0.1 step 0.1: 0.1 + 2 * 0.1 is 0.30000000000000004 in binary; the grid says "0.3".
  SweepSpec spec = MustParse(R"({"objective": {"type": "minimize", "objectiveMetricName": "loss"},
    "algorithm": {"algorithmName": "grid"},
    "parameters": [{"name": "dropout", "parameterType": "double",
                    "feasibleSpace": {"min": "0.1", "max": "0.5", "step": "0.1"}}]})");
  EXPECT_EQ(Texts(SuggestTrials(spec, {}, 10, 1)),
            (std::vector<std::string>{"dropout=0.1", "dropout=0.2", "dropout=0.3", "dropout=0.4", "dropout=0.5"}));
}

TEST(GridSuggest, CountOfZeroAsksForNothing) { EXPECT_TRUE(SuggestTrials(MustParse(kGrid), {}, 0, 1).empty()); }

const char* kRandom = R"({"objective": {"type": "minimize", "objectiveMetricName": "loss"},
  "algorithm": {"algorithmName": "random"}, "maxTrialCount": 100,
  "parameters": [
    {"name": "lr", "parameterType": "double",
     "feasibleSpace": {"min": "0.0001", "max": "0.1", "distribution": "logUniform"}},
    {"name": "layers", "parameterType": "int", "feasibleSpace": {"min": "1", "max": "8"}},
    {"name": "opt", "parameterType": "categorical", "feasibleSpace": {"list": ["sgd", "adam"]}},
    {"name": "bs", "parameterType": "discrete", "feasibleSpace": {"list": ["16", "32", "64"]}}]})";

TEST(RandomSuggest, SameSeedAndHistoryGiveTheSameSuggestions) {
  SweepSpec spec = MustParse(kRandom);
  std::vector<TrialRecord> history = History(SuggestTrials(spec, {}, 3, 11));
  EXPECT_EQ(SuggestTrials(spec, history, 4, 42), SuggestTrials(spec, history, 4, 42));
  EXPECT_NE(SuggestTrials(spec, history, 4, 42), SuggestTrials(spec, history, 4, 43));
}

TEST(RandomSuggest, ALongerHistoryDrawsAnew) {
  // Successive calls of one sweep (one seed) must not hand out the same points again.
  SweepSpec spec = MustParse(kRandom);
  std::vector<Assignment> first = SuggestTrials(spec, {}, 2, 5);
  std::vector<Assignment> second = SuggestTrials(spec, History(first), 2, 5);
  EXPECT_NE(first, second);
}

TEST(RandomSuggest, RandomStateReplacesTheCallersSeed) {
  // With random_state 7 the caller's seed no longer matters.
  std::string with_state = kRandom;
  with_state.replace(with_state.find(R"({"algorithmName": "random"})"), 27,
                     R"({"algorithmName": "random", "algorithmSettings": [{"name": "random_state", "value": "7"}]})");
  SweepSpec spec = MustParse(with_state);
  EXPECT_EQ(SuggestTrials(spec, {}, 3, 1), SuggestTrials(spec, {}, 3, 2));
}

TEST(RandomSuggest, ValuesStayInTheirSpacesAndParseBack) {
  // 2,000 draws (seed 3): every value in bounds, on its list, and its text is its number.
  SweepSpec spec = MustParse(kRandom);
  for (const Assignment& a : SuggestTrials(spec, {}, 2000, 3)) {
    const ParameterValue& lr = *a.Find("lr");
    ASSERT_GE(*lr.number, 0.0001);
    ASSERT_LE(*lr.number, 0.1);
    ASSERT_EQ(ParseDouble(lr.text), lr.number);
    ASSERT_GE(*a.Find("layers")->number, 1);
    ASSERT_LE(*a.Find("layers")->number, 8);
    ASSERT_TRUE(a.Find("opt")->text == "sgd" || a.Find("opt")->text == "adam");
    ASSERT_TRUE(a.Find("bs")->text == "16" || a.Find("bs")->text == "32" || a.Find("bs")->text == "64");
  }
}

TEST(RandomSuggest, LogUniformDrawsAreUniformInLogSpace) {
  // log10(lr) is uniform on [-4, -1]: its median is -2.5 and a third of the
  // draws fall in each decade. 3,000 draws (seed 9); tolerances of ~5 sigma.
  SweepSpec spec = MustParse(kRandom);
  std::vector<double> logs;
  int decade[3] = {0, 0, 0};
  for (const Assignment& a : SuggestTrials(spec, {}, 3000, 9)) {
    double l = std::log10(*a.Find("lr")->number);
    logs.push_back(l);
    decade[std::clamp(static_cast<int>(std::floor(l + 4)), 0, 2)]++;
  }
  std::sort(logs.begin(), logs.end());
  EXPECT_NEAR(logs[logs.size() / 2], -2.5, 0.1);
  for (int d : decade) EXPECT_NEAR(d, 1000, 130);  // sigma = sqrt(3000 * 1/3 * 2/3) = 25.8
}

TEST(RandomSuggest, UniformIntDrawsCoverEveryValueEvenly) {
  // layers 1..8 over 4,000 draws (seed 4): 500 each, sigma = sqrt(4000 * 1/8 * 7/8) = 20.9.
  SweepSpec spec = MustParse(kRandom);
  std::map<std::string, int> counts;
  for (const Assignment& a : SuggestTrials(spec, {}, 4000, 4)) counts[a.Find("layers")->text]++;
  ASSERT_EQ(counts.size(), 8u);
  for (const auto& [value, n] : counts) EXPECT_NEAR(n, 500, 105) << value;
}

TEST(RandomSuggest, AFiniteSpaceIsSampledWithoutReplacementUntilExhausted) {
  // 2 x 3 = 6 points: asking for 10 gives the 6 distinct ones, then nothing.
  SweepSpec spec = MustParse(R"({"objective": {"type": "minimize", "objectiveMetricName": "loss"},
    "algorithm": {"algorithmName": "random"}, "maxTrialCount": 10,
    "parameters": [
      {"name": "opt", "parameterType": "categorical", "feasibleSpace": {"list": ["sgd", "adam"]}},
      {"name": "bs", "parameterType": "discrete", "feasibleSpace": {"list": ["16", "32", "64"]}}]})");
  std::vector<Assignment> all = SuggestTrials(spec, {}, 10, 8);
  ASSERT_EQ(all.size(), 6u);
  std::set<std::string> distinct;
  for (const Assignment& a : all) distinct.insert(a.Key());
  EXPECT_EQ(distinct.size(), 6u);
  EXPECT_TRUE(SuggestTrials(spec, History(all), 1, 8).empty());
}

TEST(SearchSpace, GridSizeSaturatesInsteadOfOverflowing) {
  // Four ints of 2^20 points each: 2^80 points, more than uint64 holds.
  SweepSpec spec = MustParse(R"({"objective": {"type": "minimize", "objectiveMetricName": "loss"},
    "algorithm": {"algorithmName": "grid"},
    "parameters": [
      {"name": "a", "parameterType": "int", "feasibleSpace": {"min": "1", "max": "1048576"}},
      {"name": "b", "parameterType": "int", "feasibleSpace": {"min": "1", "max": "1048576"}},
      {"name": "c", "parameterType": "int", "feasibleSpace": {"min": "1", "max": "1048576"}},
      {"name": "d", "parameterType": "int", "feasibleSpace": {"min": "1", "max": "1048576"}}]})");
  EXPECT_EQ(GridSize(spec.parameters), std::numeric_limits<uint64_t>::max());
  EXPECT_EQ(Texts(SuggestTrials(spec, {}, 2, 1)),
            (std::vector<std::string>{"a=1, b=1, c=1, d=1", "a=1, b=1, c=1, d=2"}));
}

}  // namespace
}  // namespace tessera::sweep
