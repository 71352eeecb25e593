#include "sweep/tpe.h"

#include <algorithm>
#include <cmath>

#include "common/check.h"
#include "sweep/trial_objective.h"

namespace tessera::sweep {
namespace {

// Internal space of a numeric parameter: x, or log x for logUniform.
double ToSpace(double x, bool log) { return log ? std::log(x) : x; }
double FromSpace(double u, bool log) { return log ? std::exp(u) : u; }

// The cell of a finite range's point x: [x - step/2, x + step/2], kept above 0
// in log space (the first point of a log range owns [x/2, x + step/2] at most).
std::pair<double, double> Cell(const ParameterSpec& p, double x, bool log) {
  double a = x - *p.step / 2;
  double b = x + *p.step / 2;
  if (log) a = std::max(a, x / 2);
  return {ToSpace(a, log), ToSpace(b, log)};
}

// The index in a list parameter's list of a trial's value, or none.
std::optional<size_t> ListIndex(const ParameterSpec& p, const ParameterValue& v) {
  for (size_t i = 0; i < p.list.size(); ++i) {
    if (p.type == ParameterType::kDiscrete ? (v.number && p.list_numbers[i] == *v.number) : p.list[i] == v.text) {
      return i;
    }
  }
  return std::nullopt;
}

}  // namespace

TpeSampler::TpeSampler(const SweepSpec& spec, const std::vector<TrialRecord>& history) : spec_(spec) {
  // Step 1: the trials with a value, best first, ties to the earlier.
  struct Scored {
    const TrialRecord* trial;
    double value;
  };
  std::vector<Scored> scored;
  for (const TrialRecord& t : history) {
    if (std::optional<double> v = CompletedObjective(spec.objective, t)) scored.push_back({&t, *v});
  }
  observed_ = scored.size();
  ready_ = observed_ >= static_cast<size_t>(std::max(1, spec.algorithm.tpe.n_startup_trials));
  if (!ready_) return;
  std::stable_sort(scored.begin(), scored.end(),
                   [&](const Scored& a, const Scored& b) { return spec.objective.Better(a.value, b.value); });
  auto n_good = static_cast<size_t>(std::ceil(spec.algorithm.tpe.gamma * static_cast<double>(scored.size())));
  n_good = std::clamp<size_t>(n_good, 1, scored.size());
  std::vector<const TrialRecord*> good;
  std::vector<const TrialRecord*> bad;
  for (size_t i = 0; i < scored.size(); ++i) (i < n_good ? good : bad).push_back(scored[i].trial);

  // Step 2.
  for (const ParameterSpec& p : spec.parameters) models_.push_back(Fit(p, good, bad));
}

TpeSampler::Model TpeSampler::Fit(const ParameterSpec& p, const std::vector<const TrialRecord*>& good,
                                  const std::vector<const TrialRecord*>& bad) const {
  Model m;
  m.parameter = &p;
  const double prior_weight = spec_.algorithm.tpe.prior_weight;
  if (!p.IsRange()) {
    auto indices = [&](const std::vector<const TrialRecord*>& trials) {
      std::vector<size_t> out;
      for (const TrialRecord* t : trials) {
        const ParameterValue* v = t->assignment.Find(p.name);
        if (v == nullptr) continue;  // a trial of an older spec
        if (std::optional<size_t> i = ListIndex(p, *v)) out.push_back(*i);
      }
      return out;
    };
    m.good_list.emplace(p.list.size(), indices(good), prior_weight);
    m.bad_list.emplace(p.list.size(), indices(bad), prior_weight);
    return m;
  }
  m.log = p.distribution == Distribution::kLogUniform;
  double lo = ToSpace(p.min, m.log);
  double hi = ToSpace(p.max, m.log);
  if (p.IsFinite()) {
    lo = Cell(p, p.At(0).number.value_or(p.min), m.log).first;
    hi = Cell(p, p.At(p.Count() - 1).number.value_or(p.max), m.log).second;
  }
  auto points = [&](const std::vector<const TrialRecord*>& trials) {
    std::vector<double> out;
    for (const TrialRecord* t : trials) {
      const ParameterValue* v = t->assignment.Find(p.name);
      if (v == nullptr || !v->number || *v->number < p.min || *v->number > p.max) continue;
      out.push_back(ToSpace(*v->number, m.log));
    }
    return out;
  };
  m.good.emplace(points(good), lo, hi, prior_weight);
  m.bad.emplace(points(bad), lo, hi, prior_weight);
  return m;
}

TpeSampler::Draw TpeSampler::DrawFrom(const Model& m, Rng& rng) const {
  const ParameterSpec& p = *m.parameter;
  if (!p.IsRange()) {
    size_t i = m.good_list->Sample(rng);
    return {p.At(i), m.good_list->LogProbability(i) - m.bad_list->LogProbability(i)};
  }
  double u = m.good->Sample(rng);
  double x = FromSpace(u, m.log);
  if (!p.IsFinite()) {
    ParameterValue v = p.RangeValue(std::clamp(x, p.min, p.max));
    double at = ToSpace(*v.number, m.log);
    return {std::move(v), m.good->LogDensity(at) - m.bad->LogDensity(at)};
  }
  ParameterValue v = p.At(p.NearestIndex(x));
  auto [a, b] = Cell(p, *v.number, m.log);
  return {std::move(v), m.good->LogMass(a, b) - m.bad->LogMass(a, b)};
}

Assignment TpeSampler::Sample(Rng& rng) const {
  TESSERA_CHECK(ready_, "TPE sampled before it has {} trials", spec_.algorithm.tpe.n_startup_trials);
  // Steps 3 and 4.
  std::optional<Assignment> best;
  double best_score = -INFINITY;
  for (int c = 0; c < spec_.algorithm.tpe.n_ei_candidates; ++c) {
    Assignment candidate;
    double score = 0;
    for (const Model& m : models_) {
      Draw d = DrawFrom(m, rng);
      score += d.score;
      candidate.Add(std::move(d.value));
    }
    if (!best || score > best_score) {
      best = std::move(candidate);
      best_score = score;
    }
  }
  return *best;
}

}  // namespace tessera::sweep
