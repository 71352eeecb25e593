// Resuming a PipelineRun from a previous one (spec.resumeFrom): the nodes that
// succeeded there with the same inputs are carried over, so fixing a failing
// step's template reruns that step and what depends on it, and nothing else.
//
// Contract
// - A node is carried over when, in topological order:
//     1. the previous run has it Succeeded, Cached or Skipped;
//     2. all of its deps are carried over (so its inputs are the previous run's
//        outputs, whose digests are known before anything runs); and
//     3. its CacheKey over those digests equals the key the previous run
//        recorded for it (same template, parameters, item and condition).
//   It becomes Succeeded (Skipped stays Skipped) with no attempts in this run,
//   resumed_from naming the run that actually ran it: the previous run, or the
//   one it had itself been resumed from. Its result and output digest come
//   along. Every other node starts fresh (absent from the plan: Pending).
// - Only nodes of the new DAG are looked at; the previous run's other nodes
//   (a step since removed, an item since dropped) are ignored.
//
// Thread-safety: pure function.
#pragma once

#include <map>
#include <optional>
#include <string>

#include "pipeline/dag.h"
#include "pipeline/node_state.h"

namespace tessera::pipeline {

// What the previous run's status recorded of one node.
struct PreviousNode {
  NodeState state = NodeState::kPending;
  // CacheKey of the node when it ran (or was skipped) there; "" when unknown,
  // which carries nothing over.
  std::string cache_key;
  std::string output_digest;
  std::string result;                       // what it wrote to TESSERA_OUTPUT_DIR/result
  std::optional<std::string> resumed_from;  // when it was itself carried over
};

struct PreviousRun {
  std::string name;
  std::map<std::string, PreviousNode, std::less<>> nodes;  // by node name
};

// The carried-over nodes: their states, results, output digests and keys.
struct ResumePlan {
  NodeStates states;
  NodeResults results;
  OutputDigests output_digests;
  std::map<std::string, std::string, std::less<>> cache_keys;
};

ResumePlan ResumeStates(const Dag& now, const PreviousRun& previous);

}  // namespace tessera::pipeline
