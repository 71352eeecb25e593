#include "sweep/early_stopping.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <optional>

#include "sweep/number_text.h"

namespace tessera::sweep {
namespace {

constexpr int64_t kStepMax = int64_t{1} << 53;

// The objective series of a trial that has at least one point, or nullptr.
const MetricSeries* ObjectiveSeries(const SweepSpec& spec, const TrialRecord& t) {
  const MetricSeries* s = t.Series(spec.objective.metric);
  return s != nullptr && !s->empty() ? s : nullptr;
}

// ---- medianstop ------------------------------------------------------------------

std::optional<StopDecision> JudgeMedian(const SweepSpec& spec, const EarlyStoppingSpec& rule,
                                        const std::vector<TrialRecord>& history, size_t index) {
  const TrialRecord& trial = history[index];
  const MetricSeries* series = ObjectiveSeries(spec, trial);
  if (series == nullptr) return std::nullopt;
  const int64_t step = series->latest()->step;
  if (step < rule.start_step) return std::nullopt;
  const bool minimize = spec.objective.type == ObjectiveType::kMinimize;
  const double best = minimize ? series->min()->value : series->max()->value;

  std::vector<double> averages;
  for (size_t j = 0; j < history.size(); ++j) {
    if (j == index || history[j].state == TrialState::kFailed) continue;
    const MetricSeries* other = ObjectiveSeries(spec, history[j]);
    if (other == nullptr || other->latest()->step < step) continue;
    if (std::optional<double> avg = other->AverageUpTo(step)) averages.push_back(*avg);
  }
  if (averages.size() < static_cast<size_t>(rule.min_trials_required)) return std::nullopt;
  std::sort(averages.begin(), averages.end());
  const size_t n = averages.size();
  const double median = n % 2 == 1 ? averages[n / 2] : 0.5 * (averages[n / 2 - 1] + averages[n / 2]);
  if (!spec.objective.Better(median, best)) return std::nullopt;
  return StopDecision{
      trial.name,
      fmt::format("medianstop: best {} {} by step {} is worse than {}, the median of the running averages of {} "
                  "other trials up to that step",
                  spec.objective.metric, FormatDouble(best), step, FormatDouble(median), n)};
}

// ---- asha and hyperband --------------------------------------------------------

// Judges trial `index` by ASHA at rungs from `first`, against the trials
// `peers` (positions in history, `index` among them).
std::optional<StopDecision> JudgeAsha(const SweepSpec& spec, const EarlyStoppingSpec& rule,
                                      const std::vector<TrialRecord>& history, size_t index,
                                      const std::vector<size_t>& peers, int64_t first, std::string_view label) {
  const TrialRecord& trial = history[index];
  const MetricSeries* series = ObjectiveSeries(spec, trial);
  if (series == nullptr) return std::nullopt;
  const int64_t step = series->latest()->step;
  if (rule.max_resource && step >= *rule.max_resource) return std::nullopt;  // its full budget
  std::vector<int64_t> rungs = RungSteps(rule, first, step);
  while (!rungs.empty() && rungs.back() > step) rungs.pop_back();
  if (rungs.empty()) return std::nullopt;
  const int64_t rung = rungs.back();
  const double value = series->FirstAtOrAfter(rung)->value;

  size_t n = 0;
  size_t better = 0;
  for (size_t j : peers) {
    if (history[j].state == TrialState::kFailed && j != index) continue;
    const MetricSeries* other = ObjectiveSeries(spec, history[j]);
    if (other == nullptr || other->latest()->step < rung) continue;
    std::optional<MetricPoint> at = other->FirstAtOrAfter(rung);
    if (!at) continue;  // its points at the rung are no longer kept
    ++n;
    if (spec.objective.Better(at->value, value)) ++better;
  }
  if (n < static_cast<size_t>(rule.eta)) return std::nullopt;
  const size_t keep = n / static_cast<size_t>(rule.eta);
  if (better < keep) return std::nullopt;
  return StopDecision{
      trial.name, fmt::format("{}: {} {} at the rung of step {} ranks {} of the {} trials there; "
                              "the best {} (1/{}) continue",
                              label, spec.objective.metric, FormatDouble(value), rung, better + 1, n, keep, rule.eta)};
}

}  // namespace

std::vector<int64_t> RungSteps(const EarlyStoppingSpec& rule, int64_t first, int64_t up_to) {
  std::vector<int64_t> out;
  for (int64_t r = first; rule.max_resource ? r < *rule.max_resource : r <= up_to; r *= rule.eta) {
    out.push_back(r);
    if (r > kStepMax / rule.eta) break;
  }
  return out;
}

std::vector<size_t> HyperbandBrackets(const EarlyStoppingSpec& rule, size_t trials) {
  // s_max = floor(log_eta(max_resource / min_resource)), in integers.
  int s_max = 0;
  for (int64_t r = rule.min_resource; r <= *rule.max_resource / rule.eta; r *= rule.eta) ++s_max;
  // n_b = ceil((s_max + 1) / (s + 1) * eta^s), s = s_max - b: Hyperband's
  // configurations per bracket, as weights.
  std::vector<double> weight(static_cast<size_t>(s_max) + 1);
  double total = 0;
  for (int b = 0; b <= s_max; ++b) {
    int s = s_max - b;
    weight[static_cast<size_t>(b)] = std::ceil((s_max + 1) * std::pow(rule.eta, s) / (s + 1));
    total += weight[static_cast<size_t>(b)];
  }
  // Smooth weighted round-robin: each turn every bracket gains its weight, the
  // richest (the first on ties) is dealt the trial and pays the total.
  std::vector<double> current(weight.size(), 0);
  std::vector<size_t> out;
  for (size_t i = 0; i < trials; ++i) {
    size_t pick = 0;
    for (size_t b = 0; b < weight.size(); ++b) {
      current[b] += weight[b];
      if (current[b] > current[pick]) pick = b;
    }
    current[pick] -= total;
    out.push_back(pick);
  }
  return out;
}

std::vector<StopDecision> EarlyStopDecisions(const SweepSpec& spec, const std::vector<TrialRecord>& history) {
  std::vector<StopDecision> out;
  if (!spec.early_stopping) return out;
  const EarlyStoppingSpec& rule = *spec.early_stopping;

  std::vector<size_t> bracket(history.size(), 0);
  if (rule.name == EarlyStoppingAlgorithm::kHyperband) bracket = HyperbandBrackets(rule, history.size());
  std::vector<std::vector<size_t>> members;
  for (size_t i = 0; i < history.size(); ++i) {
    if (members.size() <= bracket[i]) members.resize(bracket[i] + 1);
    members[bracket[i]].push_back(i);
  }

  for (size_t i = 0; i < history.size(); ++i) {
    if (history[i].state != TrialState::kRunning) continue;
    std::optional<StopDecision> d;
    if (rule.name == EarlyStoppingAlgorithm::kMedianStop) {
      d = JudgeMedian(spec, rule, history, i);
    } else {
      int64_t first = rule.min_resource;
      for (size_t b = 0; b < bracket[i]; ++b) first *= rule.eta;
      std::string label = rule.name == EarlyStoppingAlgorithm::kAsha ? std::string("asha")
                                                                     : fmt::format("hyperband bracket {}", bracket[i]);
      d = JudgeAsha(spec, rule, history, i, members[bracket[i]], first, label);
    }
    if (d) out.push_back(std::move(*d));
  }
  return out;
}

std::vector<std::string> TrialsToStop(const SweepSpec& spec, const std::vector<TrialRecord>& history) {
  std::vector<std::string> out;
  for (StopDecision& d : EarlyStopDecisions(spec, history)) out.push_back(std::move(d.trial));
  return out;
}

}  // namespace tessera::sweep
