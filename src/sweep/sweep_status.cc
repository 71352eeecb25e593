#include "sweep/sweep_status.h"

#include <fmt/format.h>

#include <algorithm>

#include "sweep/number_text.h"
#include "sweep/suggest_trials.h"
#include "sweep/trial_objective.h"

namespace tessera::sweep {

TrialCounts CountTrials(const std::vector<TrialRecord>& history) {
  TrialCounts c;
  for (const TrialRecord& t : history) {
    switch (t.state) {
      case TrialState::kRunning:
        ++c.running;
        break;
      case TrialState::kSucceeded:
        ++c.succeeded;
        break;
      case TrialState::kFailed:
        ++c.failed;
        break;
      case TrialState::kEarlyStopped:
        ++c.early_stopped;
        break;
    }
  }
  return c;
}

std::optional<BestTrial> FindBestTrial(const SweepSpec& spec, const std::vector<TrialRecord>& history) {
  std::optional<BestTrial> best;
  for (size_t i = 0; i < history.size(); ++i) {
    std::optional<double> v = CompletedObjective(spec.objective, history[i]);
    if (v && (!best || spec.objective.Better(*v, best->value))) best = BestTrial{i, *v};
  }
  return best;
}

bool GoalReached(const SweepSpec& spec, const std::vector<TrialRecord>& history) {
  if (!spec.objective.goal) return false;
  std::optional<BestTrial> best = FindBestTrial(spec, history);
  if (!best) return false;
  return !spec.objective.Better(*spec.objective.goal, best->value);  // value at least as good as the goal
}

bool GridExhausted(const SweepSpec& spec, const std::vector<TrialRecord>& history) {
  return spec.algorithm.name == SearchAlgorithm::kGrid && SuggestTrials(spec, history, 1, 0).empty();
}

bool SweepFailed(const SweepSpec& spec, const std::vector<TrialRecord>& history) {
  return spec.max_failed_trial_count && CountTrials(history).failed > *spec.max_failed_trial_count;
}

SweepVerdict EvaluateSweep(const SweepSpec& spec, const std::vector<TrialRecord>& history) {
  const TrialCounts counts = CountTrials(history);
  if (GoalReached(spec, history)) {
    BestTrial best = *FindBestTrial(spec, history);
    return {SweepPhase::kSucceeded, "GoalReached",
            fmt::format("the best {} {} (trial {}) reached the goal {}", spec.objective.metric,
                        FormatDouble(best.value), history[best.index].name, FormatDouble(*spec.objective.goal))};
  }
  if (SweepFailed(spec, history)) {
    return {
        SweepPhase::kFailed, "MaxFailedTrialsReached",
        fmt::format("{} trials failed, more than maxFailedTrialCount {}", counts.failed, *spec.max_failed_trial_count)};
  }
  if (counts.running == 0 && spec.max_trial_count && counts.total() >= *spec.max_trial_count) {
    return {SweepPhase::kSucceeded, "MaxTrialsReached",
            fmt::format("all {} trials of maxTrialCount {} have ended", counts.total(), *spec.max_trial_count)};
  }
  if (counts.running == 0 && GridExhausted(spec, history)) {
    return {SweepPhase::kSucceeded, "GridExhausted",
            fmt::format("every point of the grid has been tried ({} trials)", counts.total())};
  }
  return {SweepPhase::kRunning, "Running", fmt::format("{} trials running", counts.running)};
}

bool SweepComplete(const SweepSpec& spec, const std::vector<TrialRecord>& history) {
  return EvaluateSweep(spec, history).phase == SweepPhase::kSucceeded;
}

int TrialsToCreate(const SweepSpec& spec, const std::vector<TrialRecord>& history) {
  if (EvaluateSweep(spec, history).phase != SweepPhase::kRunning) return 0;
  const TrialCounts counts = CountTrials(history);
  int n = spec.parallel_trial_count - counts.running;
  if (spec.max_trial_count) n = std::min(n, *spec.max_trial_count - counts.total());
  return std::max(n, 0);
}

}  // namespace tessera::sweep
