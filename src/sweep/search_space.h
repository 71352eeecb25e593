// The search space of a sweep's parameters as a whole: its grid (when every
// parameter is finite) and uniform draws from it. Shared by the grid, random
// and TPE suggesters.
//
// Grid order: mixed radix over the parameters in the spec's order, the last
// parameter varying fastest (as itertools.product), each parameter's values
// ascending (lists as written). Index 0 is every parameter's first value.
//
// Random draws (Katib's random, hyperopt's spaces):
//   double            uniform on [min, max), or log-uniform for logUniform;
//   double with step  the same, then the nearest grid point;
//   int               uniform over its points, or log-uniform on
//                     [min, max + step) floored to a point for logUniform;
//   discrete, categorical  uniform over the list.
//
// Thread-safety: pure functions (the Rng is the caller's).
#pragma once

#include <cstdint>
#include <vector>

#include "sweep/assignment.h"
#include "sweep/parameter_spec.h"
#include "sweep/rng.h"

namespace tessera::sweep {

// Every parameter is finite.
bool IsFiniteSpace(const std::vector<ParameterSpec>& parameters);

// The number of grid points, saturating at UINT64_MAX. REQUIRES: IsFiniteSpace.
uint64_t GridSize(const std::vector<ParameterSpec>& parameters);

// The grid point at `index`. REQUIRES: IsFiniteSpace and index < GridSize.
Assignment GridPoint(const std::vector<ParameterSpec>& parameters, uint64_t index);

ParameterValue RandomValue(const ParameterSpec& parameter, Rng& rng);
Assignment RandomAssignment(const std::vector<ParameterSpec>& parameters, Rng& rng);

}  // namespace tessera::sweep
