// SweepSpec: a Sweep's spec (tessera.dev/v1), typed, with Katib's field names
// (its Experiment) so that Katib users can write what they know:
//
//   spec:
//     objective: {type: minimize|maximize, goal: 0.05, objectiveMetricName: loss,
//                 additionalMetricNames: [acc], metricStrategies: [{name: loss, value: min|max|latest}]}
//     algorithm: {algorithmName: grid|random|tpe, algorithmSettings: [{name: random_state, value: "7"}]}
//     earlyStopping: {algorithmName: medianstop|asha|hyperband, algorithmSettings: [...]}
//     parallelTrialCount: 4, maxTrialCount: 30, maxFailedTrialCount: 3
//     parameters: [{name: lr, parameterType: double, feasibleSpace: {min: "0.0001", max: "0.1",
//                                                                  distribution: logUniform}}, ...]
//     trialTemplate: {...}
//
// `parallelTrials`, `maxTrials` and `maxFailedTrials` (issue 20's names) are
// aliases of the three counts; a spec may use one spelling of each, not both.
//
// Defaults: parallelTrialCount 3 (Katib's); maxTrialCount none, which only grid
// allows (a grid ends by itself); maxFailedTrialCount none (failures never fail
// the sweep); the objective's strategy min for minimize and max for maximize,
// additional metrics latest (Katib's); settings as each struct below says.
//
// What is checked, each error an InvalidArgument naming the field by its path
// ("spec.parameters[1].feasibleSpace.min: ...") and saying what to write:
// unknown algorithm names and setting names (with a did-you-mean), setting
// values, unknown fields inside objective, algorithm, earlyStopping, a
// parameter and its feasibleSpace (with a did-you-mean), parameter names
// (unique; letters, digits, '_', '-', '.', so that `${params.NAME}` can name
// them), bounds (numbers; min < max; integers for int; min > 0 for
// logUniform), steps (> 0), lists (non-empty, no duplicates, numbers for
// discrete), grid only over finite spaces (Katib's rule: int, discrete,
// categorical, or double with step), counts (maxTrialCount >= 1,
// parallelTrialCount >= 1, maxFailedTrialCount >= 0; each at most
// 1,000,000), and the template's `${params.NAME}` and
// `${trialParameters.NAME}` references (sweep/substitute.h), with Katib's
// `trialTemplate.trialParameters` ([{name, reference, description}]: each
// reference a parameter, names unique) when the template has it. The template
// is otherwise opaque (a pod template or a Job spec). Other fields of `spec`
// (a queue name, the controller's own) are not this parser's business and are
// left alone; the kind's schema refuses what it does not know.
//
// Values may be written as strings (Katib) or as JSON numbers (YAML users
// write `min: 0.0001`); both are read exactly.
//
// Thread-safety: value types and pure functions.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "common/result.h"
#include "sweep/assignment.h"
#include "sweep/parameter_spec.h"

namespace tessera::sweep {

enum class ObjectiveType { kMinimize, kMaximize };

// How a trial's series of a metric becomes one value (Katib's metricStrategies).
enum class MetricStrategy { kMin, kMax, kLatest };

struct Objective {
  ObjectiveType type = ObjectiveType::kMinimize;
  std::string metric;          // objectiveMetricName
  std::optional<double> goal;  // reached when the best value is <= (minimize) or >= (maximize) it
  std::vector<std::string> additional_metrics;
  std::map<std::string, MetricStrategy> strategies;  // every metric above has one (defaults filled in)

  // `a` is strictly better than `b` in the objective's direction.
  bool Better(double a, double b) const { return type == ObjectiveType::kMinimize ? a < b : a > b; }
  MetricStrategy ObjectiveStrategy() const;
};

enum class SearchAlgorithm { kGrid, kRandom, kTpe };
std::string_view SearchAlgorithmName(SearchAlgorithm algorithm);

// TPE's settings (Optuna's names; Katib's hyperopt spellings n_EI_candidates
// and n_startup_jobs are accepted too).
struct TpeSettings {
  int n_startup_trials = 5;   // random until this many trials have an objective value
  int n_ei_candidates = 24;   // candidates drawn from l(x) per suggestion
  double gamma = 0.25;        // fraction of the trials that are "good", in (0, 1)
  double prior_weight = 1.0;  // weight of the prior in each Parzen estimator, > 0
};

struct AlgorithmSpec {
  SearchAlgorithm name = SearchAlgorithm::kRandom;
  std::optional<uint64_t> random_state;  // random and tpe: replaces the caller's seed
  TpeSettings tpe;
};

enum class EarlyStoppingAlgorithm { kMedianStop, kAsha, kHyperband };
std::string_view EarlyStoppingAlgorithmName(EarlyStoppingAlgorithm algorithm);

// Settings of all three rules; each rule reads its own and refuses the others'.
// Steps are the `step=` of the metric lines (the resource ASHA allots).
struct EarlyStoppingSpec {
  EarlyStoppingAlgorithm name = EarlyStoppingAlgorithm::kMedianStop;
  // medianstop (Katib's defaults).
  int min_trials_required = 3;
  int64_t start_step = 4;
  // asha and hyperband.
  int eta = 3;                          // >= 2
  int64_t min_resource = 1;             // >= 1
  std::optional<int64_t> max_resource;  // > min_resource; required by hyperband; asha: rungs without end
};

struct SweepSpec {
  Objective objective;
  AlgorithmSpec algorithm;
  std::optional<EarlyStoppingSpec> early_stopping;
  int parallel_trial_count = 3;
  std::optional<int> max_trial_count;         // none: grid only, until the grid is exhausted
  std::optional<int> max_failed_trial_count;  // none: no limit
  std::vector<ParameterSpec> parameters;      // non-empty, unique names
  nlohmann::json trial_template;              // as written; null when absent
  // Katib's trialTemplate.trialParameters ([{name, reference}]) as a map from
  // name to the parameter it references, for `${trialParameters.NAME}`.
  std::map<std::string, std::string> trial_parameters;

  const ParameterSpec* FindParameter(std::string_view name) const;
};

// The typed spec of a Sweep's `spec` (the object under the manifest's "spec"
// key); errors name fields under `path`.
Result<SweepSpec> ParseSweepSpec(const nlohmann::json& spec, std::string_view path = "spec");

// A stored assignment (Katib's [{name, value}]) read back and checked against
// the spec: every parameter once, each value in its space. Values are in the
// spec's order whatever the order written.
Result<Assignment> ParseAssignment(const SweepSpec& spec, const nlohmann::json& list, std::string_view path);

// The trial's manifest: the spec's template with the assignment substituted
// (sweep/substitute.h, with the spec's trialParameters and error paths under
// `path`.trialTemplate).
Result<nlohmann::json> RenderTrial(const SweepSpec& spec, const Assignment& assignment, std::string_view path = "spec");

}  // namespace tessera::sweep
