// Where a sweep stands, from its spec and its trials: counts, the best trial,
// the goal, completion and failure, and how many trials to create now. What
// the controller writes to the Sweep's status and conditions.
//
// Rules (Katib's Experiment, in this order)
// 1. Succeeded (GoalReached) when the best trial's objective value reaches
//    the goal (<= for minimize, >= for maximize), running trials or not: the
//    controller stops those.
// 2. Failed (MaxFailedTrialsReached) when more than maxFailedTrialCount
//    trials failed.
// 3. Succeeded (MaxTrialsReached) when maxTrialCount trials exist (in any
//    state) and none runs; Succeeded (GridExhausted) when a grid has no
//    unused point left and none runs.
// 4. Running otherwise.
// The best trial is the one with the best CompletedObjective (Succeeded or
// EarlyStopped trials; sweep/trial_objective.h), ties to the earliest.
//
// Thread-safety: pure functions.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <vector>

#include "sweep/sweep_spec.h"
#include "sweep/trial_record.h"

namespace tessera::sweep {

struct TrialCounts {
  int running = 0;
  int succeeded = 0;
  int failed = 0;
  int early_stopped = 0;
  int total() const { return running + succeeded + failed + early_stopped; }
  friend bool operator==(const TrialCounts&, const TrialCounts&) = default;
};

TrialCounts CountTrials(const std::vector<TrialRecord>& history);

struct BestTrial {
  size_t index = 0;  // in history
  double value = 0;
};

std::optional<BestTrial> FindBestTrial(const SweepSpec& spec, const std::vector<TrialRecord>& history);

bool GoalReached(const SweepSpec& spec, const std::vector<TrialRecord>& history);

// A grid sweep with no unused point (SuggestTrials would return none).
bool GridExhausted(const SweepSpec& spec, const std::vector<TrialRecord>& history);

// Rule 2.
bool SweepFailed(const SweepSpec& spec, const std::vector<TrialRecord>& history);

// Rules 1 and 3 (a failed sweep is not complete).
bool SweepComplete(const SweepSpec& spec, const std::vector<TrialRecord>& history);

// How many new trials the controller may create now: the free parallel
// slots, within maxTrialCount; 0 once the sweep is complete or failed.
int TrialsToCreate(const SweepSpec& spec, const std::vector<TrialRecord>& history);

enum class SweepPhase { kRunning, kSucceeded, kFailed };

struct SweepVerdict {
  SweepPhase phase = SweepPhase::kRunning;
  std::string reason;   // "GoalReached", "MaxFailedTrialsReached", "MaxTrialsReached", "GridExhausted", "Running"
  std::string message;  // for the condition: "the best loss 0.04 (trial a-3) reached the goal 0.05"
};

// Rules 1 to 4 with a reason and a message.
SweepVerdict EvaluateSweep(const SweepSpec& spec, const std::vector<TrialRecord>& history);

}  // namespace tessera::sweep
