#include "sweep/search_space.h"

#include <cmath>
#include <limits>

#include "common/check.h"

namespace tessera::sweep {

bool IsFiniteSpace(const std::vector<ParameterSpec>& parameters) {
  for (const ParameterSpec& p : parameters) {
    if (!p.IsFinite()) return false;
  }
  return true;
}

uint64_t GridSize(const std::vector<ParameterSpec>& parameters) {
  constexpr uint64_t kMax = std::numeric_limits<uint64_t>::max();
  uint64_t size = 1;
  for (const ParameterSpec& p : parameters) {
    uint64_t n = p.Count();
    if (n != 0 && size > kMax / n) return kMax;
    size *= n;
  }
  return size;
}

Assignment GridPoint(const std::vector<ParameterSpec>& parameters, uint64_t index) {
  // Digits from the last parameter (fastest) to the first.
  std::vector<uint64_t> digits(parameters.size());
  for (size_t i = parameters.size(); i-- > 0;) {
    uint64_t n = parameters[i].Count();
    digits[i] = index % n;
    index /= n;
  }
  TESSERA_CHECK(index == 0, "grid index beyond the grid");
  Assignment out;
  for (size_t i = 0; i < parameters.size(); ++i) out.Add(parameters[i].At(digits[i]));
  return out;
}

ParameterValue RandomValue(const ParameterSpec& p, Rng& rng) {
  if (!p.IsRange()) return p.At(rng.Below(p.Count()));
  const bool log = p.distribution == Distribution::kLogUniform;
  if (p.type == ParameterType::kInt && !log) return p.At(rng.Below(p.Count()));
  if (p.type == ParameterType::kInt) {
    // Log-uniform on [min, max + step): each point k owns [x_k, x_k + step).
    double hi = p.max + *p.step;
    double x = std::exp(rng.Uniform(std::log(p.min), std::log(hi)));
    auto k = static_cast<uint64_t>(std::max(0.0, std::floor((x - p.min) / *p.step)));
    return p.At(std::min(k, p.Count() - 1));
  }
  double x = log ? std::exp(rng.Uniform(std::log(p.min), std::log(p.max))) : rng.Uniform(p.min, p.max);
  x = std::clamp(x, p.min, p.max);  // exp(log(x)) may round past a bound
  if (p.step) return p.At(p.NearestIndex(x));
  return p.RangeValue(x);
}

Assignment RandomAssignment(const std::vector<ParameterSpec>& parameters, Rng& rng) {
  Assignment out;
  for (const ParameterSpec& p : parameters) out.Add(RandomValue(p, rng));
  return out;
}

}  // namespace tessera::sweep
