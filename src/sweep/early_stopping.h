// Early stopping: which running trials of a sweep to stop now, and why.
//
// Rules (the objective metric's series, steps as reported; sweep/observations.h)
//
// medianstop (Katib's median stopping rule; Golovin et al., Vizier, 2017)
//   A running trial T whose latest step s >= start_step is stopped when its
//   best value so far is worse than the median of the other trials' running
//   averages up to step s, once at least min_trials_required other trials
//   have reached step s. "The other trials": every other trial except failed
//   ones (running ones too, so a parallel sweep need not wait for trials to
//   finish); "reached s": its latest step is >= s; its running average: the
//   mean of its values at steps <= s. Worse is strictly worse in the
//   objective's direction.
//
// asha (asynchronous successive halving; Li et al., MLSys 2020)
//   Rungs at min_resource * eta^k steps (k = 0, 1, ...), below max_resource
//   when set (a trial at max_resource has had its full budget). A running
//   trial is judged at the highest rung its latest step has reached: among
//   all trials but failed ones that reached that rung (T included), each
//   with its value at the rung (its first point at or after the rung's step),
//   T continues if fewer than eta trials are there, or if it is among the best
//   floor(n / eta) of the n (ties continue: a trial is stopped only if
//   floor(n / eta) trials are strictly better). As more trials reach the rung
//   the cut can fall on a trial that passed it earlier, while it runs towards
//   the next rung; this pure form of ASHA has no memory of past promotions.
//
// hyperband (Li et al., JMLR 2018, run as ASHA over brackets, as Ray's
//   AsyncHyperBand)
//   s_max = floor(log_eta(max_resource / min_resource)); bracket b = 0..s_max
//   has its first rung at min_resource * eta^b, so bracket 0 stops hardest
//   and bracket s_max (first rung at or near max_resource) barely. Trials are
//   dealt to brackets in creation order by smooth weighted round-robin, each
//   bracket weighted by Hyperband's number of configurations,
//   n_b = ceil((s_max + 1) / (s + 1) * eta^s) with s = s_max - b, and judged
//   by ASHA against the trials of their own bracket only.
//
// Every rule is pure: the same history gives the same answer, and a trial
// without a value of the objective metric is never stopped.
//
// Thread-safety: pure functions.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "sweep/sweep_spec.h"
#include "sweep/trial_record.h"

namespace tessera::sweep {

struct StopDecision {
  std::string trial;   // the trial's name
  std::string reason;  // for its condition: "best loss 0.52 at step 6 is worse than the median 0.41 of 4 trials"
};

// The running trials to stop, in history order; none without earlyStopping.
std::vector<StopDecision> EarlyStopDecisions(const SweepSpec& spec, const std::vector<TrialRecord>& history);

// The names of EarlyStopDecisions.
std::vector<std::string> TrialsToStop(const SweepSpec& spec, const std::vector<TrialRecord>& history);

// The rung steps below max_resource (or up to `up_to` without one) of the
// rung ladder starting at `first`. Exposed for tests and for describe.
std::vector<int64_t> RungSteps(const EarlyStoppingSpec& rule, int64_t first, int64_t up_to);

// Hyperband's bracket of each trial of `history` (by position). REQUIRES:
// rule.max_resource.
std::vector<size_t> HyperbandBrackets(const EarlyStoppingSpec& rule, size_t trials);

}  // namespace tessera::sweep
