// Parzen estimators of TPE (Bergstra et al., "Algorithms for Hyper-Parameter
// Optimization", NIPS 2011; hyperopt's adaptive Parzen estimator).
//
// ParzenEstimator: a density on [lo, hi] (a parameter's value, or its log for
// logUniform) from observed points:
//   - one Gaussian per observation, centred on it, plus a prior Gaussian at
//     the middle of [lo, hi] with sigma = hi - lo, weighted prior_weight
//     against 1 for each observation;
//   - the sigma of a point is the larger distance to its neighbours among the
//     sorted centres (the prior's centre included), clipped to
//     [(hi - lo) / min(100, 1 + n), hi - lo]: wide where points are sparse,
//     narrow where they crowd;
//   - each Gaussian is truncated to [lo, hi] (divided by its mass there).
// CategoricalEstimator: smoothed frequencies, p_j = (count_j + prior_weight) /
// (n + C * prior_weight).
//
// Thread-safety: immutable after construction; sampling takes the caller's Rng.
#pragma once

#include <cstddef>
#include <vector>

#include "sweep/rng.h"

namespace tessera::sweep {

class ParzenEstimator {
 public:
  // REQUIRES: lo < hi, prior_weight > 0, every observation in [lo, hi].
  ParzenEstimator(std::vector<double> observations, double lo, double hi, double prior_weight);

  // A draw from the mixture, in [lo, hi].
  double Sample(Rng& rng) const;
  // log p(x), for x in [lo, hi].
  double LogDensity(double x) const;
  // log of the probability of [a, b] (a quantised value's cell). REQUIRES: a < b.
  double LogMass(double a, double b) const;

  size_t components() const { return mus_.size(); }

 private:
  double lo_;
  double hi_;
  std::vector<double> mus_;
  std::vector<double> sigmas_;
  std::vector<double> weights_;     // normalised, each divided by its component's mass in [lo, hi]
  std::vector<double> cumulative_;  // of the plain normalised weights, for sampling
};

class CategoricalEstimator {
 public:
  // REQUIRES: categories > 0, every observation < categories, prior_weight > 0.
  CategoricalEstimator(size_t categories, const std::vector<size_t>& observations, double prior_weight);

  size_t Sample(Rng& rng) const;
  double LogProbability(size_t category) const;

 private:
  std::vector<double> p_;
};

}  // namespace tessera::sweep
