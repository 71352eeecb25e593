// Helpers of the pipeline tests: builders for specs (MakePipeline().Param(...)
// .Step(MakeStep("train").DependsOn({"prepare"}).Build()).Build()), parsing
// that fails the test on an error, and FakeRun, a controller stand-in that
// applies Next's decisions to the run's states as the real one would.
#pragma once

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "pipeline/dag.h"
#include "pipeline/dag_scheduler.h"
#include "pipeline/parameters.h"
#include "pipeline/pipeline_spec.h"

namespace tessera::pipeline::testing {

using nlohmann::json;

// A pod template running `command` in a shell.
inline json PodRunning(const std::string& command) {
  return {
      {"metadata", {{"labels", {{"app", "pipeline"}}}}},
      {"spec",
       {{"containers",
         json::array({{{"name", "main"}, {"image", "busybox"}, {"command", json::array({"sh", "-c", command})}}})}}}};
}

class StepBuilder {
 public:
  explicit StepBuilder(std::string name) {
    step_["name"] = std::move(name);
    step_["template"] = PodRunning("true");
  }
  StepBuilder& Command(const std::string& command) {
    step_["template"] = PodRunning(command);
    return *this;
  }
  StepBuilder& Template(json t) {
    step_["template"] = std::move(t);
    return *this;
  }
  StepBuilder& DependsOn(std::vector<std::string> deps) {
    step_["dependsOn"] = std::move(deps);
    return *this;
  }
  StepBuilder& WithItems(json items) {
    step_["withItems"] = std::move(items);
    return *this;
  }
  StepBuilder& When(std::string expr) {
    step_["when"] = std::move(expr);
    return *this;
  }
  StepBuilder& Retries(int64_t limit, int64_t backoff_seconds) {
    step_["retries"] = {{"limit", limit}, {"backoffSeconds", backoff_seconds}};
    return *this;
  }
  StepBuilder& Cache(bool on) {
    step_["cache"] = on;
    return *this;
  }
  StepBuilder& Set(const std::string& key, json value) {
    step_[key] = std::move(value);
    return *this;
  }
  json Build() const { return step_; }

 private:
  json step_ = json::object();
};

inline StepBuilder MakeStep(std::string name) { return StepBuilder(std::move(name)); }

class PipelineBuilder {
 public:
  PipelineBuilder& Param(std::string name, std::optional<std::string> value = std::nullopt) {
    json p = {{"name", std::move(name)}};
    if (value) p["value"] = *value;
    spec_["parameters"].push_back(std::move(p));
    return *this;
  }
  PipelineBuilder& Step(json step) {
    spec_["steps"].push_back(std::move(step));
    return *this;
  }
  PipelineBuilder& Step(const StepBuilder& step) { return Step(step.Build()); }
  json Build() const { return spec_; }

 private:
  json spec_ = json::object();
};

inline PipelineBuilder MakePipeline() { return PipelineBuilder(); }

// The parsed spec; a parse error fails the test (and gives an empty spec).
inline PipelineSpec Parse(const json& spec) {
  auto parsed = ParsePipelineSpec(spec);
  EXPECT_TRUE(parsed.has_value()) << parsed.error().ToString() << "\n" << spec.dump(2);
  return parsed ? *parsed : PipelineSpec();
}

// The message of the error the spec must be refused with ("" when accepted,
// which fails the test).
inline std::string ErrorOf(const json& spec) {
  auto parsed = ParsePipelineSpec(spec);
  EXPECT_FALSE(parsed.has_value()) << "accepted: " << spec.dump();
  if (parsed) return "";
  EXPECT_EQ(parsed.error().code(), StatusCode::kInvalidArgument);
  return parsed.error().message();
}

// Parse, resolve `run_parameters` ([{name, value}] or null), expand.
inline Dag ExpandOrFail(const json& spec, const json& run_parameters = nullptr) {
  PipelineSpec parsed = Parse(spec);
  auto values = ResolveParameters(parsed, run_parameters);
  EXPECT_TRUE(values.has_value()) << values.error().ToString();
  if (!values) return Dag();
  auto dag = Expand(parsed, *values);
  EXPECT_TRUE(dag.has_value()) << dag.error().ToString();
  return dag ? *dag : Dag();
}

// The controller's part of a run, in memory: Tick asks Next and records its
// decisions; Succeed and Fail are the pods' outcomes.
class FakeRun {
 public:
  explicit FakeRun(Dag dag) : dag_(std::move(dag)) {}

  // Next at `now`, applied: start/retry -> Running with one more attempt;
  // skip/omit/fail -> their states with the reason. `started` logs "name#attempt".
  Decision Tick(Timestamp now) {
    Decision d = Next(dag_, states, results, now);
    auto run = [&](const std::string& name) {
      NodeStatus& s = states[name];
      s.state = NodeState::kRunning;
      ++s.attempts;
      s.message.clear();
      started.push_back(name + "#" + std::to_string(s.attempts));
    };
    for (const std::string& name : d.start) run(name);
    for (const std::string& name : d.retry) run(name);
    for (const NodeMark& m : d.skip) Mark(m, NodeState::kSkipped);
    for (const NodeMark& m : d.omit) Mark(m, NodeState::kOmitted);
    for (const NodeMark& m : d.fail) {
      Mark(m, NodeState::kFailed);
      states[m.node].permanent = true;
    }
    return d;
  }

  void Succeed(const std::string& name, Timestamp at, std::string result = "") {
    EXPECT_EQ(states[name].state, NodeState::kRunning) << name;
    states[name].state = NodeState::kSucceeded;
    states[name].finished_at = at;
    results[name] = std::move(result);
  }

  void Fail(const std::string& name, Timestamp at, std::string message) {
    EXPECT_EQ(states[name].state, NodeState::kRunning) << name;
    states[name].state = NodeState::kFailed;
    states[name].finished_at = at;
    states[name].message = std::move(message);
  }

  // The nodes now Running, in name order.
  std::vector<std::string> Running() const {
    std::vector<std::string> out;
    for (const auto& [name, s] : states) {
      if (s.state == NodeState::kRunning) out.push_back(name);
    }
    return out;
  }

  const Dag& dag() const { return dag_; }

  NodeStates states;
  NodeResults results;
  std::vector<std::string> started;

 private:
  void Mark(const NodeMark& m, NodeState state) {
    states[m.node].state = state;
    states[m.node].message = m.reason;
  }

  Dag dag_;
};

inline Timestamp At(int64_t seconds) { return Timestamp::FromSeconds(seconds); }

}  // namespace tessera::pipeline::testing
