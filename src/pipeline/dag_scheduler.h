// The scheduler of a PipelineRun's DAG: from what is known of each node and the
// time, what to do now. Like Argo's DAG semantics:
// - a node starts once all of its deps are done (Succeeded, Cached or Skipped)
//   and its when-condition, if any, is true; a false one makes it Skipped, and
//   its dependents still run (a skipped dependency counts as done);
// - an upstream node that failed for good (or was omitted) makes it Omitted;
//   independent branches keep running;
// - a failed node with attempts left is retried once its back-off
//   (RetryPolicy::DelayAfter, counted from its finished_at) has elapsed.
// The run is Succeeded when every node is Succeeded, Cached or Skipped; Failed
// when a node failed with no attempts left and nothing else can run; else
// Running.
//
// Contract
// - Next is pure and deterministic: every list is in the DAG's topological
//   order. It applies its own decisions as it goes (a node it skips lets its
//   dependents start in the same call), so one call gives everything that can
//   happen at `now`.
// - The caller applies the decision: start and retry -> Running with one more
//   attempt (first, for a node whose step caches, it may find the node's
//   CacheKey in its cache and record it Cached instead, then call Next again);
//   skip -> Skipped, omit -> Omitted, fail -> Failed and permanent, each with
//   its reason as the message. It calls Next again when a node finishes, and at
//   next_retry_at.
// - A when-condition that cannot be evaluated (a value neither true nor false)
//   fails its node for good: `fail`, with the reason.
//
// Thread-safety: pure function.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "common/time.h"
#include "pipeline/dag.h"
#include "pipeline/node_state.h"

namespace tessera::pipeline {

enum class RunPhase { kRunning, kSucceeded, kFailed };

// "Running", "Succeeded", "Failed".
std::string_view RunPhaseName(RunPhase phase);

// A node and why it was marked.
struct NodeMark {
  std::string node;
  std::string reason;

  friend bool operator==(const NodeMark&, const NodeMark&) = default;
};

struct Decision {
  std::vector<std::string> start;  // first attempt now
  std::vector<std::string> retry;  // another attempt now: failed, attempts left, back-off over
  std::vector<NodeMark> skip;      // its when-condition is false
  std::vector<NodeMark> omit;      // an upstream node failed for good or was omitted
  std::vector<NodeMark> fail;      // its when-condition could not be evaluated
  // The earliest back-off still running; Never when no retry waits.
  Timestamp next_retry_at = Timestamp::Never();
  RunPhase phase = RunPhase::kRunning;
  std::string message;  // Failed: which node failed and why
};

// Whether a Failed node will be retried (attempts left, not permanent).
bool WillRetry(const DagNode& node, const NodeStatus& status);

Decision Next(const Dag& dag, const NodeStates& states, const NodeResults& results, Timestamp now);

}  // namespace tessera::pipeline
