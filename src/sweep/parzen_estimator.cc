#include "sweep/parzen_estimator.h"

#include <algorithm>
#include <cmath>
#include <numbers>

#include "common/check.h"

namespace tessera::sweep {
namespace {

constexpr double kTiny = 1e-300;  // floor of densities and masses before a log

double NormalCdf(double z) { return 0.5 * std::erfc(-z / std::numbers::sqrt2); }

// Index of the first cumulative weight above u (u in [0, 1)).
size_t PickIndex(const std::vector<double>& cumulative, double u) {
  auto it = std::upper_bound(cumulative.begin(), cumulative.end(), u * cumulative.back());
  return std::min<size_t>(static_cast<size_t>(it - cumulative.begin()), cumulative.size() - 1);
}

}  // namespace

ParzenEstimator::ParzenEstimator(std::vector<double> observations, double lo, double hi, double prior_weight)
    : lo_(lo), hi_(hi) {
  TESSERA_CHECK(lo < hi && prior_weight > 0, "Parzen estimator over [{}, {}], prior weight {}", lo, hi, prior_weight);
  const double prior_mu = 0.5 * (lo + hi);
  const double prior_sigma = hi - lo;
  const size_t n = observations.size();

  // Centres sorted with the prior's among them (stable, so the prior's place
  // among equal points is fixed), then each sigma from its neighbours.
  struct Centre {
    double mu;
    bool prior;
  };
  std::vector<Centre> centres;
  for (double x : observations) centres.push_back({std::clamp(x, lo, hi), false});
  centres.push_back({prior_mu, true});
  std::stable_sort(centres.begin(), centres.end(), [](const Centre& a, const Centre& b) { return a.mu < b.mu; });

  const double max_sigma = prior_sigma;
  const double min_sigma = prior_sigma / std::min(100.0, 1.0 + static_cast<double>(n));
  double total_weight = 0;
  for (size_t i = 0; i < centres.size(); ++i) {
    double sigma = prior_sigma;
    if (!centres[i].prior && centres.size() > 1) {
      double left = i > 0 ? centres[i].mu - centres[i - 1].mu : 0;
      double right = i + 1 < centres.size() ? centres[i + 1].mu - centres[i].mu : 0;
      sigma = std::clamp(std::max(left, right), min_sigma, max_sigma);
    }
    double w = centres[i].prior ? prior_weight : 1.0;
    mus_.push_back(centres[i].mu);
    sigmas_.push_back(sigma);
    weights_.push_back(w);
    total_weight += w;
  }
  double running = 0;
  for (size_t i = 0; i < weights_.size(); ++i) {
    weights_[i] /= total_weight;
    running += weights_[i];
    cumulative_.push_back(running);
    // Truncation to [lo, hi]: divide by the component's mass there.
    double mass = NormalCdf((hi_ - mus_[i]) / sigmas_[i]) - NormalCdf((lo_ - mus_[i]) / sigmas_[i]);
    weights_[i] /= std::max(mass, kTiny);
  }
}

double ParzenEstimator::Sample(Rng& rng) const {
  size_t i = PickIndex(cumulative_, rng.Uniform());
  // Rejection keeps the truncated Gaussian exact; each try lands in [lo, hi]
  // with probability >= 0.3 (the centre is inside, sigma <= hi - lo), so the
  // bound is never reached in practice and only keeps the loop finite.
  for (int attempt = 0; attempt < 64; ++attempt) {
    double x = mus_[i] + sigmas_[i] * rng.Normal();
    if (x >= lo_ && x <= hi_) return x;
  }
  return mus_[i];
}

double ParzenEstimator::LogDensity(double x) const {
  // p(x) = sum_i w_i * phi((x - mu_i) / sigma_i) / sigma_i  (w_i already over the truncated mass)
  double p = 0;
  for (size_t i = 0; i < mus_.size(); ++i) {
    double z = (x - mus_[i]) / sigmas_[i];
    p += weights_[i] * std::exp(-0.5 * z * z) / (sigmas_[i] * std::sqrt(2.0 * std::numbers::pi));
  }
  return std::log(std::max(p, kTiny));
}

double ParzenEstimator::LogMass(double a, double b) const {
  a = std::max(a, lo_);
  b = std::min(b, hi_);
  // P([a, b]) = sum_i w_i * (Phi((b - mu_i) / sigma_i) - Phi((a - mu_i) / sigma_i))
  double p = 0;
  for (size_t i = 0; i < mus_.size(); ++i) {
    p += weights_[i] * (NormalCdf((b - mus_[i]) / sigmas_[i]) - NormalCdf((a - mus_[i]) / sigmas_[i]));
  }
  return std::log(std::max(p, kTiny));
}

CategoricalEstimator::CategoricalEstimator(size_t categories, const std::vector<size_t>& observations,
                                           double prior_weight)
    : p_(categories, prior_weight) {
  TESSERA_CHECK(categories > 0 && prior_weight > 0, "categorical estimator over {} categories", categories);
  for (size_t c : observations) {
    TESSERA_CHECK(c < categories, "category {} of {}", c, categories);
    p_[c] += 1;
  }
  double total = static_cast<double>(observations.size()) + static_cast<double>(categories) * prior_weight;
  for (double& p : p_) p /= total;
}

size_t CategoricalEstimator::Sample(Rng& rng) const {
  double u = rng.Uniform();
  double running = 0;
  for (size_t i = 0; i < p_.size(); ++i) {
    running += p_[i];
    if (u < running) return i;
  }
  return p_.size() - 1;
}

double CategoricalEstimator::LogProbability(size_t category) const { return std::log(std::max(p_[category], kTiny)); }

}  // namespace tessera::sweep
