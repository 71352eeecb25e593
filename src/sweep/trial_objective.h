// A trial's objective value: its series of the objective metric folded by the
// objective's strategy (Katib's metricStrategies: min, max or latest; min for
// minimize and max for maximize unless the spec says otherwise).
//
// Thread-safety: pure functions.
#pragma once

#include <optional>

#include "sweep/observations.h"
#include "sweep/sweep_spec.h"
#include "sweep/trial_record.h"

namespace tessera::sweep {

// The series folded by `strategy`; none for an empty series.
std::optional<double> StrategyValue(const MetricSeries& series, MetricStrategy strategy);

// The trial's objective value, in any state; none when it reported no value
// of the objective metric.
std::optional<double> TrialObjective(const Objective& objective, const TrialRecord& trial);

// The value the search learns from: TrialObjective of a trial that ended
// with its metrics whole (Succeeded or EarlyStopped, as Katib counts them);
// none for running and failed trials.
std::optional<double> CompletedObjective(const Objective& objective, const TrialRecord& trial);

}  // namespace tessera::sweep
