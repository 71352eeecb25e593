// TPE: its Parzen estimators, its start-up phase, and that it finds better
// optima than random search on a synthetic objective.
#include "sweep/tpe.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <set>
#include <string>

#include "sweep/parzen_estimator.h"
#include "sweep/suggest_trials.h"
#include "sweep_testing.h"

namespace tessera::sweep {
namespace {

using testing::MakeTrial;
using testing::MustParse;

TEST(ParzenEstimator, DensityIntegratesToOneOverItsBounds) {
  // Three points and the prior on [0, 10]; trapezoids of width 0.001.
  ParzenEstimator p({1.0, 1.5, 8.0}, 0, 10, 1.0);
  EXPECT_EQ(p.components(), 4u);  // 3 points + the prior
  double integral = 0;
  const int n = 10000;
  for (int i = 0; i < n; ++i) {
    double a = 10.0 * i / n;
    double b = 10.0 * (i + 1) / n;
    integral += 0.5 * (std::exp(p.LogDensity(a)) + std::exp(p.LogDensity(b))) * (b - a);
  }
  EXPECT_NEAR(integral, 1.0, 1e-3);
  EXPECT_NEAR(p.LogMass(0, 10), 0.0, 1e-9);  // log 1
}

TEST(ParzenEstimator, SamplesStayInBoundsAndFollowTheMixture) {
  // Points 0.8, 1.0, 1.2, 1.5 and the prior (5, sigma 10) on [0, 10], weights 1/5 each.
  // Sigmas: the larger gap to a neighbour, at least 10 / (1 + 4) = 2: 2, 2, 2, and 3.5
  // for 1.5 (the prior's centre is 3.5 away). P(x <= 3) per truncated component:
  // 0.79, 0.77, 0.75, 0.50, prior 0.29; mixture 0.2 * 3.10 = 0.62, so ~1241 of 2,000
  // draws (seed 2), sigma sqrt(2000 * 0.62 * 0.38) = 22.
  ParzenEstimator p({1.0, 1.5, 1.2, 0.8}, 0, 10, 1.0);
  Rng rng(2);
  int near = 0;
  for (int i = 0; i < 2000; ++i) {
    double x = p.Sample(rng);
    ASSERT_GE(x, 0);
    ASSERT_LE(x, 10);
    near += x <= 3 ? 1 : 0;
  }
  EXPECT_NEAR(near, 1241, 110);
  EXPECT_GT(p.LogDensity(1.2), p.LogDensity(7.0));
}

TEST(CategoricalEstimator, IsSmoothedFrequencies) {
  // Observations {0, 0, 2} of 3 categories, prior weight 1:
  // p0 = (2 + 1) / (3 + 3) = 0.5, p1 = (0 + 1) / 6, p2 = (1 + 1) / 6.
  CategoricalEstimator c(3, {0, 0, 2}, 1.0);
  EXPECT_NEAR(std::exp(c.LogProbability(0)), 0.5, 1e-12);
  EXPECT_NEAR(std::exp(c.LogProbability(1)), 1.0 / 6, 1e-12);
  EXPECT_NEAR(std::exp(c.LogProbability(2)), 2.0 / 6, 1e-12);
}

std::string SweepJson(const std::string& algorithm) {
  return R"({"objective": {"type": "minimize", "objectiveMetricName": "loss"},
    "algorithm": {"algorithmName": ")" +
         algorithm + R"("}, "maxTrialCount": 30,
    "parameters": [
      {"name": "lr", "parameterType": "double",
       "feasibleSpace": {"min": "0.0001", "max": "0.1", "distribution": "logUniform"}},
      {"name": "layers", "parameterType": "int", "feasibleSpace": {"min": "1", "max": "8"}}]})";
}

// A bowl in log10(lr) and layers, lowest (0) at lr = 10^-2.5, layers = 5.
double Objective(const Assignment& a) {
  double l = std::log10(*a.Find("lr")->number) + 2.5;
  double d = *a.Find("layers")->number - 5;
  return l * l + 0.1 * d * d;
}

// The best objective of a sequential sweep of `trials` trials.
double BestOfSweep(const SweepSpec& spec, uint64_t seed, int trials) {
  std::vector<TrialRecord> history;
  double best = INFINITY;
  for (int i = 0; i < trials; ++i) {
    std::vector<Assignment> next = SuggestTrials(spec, history, 1, seed);
    EXPECT_EQ(next.size(), 1u);
    double f = Objective(next[0]);
    best = std::min(best, f);
    TrialRecord t = MakeTrial("t" + std::to_string(i)).Succeeded().Report("loss", 1, f).Build();
    t.assignment = next[0];
    history.push_back(std::move(t));
  }
  return best;
}

