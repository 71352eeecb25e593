// Builders for the sweep tests: a spec from JSON text, and trials with their
// parameters, state and reported points, instead of positional arguments.
#pragma once

#include <gtest/gtest.h>

#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "sweep/number_text.h"
#include "sweep/sweep_spec.h"
#include "sweep/trial_record.h"

namespace tessera::sweep::testing {

// The spec a test names, or a failed test with the parser's message.
inline SweepSpec MustParse(const std::string& spec_json) {
  Result<SweepSpec> spec = ParseSweepSpec(nlohmann::json::parse(spec_json));
  EXPECT_TRUE(spec.has_value()) << spec.error().ToString();
  return spec.has_value() ? *spec : SweepSpec{};
}

// The parser's message for a spec that must be refused.
inline std::string ErrorOf(const std::string& spec_json) {
  Result<SweepSpec> spec = ParseSweepSpec(nlohmann::json::parse(spec_json));
  EXPECT_FALSE(spec.has_value()) << spec_json;
  return spec.has_value() ? "" : spec.error().message();
}

class TrialBuilder {
 public:
  explicit TrialBuilder(std::string name) { trial_.name = std::move(name); }

  TrialBuilder& Param(const std::string& name, const std::string& text) {
    trial_.assignment.Add({name, text, ParseDouble(text)});
    return *this;
  }
  TrialBuilder& Running() { return State(TrialState::kRunning); }
  TrialBuilder& Succeeded() { return State(TrialState::kSucceeded); }
  TrialBuilder& Failed() { return State(TrialState::kFailed); }
  TrialBuilder& EarlyStopped() { return State(TrialState::kEarlyStopped); }
  TrialBuilder& State(TrialState state) {
    trial_.state = state;
    return *this;
  }
  // One point of `metric` at `step`.
  TrialBuilder& Report(const std::string& metric, int64_t step, double value) {
    trial_.observations.try_emplace(metric).first->second.Add(step, value);
    return *this;
  }
  // Points of `metric` at steps 1, 2, ...
  TrialBuilder& Curve(const std::string& metric, const std::vector<double>& values) {
    for (size_t i = 0; i < values.size(); ++i) Report(metric, static_cast<int64_t>(i) + 1, values[i]);
    return *this;
  }
  TrialRecord Build() const { return trial_; }

 private:
  TrialRecord trial_;
};

inline TrialBuilder MakeTrial(std::string name) { return TrialBuilder(std::move(name)); }

}  // namespace tessera::sweep::testing
