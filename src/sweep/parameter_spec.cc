#include "sweep/parameter_spec.h"

#include <fmt/format.h>

#include <cmath>
#include <limits>

#include "common/check.h"
#include "sweep/number_text.h"

namespace tessera::sweep {

std::string_view ParameterTypeName(ParameterType type) {
  switch (type) {
    case ParameterType::kDouble:
      return "double";
    case ParameterType::kInt:
      return "int";
    case ParameterType::kDiscrete:
      return "discrete";
    case ParameterType::kCategorical:
      return "categorical";
  }
  return "unknown";
}

uint64_t ParameterSpec::Count() const {
  TESSERA_CHECK(IsFinite(), "Count of the continuous parameter {}", name);
  if (!IsRange()) return list.size();
  // Points min + k*step <= max. The 1e-9 absorbs the rounding of a quotient
  // that should be whole: (1 - 0) / 0.1 is 9.999999999999998.
  double intervals = std::floor((max - min) / *step + 1e-9);
  if (intervals >= static_cast<double>(std::numeric_limits<uint64_t>::max() - 1)) {
    return std::numeric_limits<uint64_t>::max();
  }
  return static_cast<uint64_t>(intervals) + 1;
}

ParameterValue ParameterSpec::RangeValue(double x) const {
  TESSERA_CHECK(IsRange(), "RangeValue of the list parameter {}", name);
  if (type == ParameterType::kInt) {
    // |x| <= 2^53 (an invariant of int bounds): exact as int64.
    auto i = static_cast<int64_t>(std::llround(x));
    return {name, fmt::format("{}", i), static_cast<double>(i)};
  }
  if (step.has_value()) x = RoundToDecimalPlaces(x, decimal_places);
  return {name, FormatDouble(x), x};
}

ParameterValue ParameterSpec::At(uint64_t k) const {
  TESSERA_CHECK(IsFinite() && k < Count(), "value {} of parameter {}", k, name);
  if (!IsRange()) {
    std::optional<double> number;
    if (type == ParameterType::kDiscrete) number = list_numbers[k];
    return {name, list[k], number};
  }
  double x = std::min(max, min + static_cast<double>(k) * *step);
  return RangeValue(x);
}

uint64_t ParameterSpec::NearestIndex(double x) const {
  TESSERA_CHECK(IsRange() && IsFinite(), "NearestIndex of parameter {}", name);
  double k = std::round((x - min) / *step);
  if (k <= 0) return 0;
  uint64_t last = Count() - 1;
  if (k >= static_cast<double>(last)) return last;
  return static_cast<uint64_t>(k);
}

Result<ParameterValue> ParameterSpec::ValueOf(std::string_view text, std::string_view path) const {
  switch (type) {
    case ParameterType::kDouble: {
      std::optional<double> x = ParseDouble(text);
      if (!x) return Err(Status::InvalidArgument(fmt::format("{}: \"{}\" is not a number", path, text)));
      if (*x < min || *x > max) {
        return Err(
            Status::InvalidArgument(fmt::format("{}: {} is outside the feasible space [{}, {}] of parameter \"{}\"",
                                                path, text, FormatDouble(min), FormatDouble(max), name)));
      }
      return ParameterValue{name, std::string(text), *x};
    }
    case ParameterType::kInt: {
      std::optional<int64_t> i = ParseInt64(text);
      if (!i) return Err(Status::InvalidArgument(fmt::format("{}: \"{}\" is not an integer", path, text)));
      auto x = static_cast<double>(*i);
      if (x < min || x > max) {
        return Err(
            Status::InvalidArgument(fmt::format("{}: {} is outside the feasible space [{}, {}] of parameter \"{}\"",
                                                path, text, RangeValue(min).text, RangeValue(max).text, name)));
      }
      return ParameterValue{name, std::string(text), x};
    }
    case ParameterType::kDiscrete: {
      std::optional<double> x = ParseDouble(text);
      for (size_t i = 0; x.has_value() && i < list.size(); ++i) {
        if (list_numbers[i] == *x) return ParameterValue{name, list[i], list_numbers[i]};
      }
      break;
    }
    case ParameterType::kCategorical: {
      for (const std::string& entry : list) {
        if (entry == text) return ParameterValue{name, entry, std::nullopt};
      }
      break;
    }
  }
  return Err(Status::InvalidArgument(
      fmt::format("{}: \"{}\" is not in the list of parameter \"{}\" ({})", path, text, name, fmt::join(list, ", "))));
}

}  // namespace tessera::sweep
