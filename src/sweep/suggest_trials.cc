#include "sweep/suggest_trials.h"

#include <optional>
#include <set>
#include <string>

#include "sweep/rng.h"
#include "sweep/search_space.h"
#include "sweep/tpe.h"

namespace tessera::sweep {
namespace {

constexpr int kRedraws = 32;

std::vector<Assignment> Grid(const std::vector<ParameterSpec>& parameters, std::set<std::string>& seen, int count) {
  std::vector<Assignment> out;
  const uint64_t size = GridSize(parameters);
  // Each point skipped is in `seen`, so this visits at most seen + count points.
  for (uint64_t i = 0; i < size && out.size() < static_cast<size_t>(count); ++i) {
    Assignment a = GridPoint(parameters, i);
    if (seen.insert(a.Key()).second) out.push_back(std::move(a));
  }
  return out;
}

// The first unused grid point from a random index on, wrapping; none when
// every point is used. Scanning seen + 1 distinct points finds one if any is left.
std::optional<Assignment> NextUnused(const std::vector<ParameterSpec>& parameters, const std::set<std::string>& seen,
                                     Rng& rng) {
  const uint64_t size = GridSize(parameters);
  const uint64_t start = rng.Below(size);
  const uint64_t scan = std::min<uint64_t>(size, seen.size() + 1);
  for (uint64_t j = 0; j < scan; ++j) {
    uint64_t i = start + j < start ? start + j - size : (start + j) % size;  // no overflow near UINT64_MAX
    Assignment a = GridPoint(parameters, i);
    if (!seen.contains(a.Key())) return a;
  }
  return std::nullopt;
}

}  // namespace

std::vector<Assignment> SuggestTrials(const SweepSpec& spec, const std::vector<TrialRecord>& history, int count,
                                      uint64_t seed) {
  if (count <= 0) return {};
  std::set<std::string> seen;
  for (const TrialRecord& t : history) seen.insert(t.assignment.Key());
  if (spec.algorithm.name == SearchAlgorithm::kGrid) return Grid(spec.parameters, seen, count);

  Rng rng(Mix64(spec.algorithm.random_state.value_or(seed) ^ Mix64(history.size())));
  std::optional<TpeSampler> tpe;
  if (spec.algorithm.name == SearchAlgorithm::kTpe) {
    tpe.emplace(spec, history);
    if (!tpe->ready()) tpe.reset();
  }
  const bool finite = IsFiniteSpace(spec.parameters);
  auto draw = [&] { return tpe ? tpe->Sample(rng) : RandomAssignment(spec.parameters, rng); };

  std::vector<Assignment> out;
  while (out.size() < static_cast<size_t>(count)) {
    Assignment a = draw();
    for (int r = 0; r < kRedraws && seen.contains(a.Key()); ++r) a = draw();
    if (seen.contains(a.Key()) && finite) {
      std::optional<Assignment> unused = NextUnused(spec.parameters, seen, rng);
      if (!unused) break;  // the space is exhausted
      a = std::move(*unused);
    }
    // A continuous space repeating 33 times is a draw of probability ~0; take it.
    seen.insert(a.Key());
    out.push_back(std::move(a));
  }
  return out;
}

}  // namespace tessera::sweep
