#include "sweep/trial_objective.h"

namespace tessera::sweep {

std::optional<double> StrategyValue(const MetricSeries& series, MetricStrategy strategy) {
  switch (strategy) {
    case MetricStrategy::kMin:
      if (series.min()) return series.min()->value;
      return std::nullopt;
    case MetricStrategy::kMax:
      if (series.max()) return series.max()->value;
      return std::nullopt;
    case MetricStrategy::kLatest:
      if (series.latest()) return series.latest()->value;
      return std::nullopt;
  }
  return std::nullopt;
}

std::optional<double> TrialObjective(const Objective& objective, const TrialRecord& trial) {
  const MetricSeries* series = trial.Series(objective.metric);
  if (series == nullptr) return std::nullopt;
  return StrategyValue(*series, objective.ObjectiveStrategy());
}

std::optional<double> CompletedObjective(const Objective& objective, const TrialRecord& trial) {
  if (trial.state != TrialState::kSucceeded && trial.state != TrialState::kEarlyStopped) return std::nullopt;
  return TrialObjective(objective, trial);
}

}  // namespace tessera::sweep
