// SuggestTrials: the assignments of the next trials of a sweep (Katib's
// suggestion service, as a pure function).
//
// Contract
// - Deterministic: the same spec, history, count and seed give the same
//   assignments. The seed is the caller's (the controller derives it from the
//   sweep, e.g. its uid) unless the spec's random_state setting replaces it;
//   it is mixed with the history's length so that successive calls draw anew.
// - Never repeats an assignment of the history or of the same answer while
//   the space has unused points; returns fewer than `count` when a finite
//   space (every parameter finite) has run out, and none for count <= 0.
// - Does not look at maxTrialCount or parallelism: how many to ask for is the
//   caller's (sweep/sweep_status.h, TrialsToCreate).
//
// Algorithms (search_space.h for the space's order and draws)
//   grid    the unused grid points in grid order.
//   random  independent draws; a draw that repeats is drawn again (32 times),
//           then, in a finite space, the next unused point in grid order
//           from a random index.
//   tpe     random until n_startup_trials trials have a value, then TPE
//           (sweep/tpe.h), with random's rule against repeats.
//
// REQUIRES: spec from ParseSweepSpec (its invariants hold).
// Thread-safety: pure functions.
#pragma once

#include <cstdint>
#include <vector>

#include "sweep/assignment.h"
#include "sweep/sweep_spec.h"
#include "sweep/trial_record.h"

namespace tessera::sweep {

std::vector<Assignment> SuggestTrials(const SweepSpec& spec, const std::vector<TrialRecord>& history, int count,
                                      uint64_t seed);

}  // namespace tessera::sweep
