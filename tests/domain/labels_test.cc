#include "domain/labels.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace tessera {
namespace {

using Op = Toleration::Operator;

// ============================================================================
// Labels.
// ============================================================================

// A default Labels is empty and finds nothing.
TEST(LabelsTest, DefaultIsEmpty) {
  Labels l;
  EXPECT_TRUE(l.empty());
  EXPECT_EQ(l.Find("zone"), nullptr);
}

// Set then Find returns the value.
TEST(LabelsTest, SetThenFind) {
  Labels l;
  l.Set("gpu", "a100");
  ASSERT_NE(l.Find("gpu"), nullptr);
  EXPECT_EQ(*l.Find("gpu"), "a100");
  EXPECT_FALSE(l.empty());
}

// Setting an existing key replaces its value rather than adding a second entry.
TEST(LabelsTest, SetReplacesExistingKey) {
  Labels l;
  l.Set("gpu", "a100");
  l.Set("gpu", "h100");
  EXPECT_EQ(*l.Find("gpu"), "h100");
  EXPECT_EQ(l.items().size(), 1u);
}

// Items stay sorted by key whatever the insertion order.
TEST(LabelsTest, ItemsSortedByKey) {
  Labels l;
  l.Set("zone", "z1");
  l.Set("arch", "amd64");
  l.Set("gpu", "a100");
  std::vector<std::pair<std::string, std::string>> want = {
      {"arch", "amd64"}, {"gpu", "a100"}, {"zone", "z1"}};
  EXPECT_EQ(l.items(), want);
}

// The initializer-list constructor is the same as setting each pair; a repeated key keeps the last.
TEST(LabelsTest, InitializerListSetsEachPair) {
  Labels a = {{"zone", "z1"}, {"gpu", "a100"}, {"zone", "z2"}};
  Labels b;
  b.Set("gpu", "a100");
  b.Set("zone", "z2");
  EXPECT_EQ(a, b);
}

// Find of a missing key, including a prefix of a present key, returns nullptr.
TEST(LabelsTest, FindMissingKey) {
  Labels l = {{"gpu-type", "a100"}};
  EXPECT_EQ(l.Find("gpu"), nullptr);
  EXPECT_EQ(l.Find("gpu-type-x"), nullptr);
  EXPECT_EQ(l.Find(""), nullptr);
}

// An empty selector matches every label set, including an empty one.
TEST(LabelsMatchesTest, EmptySelectorMatchesEverything) {
  EXPECT_TRUE(Labels().Matches(Labels()));
  EXPECT_TRUE((Labels{{"gpu", "a100"}}).Matches(Labels()));
}

// A selector matches when each of its keys is present with the same value; extra labels are fine.
TEST(LabelsMatchesTest, SubsetMatches) {
  Labels node = {{"gpu", "a100"}, {"zone", "z1"}, {"rack", "r7"}};
  EXPECT_TRUE(node.Matches({{"gpu", "a100"}}));
  EXPECT_TRUE(node.Matches({{"gpu", "a100"}, {"zone", "z1"}}));
}

// A selector key with a different value does not match.
TEST(LabelsMatchesTest, DifferentValueDoesNotMatch) {
  Labels node = {{"gpu", "a100"}, {"zone", "z1"}};
  EXPECT_FALSE(node.Matches({{"gpu", "h100"}}));
  EXPECT_FALSE(node.Matches({{"gpu", "a100"}, {"zone", "z2"}}));  // one of two differs
}

// A selector key absent from the labels does not match, even with an empty value.
TEST(LabelsMatchesTest, MissingKeyDoesNotMatch) {
  Labels node = {{"gpu", "a100"}};
  EXPECT_FALSE(node.Matches({{"zone", "z1"}}));
  EXPECT_FALSE(node.Matches({{"zone", ""}}));
  EXPECT_FALSE(Labels().Matches({{"gpu", "a100"}}));
}

// ============================================================================
// Toleration::Tolerates.
// ============================================================================

const Taint kGpuNoSchedule = {.key = "nvidia.com/gpu", .value = "present",
                              .effect = TaintEffect::kNoSchedule};

// Equal tolerates a taint with the same key and value.
TEST(TolerationTest, EqualMatchesKeyAndValue) {
  Toleration t{.key = "nvidia.com/gpu", .op = Op::kEqual, .value = "present"};
  EXPECT_TRUE(t.Tolerates(kGpuNoSchedule));
}

// Equal does not tolerate a different value.
TEST(TolerationTest, EqualRejectsDifferentValue) {
  Toleration t{.key = "nvidia.com/gpu", .op = Op::kEqual, .value = "absent"};
  EXPECT_FALSE(t.Tolerates(kGpuNoSchedule));
}

// Equal with an empty value only tolerates a taint whose value is empty.
TEST(TolerationTest, EqualEmptyValueMatchesOnlyEmptyValue) {
  Toleration t{.key = "dedicated", .op = Op::kEqual, .value = ""};
  EXPECT_TRUE(t.Tolerates({.key = "dedicated", .value = ""}));
  EXPECT_FALSE(t.Tolerates({.key = "dedicated", .value = "team-a"}));
}

// Exists tolerates a taint with the same key whatever its value.
TEST(TolerationTest, ExistsIgnoresValue) {
  Toleration t{.key = "nvidia.com/gpu", .op = Op::kExists};
  EXPECT_TRUE(t.Tolerates(kGpuNoSchedule));
  EXPECT_TRUE(t.Tolerates({.key = "nvidia.com/gpu", .value = "anything"}));
}

// Neither operator tolerates a taint with a different key.
TEST(TolerationTest, DifferentKeyNotTolerated) {
  EXPECT_FALSE((Toleration{.key = "dedicated", .op = Op::kExists}).Tolerates(kGpuNoSchedule));
  EXPECT_FALSE((Toleration{.key = "dedicated", .op = Op::kEqual, .value = "present"})
                   .Tolerates(kGpuNoSchedule));
}

// An empty key with Exists tolerates every taint, whatever its key, value and effect.
TEST(TolerationTest, EmptyKeyExistsToleratesEverything) {
  Toleration t{.key = "", .op = Op::kExists};
  EXPECT_TRUE(t.Tolerates(kGpuNoSchedule));
  EXPECT_TRUE(t.Tolerates({.key = "dedicated", .value = "x", .effect = TaintEffect::kNoExecute}));
  EXPECT_TRUE(t.Tolerates({.key = "", .value = "", .effect = TaintEffect::kPreferNoSchedule}));
}

// An empty key with Equal tolerates nothing (Kubernetes requires Exists for an empty key).
TEST(TolerationTest, EmptyKeyEqualToleratesNothing) {
  Toleration t{.key = "", .op = Op::kEqual, .value = ""};
  EXPECT_FALSE(t.Tolerates(kGpuNoSchedule));
  EXPECT_FALSE(t.Tolerates({.key = "", .value = ""}));
}

// A toleration with an effect only tolerates taints with that effect.
TEST(TolerationTest, EffectMustMatchWhenSet) {
  Toleration t{.key = "nvidia.com/gpu", .op = Op::kExists, .effect = TaintEffect::kNoSchedule};
  EXPECT_TRUE(t.Tolerates(kGpuNoSchedule));
  EXPECT_FALSE(t.Tolerates({.key = "nvidia.com/gpu", .effect = TaintEffect::kNoExecute}));
  EXPECT_FALSE(t.Tolerates({.key = "nvidia.com/gpu", .effect = TaintEffect::kPreferNoSchedule}));
}

// A toleration without an effect tolerates every effect.
TEST(TolerationTest, NoEffectMatchesAllEffects) {
  Toleration t{.key = "nvidia.com/gpu", .op = Op::kExists};
  for (TaintEffect e :
       {TaintEffect::kNoSchedule, TaintEffect::kPreferNoSchedule, TaintEffect::kNoExecute}) {
    EXPECT_TRUE(t.Tolerates({.key = "nvidia.com/gpu", .effect = e}));
  }
}

// An empty-key Exists toleration limited to an effect tolerates only taints of that effect.
TEST(TolerationTest, EmptyKeyWithEffectLimitsEffect) {
  Toleration t{.key = "", .op = Op::kExists, .effect = TaintEffect::kNoExecute};
  EXPECT_TRUE(t.Tolerates({.key = "a", .effect = TaintEffect::kNoExecute}));
  EXPECT_FALSE(t.Tolerates({.key = "a", .effect = TaintEffect::kNoSchedule}));
}

// ============================================================================
// ToleratesAll.
// ============================================================================

// No taints: everything schedules, even with no tolerations.
TEST(ToleratesAllTest, NoTaintsAlwaysTolerated) { EXPECT_TRUE(ToleratesAll({}, {})); }

// A NoSchedule taint without a matching toleration blocks.
TEST(ToleratesAllTest, UntoleratedNoScheduleBlocks) {
  EXPECT_FALSE(ToleratesAll({kGpuNoSchedule}, {}));
  EXPECT_FALSE(ToleratesAll({kGpuNoSchedule}, {{.key = "other", .op = Op::kExists}}));
}

// A NoExecute taint without a matching toleration blocks.
TEST(ToleratesAllTest, UntoleratedNoExecuteBlocks) {
  EXPECT_FALSE(ToleratesAll({{.key = "maintenance", .effect = TaintEffect::kNoExecute}}, {}));
}

// A PreferNoSchedule taint never blocks, even untolerated.
TEST(ToleratesAllTest, PreferNoScheduleIgnored) {
  Taint soft{.key = "spot", .value = "true", .effect = TaintEffect::kPreferNoSchedule};
  EXPECT_TRUE(ToleratesAll({soft}, {}));
  // alongside a tolerated hard taint
  EXPECT_TRUE(ToleratesAll({soft, kGpuNoSchedule}, {{.key = "nvidia.com/gpu", .op = Op::kExists}}));
}

// Every hard taint must be tolerated, each by some toleration.
TEST(ToleratesAllTest, EachHardTaintNeedsATolerator) {
  Taint gpu = kGpuNoSchedule;
  Taint team{.key = "dedicated", .value = "team-a", .effect = TaintEffect::kNoSchedule};
  std::vector<Toleration> only_gpu = {{.key = "nvidia.com/gpu", .op = Op::kExists}};
  std::vector<Toleration> both = {{.key = "nvidia.com/gpu", .op = Op::kExists},
                                  {.key = "dedicated", .op = Op::kEqual, .value = "team-a"}};
  EXPECT_FALSE(ToleratesAll({gpu, team}, only_gpu));  // team taint untolerated
  EXPECT_TRUE(ToleratesAll({gpu, team}, both));
}

// One wildcard toleration (empty key, Exists) tolerates every taint.
TEST(ToleratesAllTest, WildcardToleratesAll) {
  std::vector<Taint> taints = {kGpuNoSchedule,
                               {.key = "maintenance", .effect = TaintEffect::kNoExecute}};
  EXPECT_TRUE(ToleratesAll(taints, {{.key = "", .op = Op::kExists}}));
}

}  // namespace
}  // namespace tessera
