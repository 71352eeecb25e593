// TrialRecord: what the search and the early-stopping rules know of one trial
// of a sweep: its parameters, its state and what it reported.
//
// Invariants the callers keep
// - A sweep's history lists its trials in the order they were created (the
//   controller's creation order); Hyperband assigns brackets by that order
//   and ties (best trial) go to the earliest.
// - Running covers every trial that was created and has not ended (waiting in
//   its queue or running): it counts against parallelTrialCount.
//
// Thread-safety: value types.
#pragma once

#include <string>
#include <string_view>

#include "sweep/assignment.h"
#include "sweep/observations.h"

namespace tessera::sweep {

enum class TrialState { kRunning, kSucceeded, kFailed, kEarlyStopped };

// "Running", "Succeeded", "Failed", "EarlyStopped" (Katib's condition names).
std::string_view TrialStateName(TrialState state);

struct TrialRecord {
  std::string name;
  Assignment assignment;
  TrialState state = TrialState::kRunning;
  Observations observations;

  // The series of `metric`, or nullptr when the trial reported none.
  const MetricSeries* Series(std::string_view metric) const {
    auto it = observations.find(metric);
    return it == observations.end() ? nullptr : &it->second;
  }
};

}  // namespace tessera::sweep
