#include "domain/priority_class.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

namespace tessera {
namespace {

// Returns the default class named `name`; fails the test when it is missing.
PriorityClass DefaultNamed(const std::string& name) {
  std::vector<PriorityClass> all = DefaultPriorityClasses();
  auto it = std::find_if(all.begin(), all.end(),
                         [&](const PriorityClass& pc) { return pc.name == name; });
  EXPECT_NE(it, all.end()) << "no default priority class " << name;
  return it == all.end() ? PriorityClass{} : *it;
}

// Exactly four defaults ship: production, training, development, batch.
TEST(DefaultPriorityClassesTest, FourDefaults) {
  std::vector<std::string> names;
  for (const PriorityClass& pc : DefaultPriorityClasses()) names.push_back(pc.name);
  std::vector<std::string> want = {"production", "training", "development", "batch"};
  std::sort(names.begin(), names.end());
  std::sort(want.begin(), want.end());
  EXPECT_EQ(names, want);
}

// Values order production > training > development > batch.
TEST(DefaultPriorityClassesTest, ValuesOrdered) {
  int32_t production = DefaultNamed("production").value;
  int32_t training = DefaultNamed("training").value;
  int32_t development = DefaultNamed("development").value;
  int32_t batch = DefaultNamed("batch").value;
  EXPECT_GT(production, training);
  EXPECT_GT(training, development);
  EXPECT_GT(development, batch);
}

// Production work is never a preemption victim.
TEST(DefaultPriorityClassesTest, ProductionIsNonPreemptible) {
  EXPECT_TRUE(DefaultNamed("production").non_preemptible);
}

// Only production is shielded from preemption.
TEST(DefaultPriorityClassesTest, OthersArePreemptible) {
  EXPECT_FALSE(DefaultNamed("training").non_preemptible);
  EXPECT_FALSE(DefaultNamed("development").non_preemptible);
  EXPECT_FALSE(DefaultNamed("batch").non_preemptible);
}

// Batch never preempts: it waits for otherwise idle resources.
TEST(DefaultPriorityClassesTest, BatchNeverPreempts) {
  EXPECT_EQ(DefaultNamed("batch").preemption_policy, PreemptionPolicy::kNever);
}

// The classes above batch may preempt lower-priority work.
TEST(DefaultPriorityClassesTest, OthersPreemptLowerPriority) {
  EXPECT_EQ(DefaultNamed("production").preemption_policy, PreemptionPolicy::kPreemptLowerPriority);
  EXPECT_EQ(DefaultNamed("training").preemption_policy, PreemptionPolicy::kPreemptLowerPriority);
  EXPECT_EQ(DefaultNamed("development").preemption_policy,
            PreemptionPolicy::kPreemptLowerPriority);
}

// At most one default is the global default (Kubernetes allows only one).
TEST(DefaultPriorityClassesTest, AtMostOneGlobalDefault) {
  auto all = DefaultPriorityClasses();
  auto n = std::count_if(all.begin(), all.end(),
                         [](const PriorityClass& pc) { return pc.global_default; });
  EXPECT_LE(n, 1);
}

}  // namespace
}  // namespace tessera
