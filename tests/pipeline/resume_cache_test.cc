// CacheKey, the cache it keys, ResumeStates and SpecDigest: runs driven by a
// small controller stand-in (RunToEnd) whose pods "output" their command
// line, so a node's outputs change exactly when its final template does.
#include "pipeline/resume.h"

#include <functional>

#include <gtest/gtest.h>

#include "pipeline/digests.h"
#include "tests/pipeline/pipeline_testing.h"

namespace tessera::pipeline {
namespace {

using nlohmann::json;
using testing::ExpandOrFail;
using testing::MakePipeline;
using testing::MakeStep;

using Names = std::vector<std::string>;

struct CacheEntry {
  std::string result;
  std::string digest;
};
using Cache = std::map<std::string, CacheEntry>;

// What a run ended with, as its status would record it.
struct Outcome {
  NodeStates states;
  NodeResults results;
  OutputDigests digests;
  std::map<std::string, std::string> keys;
  Names ran;  // nodes whose pod ran, in order
  RunPhase phase = RunPhase::kRunning;
};

// The command line of a pod template: what the fake pods print as their result.
std::string CommandOf(const json& pod_template) {
  return pod_template.at("spec").at("containers").at(0).at("command").at(2).get<std::string>();
}

// A pod fails when its command says "exit 1"; otherwise its result is its command.
std::optional<std::string> Execute(const json& final_template) {
  const std::string command = CommandOf(final_template);
  if (command.find("exit 1") != std::string::npos) return std::nullopt;
  return command;
}

// Drives a run to its end as the controller would: for each node Next starts,
// compute its key; a cache hit records it Cached, else its pod runs at once.
// `start` holds what ResumeStates carried over.
Outcome RunToEnd(const Dag& dag, Cache& cache, const ResumePlan& start = {}) {
  Outcome out{start.states, start.results, start.output_digests, {}, {}, RunPhase::kRunning};
  for (const auto& [name, key] : start.cache_keys) out.keys[name] = key;
  for (int64_t t = 0; t < 100; ++t) {
    Decision d = Next(dag, out.states, out.results, Timestamp::FromSeconds(t));
    out.phase = d.phase;
    for (const NodeMark& m : d.skip) {
      out.states[m.node] = {NodeState::kSkipped, 0, Timestamp::FromSeconds(t), false, m.reason};
      out.keys[m.node] = CacheKey(dag.node(*dag.Find(m.node)), out.digests);
      out.digests[m.node] = "";
    }
    for (const NodeMark& m : d.omit) out.states[m.node] = {NodeState::kOmitted, 0, {}, false, m.reason};
    if (d.phase != RunPhase::kRunning) break;
    for (const std::string& name : d.start) {
      const NodeId id = *dag.Find(name);
      const std::string key = CacheKey(dag.node(id), out.digests);
      out.keys[name] = key;
      auto hit = cache.find(key);
      if (dag.node(id).cache && hit != cache.end()) {
        out.states[name] = {NodeState::kCached, 0, Timestamp::FromSeconds(t)};
        out.results[name] = hit->second.result;
        out.digests[name] = hit->second.digest;
        continue;
      }
      out.ran.push_back(name);
      std::optional<std::string> result = Execute(FinalTemplate(dag, id, out.states, out.results));
      if (!result) {
        out.states[name] = {NodeState::kFailed, 1, Timestamp::FromSeconds(t), false, "exit code 1"};
        continue;
      }
      out.states[name] = {NodeState::kSucceeded, 1, Timestamp::FromSeconds(t)};
      out.results[name] = *result;
      out.digests[name] = Sha256Hex(*result);
      cache[key] = {*result, out.digests[name]};
    }
  }
  return out;
}

// The previous run as its status recorded it.
PreviousRun Recorded(const std::string& name, const Outcome& outcome) {
  PreviousRun prev{name, {}};
  for (const auto& [node, status] : outcome.states) {
    auto key = outcome.keys.find(node);
    auto result = outcome.results.find(node);
    auto digest = outcome.digests.find(node);
    prev.nodes[node] = {status.state, key == outcome.keys.end() ? "" : key->second,
                        digest == outcome.digests.end() ? "" : digest->second,
                        result == outcome.results.end() ? "" : result->second, status.resumed_from};
  }
  return prev;
}

// prepare -> train -> evaluate, and stats beside train; train's command is `train`.
json TrainEval(const std::string& train_command, const std::string& dataset = "cifar10") {
  return MakePipeline()
      .Param("dataset", dataset)
      .Step(MakeStep("prepare").Command("prepare {{params.dataset}}"))
      .Step(MakeStep("stats").DependsOn({"prepare"}).Command("stats {{steps.prepare.outputs.result}}"))
      .Step(MakeStep("train").DependsOn({"prepare"}).Command(train_command))
      .Step(MakeStep("evaluate").DependsOn({"train"}).Command("evaluate {{steps.train.outputs.result}}"))
      .Build();
}

TEST(Sha256Hex, IsTheLowercaseHexDigest) {
  // FIPS 180-2's example: SHA-256("abc").
  EXPECT_EQ(Sha256Hex("abc"), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
}

TEST(CacheKey, IsTheSameForTheSameTemplateAndInputs) {
  // Two expansions of one spec, with the template's keys written in another order.
  Dag one = ExpandOrFail(TrainEval("train"));
  json reordered = TrainEval("train");
  reordered["steps"][2]["template"] = json::parse(
      R"({"spec": {"containers": [{"command": ["sh", "-c", "train"], "image": "busybox", "name": "main"}]},
          "metadata": {"labels": {"app": "pipeline"}}})");
  Dag two = ExpandOrFail(reordered);
  const OutputDigests digests = {{"prepare", "d1"}};
  EXPECT_EQ(CacheKey(one.node(*one.Find("train")), digests), CacheKey(two.node(*two.Find("train")), digests));
  EXPECT_EQ(CacheKey(one.node(*one.Find("train")), digests).size(), 64u);
}

TEST(CacheKey, ChangesWithTheTemplateAParameterTheConditionOrAnInput) {
  auto key = [](const json& spec, const std::string& node, const OutputDigests& digests) {
    Dag dag = ExpandOrFail(spec);
    return CacheKey(dag.node(*dag.Find(node)), digests);
  };
  const OutputDigests digests = {{"prepare", "d1"}};
  const std::string base = key(TrainEval("train"), "train", digests);
  EXPECT_NE(key(TrainEval("train --epochs 2"), "train", digests), base);   // the template
  EXPECT_NE(key(TrainEval("train"), "train", {{"prepare", "d2"}}), base);  // an input's outputs
  EXPECT_NE(key(TrainEval("train", "mnist"), "prepare", {}),               // a parameter it uses
            key(TrainEval("train"), "prepare", {}));
  json conditional = TrainEval("train");
  conditional["steps"][2]["when"] = "true";
  EXPECT_NE(key(conditional, "train", digests), base);  // its condition
}

TEST(CacheKey, IgnoresDigestsOfNodesThatAreNotInputs) {
  // train reads prepare only; stats' digest is not its concern.
  Dag dag = ExpandOrFail(TrainEval("train"));
  const DagNode& train = dag.node(*dag.Find("train"));
  EXPECT_EQ(CacheKey(train, {{"prepare", "d1"}}), CacheKey(train, {{"prepare", "d1"}, {"stats", "zzz"}}));
  EXPECT_EQ(CacheKey(train, {}), CacheKey(train, {{"prepare", ""}}));  // absent hashes as ""
}

TEST(Cache, ASecondRunOfTheSameSpecIsAllCacheHits) {
  Cache cache;
  Dag dag = ExpandOrFail(TrainEval("train"));
  Outcome first = RunToEnd(dag, cache);
  EXPECT_EQ(first.phase, RunPhase::kSucceeded);
  EXPECT_EQ(first.ran, (Names{"prepare", "stats", "train", "evaluate"}));
  Outcome second = RunToEnd(dag, cache);
  EXPECT_EQ(second.phase, RunPhase::kSucceeded);
  EXPECT_TRUE(second.ran.empty());
  EXPECT_EQ(second.states["evaluate"].state, NodeState::kCached);
  EXPECT_EQ(second.results["evaluate"], "evaluate train");  // the cached result
}

TEST(Cache, AChangedStepRerunsItAndTheStepsWhoseInputsChanged) {
  // train's command changes: train and evaluate (its result changed) run again;
  // prepare and stats are hits.
  Cache cache;
  RunToEnd(ExpandOrFail(TrainEval("train")), cache);
  Outcome changed = RunToEnd(ExpandOrFail(TrainEval("train --epochs 2")), cache);
  EXPECT_EQ(changed.ran, (Names{"train", "evaluate"}));
  EXPECT_EQ(changed.states["prepare"].state, NodeState::kCached);
  EXPECT_EQ(changed.states["stats"].state, NodeState::kCached);
}

TEST(Cache, AStepWithCacheOffAlwaysRuns) {
  Cache cache;
  json spec = TrainEval("train");
  spec["steps"][0]["cache"] = false;  // prepare
  RunToEnd(ExpandOrFail(spec), cache);
  Outcome second = RunToEnd(ExpandOrFail(spec), cache);
  // prepare reruns; its output is the same, so everything after it is a hit.
  EXPECT_EQ(second.ran, (Names{"prepare"}));
}

TEST(ResumeStates, AfterTheFailingStepIsFixedOnlyItAndItsDependentsRerun) {
  // run-1: train fails ("exit 1"), evaluate is omitted; prepare and stats succeeded.
  Cache no_cache_1, no_cache_2;
  Outcome run1 = RunToEnd(ExpandOrFail(TrainEval("train; exit 1")), no_cache_1);
  ASSERT_EQ(run1.phase, RunPhase::kFailed);
  EXPECT_EQ(run1.states["evaluate"].state, NodeState::kOmitted);

  // run-2, resumeFrom run-1, with train's template fixed (and no cache).
  Dag fixed = ExpandOrFail(TrainEval("train"));
  ResumePlan plan = ResumeStates(fixed, Recorded("run-1", run1));
  EXPECT_EQ(plan.states.size(), 2u);  // prepare, stats
  EXPECT_EQ(plan.states["prepare"].state, NodeState::kSucceeded);
  EXPECT_EQ(plan.states["prepare"].resumed_from, "run-1");
  EXPECT_EQ(plan.results["prepare"], "prepare cifar10");
  Outcome run2 = RunToEnd(fixed, no_cache_2, plan);
  EXPECT_EQ(run2.phase, RunPhase::kSucceeded);
  EXPECT_EQ(run2.ran, (Names{"train", "evaluate"}));
  EXPECT_EQ(run2.states["stats"].resumed_from, "run-1");
}

TEST(ResumeStates, ReRunsEverythingDownstreamOfAChangedParameter) {
  // prepare uses the dataset: a new dataset changes its key, so nothing carries over.
  Cache c1;
  Outcome run1 = RunToEnd(ExpandOrFail(TrainEval("train; exit 1")), c1);
  ResumePlan plan = ResumeStates(ExpandOrFail(TrainEval("train", "mnist")), Recorded("run-1", run1));
  EXPECT_TRUE(plan.states.empty());
}

TEST(ResumeStates, NamesTheRunThatActuallyRanACarriedNode) {
  // run-2 resumed prepare from run-1; run-3 resuming from run-2 still says run-1,
  // where prepare's outputs are.
  Cache c1, c2;
  Outcome run1 = RunToEnd(ExpandOrFail(TrainEval("train; exit 1")), c1);
  Dag again = ExpandOrFail(TrainEval("train; exit 1"));
  ResumePlan plan2 = ResumeStates(again, Recorded("run-1", run1));
  Outcome run2 = RunToEnd(again, c2, plan2);
  ResumePlan plan3 = ResumeStates(ExpandOrFail(TrainEval("train")), Recorded("run-2", run2));
  EXPECT_EQ(plan3.states["prepare"].resumed_from, "run-1");
}

TEST(ResumeStates, CarriesASkippedNodeSoItsDependentsDoNotRerun) {
  // gate is skipped; after it, report succeeded; last failed. Fixing last
  // reruns last only: gate stays Skipped, report carries over.
  auto spec = [](const std::string& last) {
    return MakePipeline()
        .Param("go", "false")
        .Step(MakeStep("gate").When("{{params.go}}"))
        .Step(MakeStep("report").DependsOn({"gate"}).Command("report"))
        .Step(MakeStep("last").DependsOn({"report"}).Command(last))
        .Build();
  };
  Cache c1, c2;
  Outcome run1 = RunToEnd(ExpandOrFail(spec("exit 1")), c1);
  ASSERT_EQ(run1.states["gate"].state, NodeState::kSkipped);
  ResumePlan plan = ResumeStates(ExpandOrFail(spec("done")), Recorded("run-1", run1));
  EXPECT_EQ(plan.states["gate"].state, NodeState::kSkipped);
  EXPECT_EQ(plan.states["report"].state, NodeState::kSucceeded);
  EXPECT_FALSE(plan.states.contains("last"));
  EXPECT_EQ(RunToEnd(ExpandOrFail(spec("done")), c2, plan).ran, (Names{"last"}));
}

TEST(SpecDigest, IgnoresKeyOrderButNotContent) {
  const json a = json::parse(R"({"steps": [{"name": "a", "template": {}}], "parameters": []})");
  const json b = json::parse(R"({"parameters": [], "steps": [{"template": {}, "name": "a"}]})");
  const json c = json::parse(R"({"parameters": [], "steps": [{"template": {}, "name": "b"}]})");
  EXPECT_EQ(SpecDigest(a), SpecDigest(b));
  EXPECT_NE(SpecDigest(a), SpecDigest(c));
  EXPECT_EQ(SpecDigest(testing::Parse(TrainEval("train"))), SpecDigest(TrainEval("train")));
}

}  // namespace
}  // namespace tessera::pipeline
