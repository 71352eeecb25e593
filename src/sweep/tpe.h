// TpeSampler: the Tree-structured Parzen Estimator's suggestions (Bergstra et
// al., NIPS 2011), univariate as in hyperopt and Optuna.
//
// Assumptions
// - The trials it learns from are those with a CompletedObjective
//   (sweep/trial_objective.h): Succeeded and EarlyStopped. An early-stopped
//   trial's value is a partial run's, usually worse, so it mostly lands among
//   the bad ones, which is where the rule that stopped it put it.
// - Parameters are modelled independently (no joint density).
//
// Steps of a suggestion
// 1. Sort the n trials by objective, best first (ties: the earlier trial);
//    the first max(1, ceil(gamma * n)) are "good", the rest "bad".
// 2. Per parameter, fit l(x) on the good trials' values and g(x) on the bad
//    ones' (sweep/parzen_estimator.h): Gaussian mixtures over the value, or
//    its log for logUniform; over [x_0 - step/2, x_last + step/2] for int and
//    stepped doubles, scoring a point by its cell's mass; smoothed frequencies
//    for discrete and categorical.
// 3. Draw n_ei_candidates assignments from l, each parameter on its own.
// 4. Return the candidate with the largest sum over parameters of
//    log l(x) - log g(x) (expected improvement grows with l/g); ties: the
//    first drawn.
// Before n_startup_trials trials have a value, SuggestTrials draws at random
// instead (ready() says which).
//
// Thread-safety: immutable after construction; Sample takes the caller's Rng.
#pragma once

#include <memory>
#include <optional>
#include <vector>

#include "sweep/assignment.h"
#include "sweep/parzen_estimator.h"
#include "sweep/rng.h"
#include "sweep/sweep_spec.h"
#include "sweep/trial_record.h"

namespace tessera::sweep {

class TpeSampler {
 public:
  // REQUIRES: `spec` outlives the sampler.
  TpeSampler(const SweepSpec& spec, const std::vector<TrialRecord>& history);

  // Enough trials have a value: at least max(1, n_startup_trials).
  bool ready() const { return ready_; }
  size_t observed() const { return observed_; }

  // Steps 3 and 4. REQUIRES: ready().
  Assignment Sample(Rng& rng) const;

 private:
  // One parameter's two densities, in its internal space.
  struct Model {
    const ParameterSpec* parameter = nullptr;
    bool log = false;                     // the internal space is log(x)
    std::optional<ParzenEstimator> good;  // numeric
    std::optional<ParzenEstimator> bad;
    std::optional<CategoricalEstimator> good_list;  // discrete, categorical
    std::optional<CategoricalEstimator> bad_list;
  };
  struct Draw {
    ParameterValue value;
    double score = 0;  // log l - log g
  };

  Model Fit(const ParameterSpec& p, const std::vector<const TrialRecord*>& good,
            const std::vector<const TrialRecord*>& bad) const;
  Draw DrawFrom(const Model& m, Rng& rng) const;

  const SweepSpec& spec_;
  bool ready_ = false;
  size_t observed_ = 0;
  std::vector<Model> models_;
};

}  // namespace tessera::sweep
