// ParameterSpec: one searched parameter of a sweep (Katib's ParameterSpec),
// and the space of values it can take.
//
// The four types, as Katib has them:
//   double       a range [min, max]; continuous, or the points min, min+step,
//                ... <= max when `step` is set;
//   int          the integers min, min+step, ... <= max (step 1 by default);
//   discrete     a list of numbers ("16", "32", "64");
//   categorical  a list of strings ("sgd", "adam").
// `distribution: logUniform` (double and int only, min > 0) samples the range
// uniformly in log space; `uniform` is the default.
//
// Finite spaces (everything but a double without step) are indexed 0..Count()-1
// in ascending order (lists in the order written), which is the grid's order.
//
// Invariants (ParseSweepSpec establishes them): min < max; step > 0; int bounds
// and steps are integers of magnitude at most 2^53 (exact in a double); lists
// are non-empty without duplicates; discrete entries parse as numbers;
// logUniform only with min > 0.
//
// Thread-safety: value types.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/result.h"
#include "sweep/assignment.h"

namespace tessera::sweep {

enum class ParameterType { kDouble, kInt, kDiscrete, kCategorical };
enum class Distribution { kUniform, kLogUniform };

// "double", "int", "discrete", "categorical" (Katib's spelling).
std::string_view ParameterTypeName(ParameterType type);

struct ParameterSpec {
  std::string name;
  ParameterType type = ParameterType::kDouble;

  // double and int.
  double min = 0;
  double max = 0;
  std::optional<double> step;  // int: always set
  Distribution distribution = Distribution::kUniform;
  int decimal_places = 0;  // of min and step as written: grid points of a stepped double are rounded to it

  // discrete and categorical: the entries as written.
  std::vector<std::string> list;
  std::vector<double> list_numbers;  // discrete only: list[i] parsed

  bool IsRange() const { return type == ParameterType::kDouble || type == ParameterType::kInt; }
  bool IsFinite() const { return type != ParameterType::kDouble || step.has_value(); }

  // How many values a finite space has (saturating at UINT64_MAX).
  // REQUIRES: IsFinite().
  uint64_t Count() const;

  // The k-th value in ascending order. REQUIRES: IsFinite() and k < Count().
  ParameterValue At(uint64_t k) const;

  // A range's value x, formatted: an int's as an integer; a stepped double's
  // rounded to the decimal places of its bounds. REQUIRES: IsRange().
  ParameterValue RangeValue(double x) const;

  // The index of the finite value nearest to x. REQUIRES: IsRange() and IsFinite().
  uint64_t NearestIndex(double x) const;

  // A value's text (a stored assignment's) checked against the space: the
  // value, or InvalidArgument "PATH: ..." saying why it does not belong.
  // Ranges check the bounds only (a value off a stepped grid is accepted: a
  // trial created by hand may hold one); lists need an entry (discrete ones
  // compare as numbers, "16.0" is "16", and give the entry's text).
  Result<ParameterValue> ValueOf(std::string_view text, std::string_view path) const;
};

}  // namespace tessera::sweep