double Median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.size() % 2 == 1 ? v[v.size() / 2] : 0.5 * (v[v.size() / 2 - 1] + v[v.size() / 2]);
}

TEST(TpeSuggest, IsRandomUntilStartupTrialsHaveValues) {
  // With 4 trials of 5 needed, TPE draws exactly what random draws for the same seed and history.
  SweepSpec tpe = MustParse(SweepJson("tpe"));
  SweepSpec random = MustParse(SweepJson("random"));
  std::vector<TrialRecord> history;
  for (const Assignment& a : SuggestTrials(random, {}, 4, 1)) {
    TrialRecord t = MakeTrial("t").Succeeded().Report("loss", 1, Objective(a)).Build();
    t.assignment = a;
    history.push_back(std::move(t));
  }
  EXPECT_FALSE(TpeSampler(tpe, history).ready());
  EXPECT_EQ(SuggestTrials(tpe, history, 3, 9), SuggestTrials(random, history, 3, 9));
}

TEST(TpeSuggest, IsDeterministicForASeedAndHistory) {
  SweepSpec spec = MustParse(SweepJson("tpe"));
  std::vector<TrialRecord> history;
  for (const Assignment& a : SuggestTrials(spec, {}, 8, 3)) {
    TrialRecord t = MakeTrial("t").Succeeded().Report("loss", 1, Objective(a)).Build();
    t.assignment = a;
    history.push_back(std::move(t));
  }
  ASSERT_TRUE(TpeSampler(spec, history).ready());
  EXPECT_EQ(SuggestTrials(spec, history, 2, 5), SuggestTrials(spec, history, 2, 5));
}

TEST(TpeSuggest, HandlesEveryParameterType) {
  // double (log), int, categorical and discrete: after 10 random trials (seed 6) TPE's
  // suggestions are distinct and each value belongs to its parameter's space.
  SweepSpec spec = MustParse(R"({"objective": {"type": "maximize", "objectiveMetricName": "acc"},
    "algorithm": {"algorithmName": "tpe"}, "maxTrialCount": 30,
    "parameters": [
      {"name": "lr", "parameterType": "double",
       "feasibleSpace": {"min": "0.0001", "max": "0.1", "distribution": "logUniform"}},
      {"name": "layers", "parameterType": "int", "feasibleSpace": {"min": "1", "max": "8", "step": "1"}},
      {"name": "opt", "parameterType": "categorical", "feasibleSpace": {"list": ["sgd", "adam"]}},
      {"name": "bs", "parameterType": "discrete", "feasibleSpace": {"list": ["16", "32", "64"]}}]})");
  std::vector<TrialRecord> history;
  for (const Assignment& a : SuggestTrials(spec, {}, 10, 6)) {
    double acc = (a.Find("opt")->text == "adam" ? 0.5 : 0.0) + *a.Find("bs")->number / 128;
    TrialRecord t = MakeTrial("t").Succeeded().Report("acc", 1, acc).Build();
    t.assignment = a;
    history.push_back(std::move(t));
  }
  ASSERT_TRUE(TpeSampler(spec, history).ready());
  std::vector<Assignment> next = SuggestTrials(spec, history, 5, 6);
  ASSERT_EQ(next.size(), 5u);
  std::set<std::string> keys;
  for (const Assignment& a : next) {
    keys.insert(a.Key());
    for (const ParameterSpec& p : spec.parameters) {
      EXPECT_TRUE(p.ValueOf(a.Find(p.name)->text, p.name).has_value()) << a.ToString();
    }
  }
  EXPECT_EQ(keys.size(), 5u);
}

TEST(TpeSuggest, FindsABetterOptimumThanRandomByMedianOverTwentySeeds) {
  // 30 sequential trials per sweep, seeds 1..20, the best objective of each;
  // TPE's median best must beat random's.
  SweepSpec tpe = MustParse(SweepJson("tpe"));
  SweepSpec random = MustParse(SweepJson("random"));
  std::vector<double> tpe_best;
  std::vector<double> random_best;
  for (uint64_t seed = 1; seed <= 20; ++seed) {
    tpe_best.push_back(BestOfSweep(tpe, seed, 30));
    random_best.push_back(BestOfSweep(random, seed, 30));
  }
  double tpe_median = Median(tpe_best);
  double random_median = Median(random_best);
  RecordProperty("tpe_median", std::to_string(tpe_median));
  RecordProperty("random_median", std::to_string(random_median));
  EXPECT_LT(tpe_median, random_median) << "tpe " << tpe_median << " random " << random_median;
}

}  // namespace
}  // namespace tessera::sweep
