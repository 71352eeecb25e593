// What is known of a PipelineRun's nodes while it runs: each node's state,
// attempts and last finish, and the results the finished ones wrote. The
// controller keeps these in the run's status; the pure functions of this
// library (Next, FinalTemplate, RenderDag, ResumeStates) read and produce them.
//
// Contract
// - A node absent from NodeStates is Pending with no attempts.
// - `attempts` counts the attempts started in this run; a node carried over
//   from a previous run (ResumeStates) has none, and says where it came from.
// - A Failed node is retried while attempts < its step's max_attempts() and it
//   is not `permanent` (a failure no retry can fix: a condition that could not
//   be evaluated, a template the API refused).
//
// Thread-safety: value types.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>

#include "common/time.h"

namespace tessera::pipeline {

enum class NodeState {
  kPending,    // not started yet
  kRunning,    // an attempt is running
  kSucceeded,  // an attempt succeeded (or a previous run's, when resumed_from is set)
  kFailed,     // the last attempt failed; retried unless out of attempts or permanent
  kSkipped,    // its when-condition was false; counts as done for its dependents
  kOmitted,    // an upstream node failed or was omitted; never runs
  kCached,     // a cache hit: an earlier run's outputs for the same cache key
};

// "Pending", "Running", "Succeeded", "Failed", "Skipped", "Omitted", "Cached".
std::string_view NodeStateName(NodeState state);
std::optional<NodeState> ParseNodeState(std::string_view name);

struct NodeStatus {
  NodeState state = NodeState::kPending;
  int32_t attempts = 0;
  Timestamp finished_at;                    // when the last attempt ended; the back-off counts from it
  bool permanent = false;                   // Failed, and not to be retried whatever attempts remain
  std::string message;                      // why it failed, was skipped or omitted
  std::optional<std::string> resumed_from;  // the run whose outputs it carries over
};

// Node name -> status.
using NodeStates = std::map<std::string, NodeStatus, std::less<>>;
// Node name -> the text it wrote to TESSERA_OUTPUT_DIR/result ("" when none).
using NodeResults = std::map<std::string, std::string, std::less<>>;
// Node name -> a digest of everything it wrote to TESSERA_OUTPUT_DIR (the
// controller's choice of digest; "" for a node that wrote nothing).
using OutputDigests = std::map<std::string, std::string, std::less<>>;

// The node's status, or a Pending one when `states` has none.
const NodeStatus& StatusOf(const NodeStates& states, std::string_view node);

}  // namespace tessera::pipeline
