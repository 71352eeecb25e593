// A pipeline expanded for one run: concrete nodes (a step, or one item of a
// fanned-out step), the edges between them, and their templates with the run's
// parameters and items substituted.
//
// Contract
// - `nodes` is in topological order (a node comes after all of its deps) and a
//   NodeId is an index into it. The order is also the one RenderDag draws:
//   depth-first, so a node follows the upstream node it was waiting on last
//   (ties: the spec's step order, then item order). Expand is deterministic.
// - A node's deps are all the nodes of every step its step dependsOn (a
//   fanned-out dependency means all of its nodes).
// - Substitution happens twice, each time in one pass from the step's template
//   as written (so no value is ever scanned again):
//     Expand:        {{params.*}} and {{item*}}  -> DagNode::pod_template
//     FinalTemplate: those and {{steps.*}}       -> the pod template to run
//   {{steps.STEP.outputs.result}} is known only once STEP has finished, so
//   DagNode::pod_template keeps it as written; the controller runs
//   FinalTemplate when it starts the node. A step that wrote no result (or was
//   skipped) reads as ""; a fanned-out STEP reads as a JSON list of its nodes'
//   results in item order (["r0","r1"]); {{steps.STEP.status}} of a fanned-out
//   step is Failed if a node failed, else Omitted if one was omitted, else
//   Skipped if all were skipped, else Succeeded.
//
// Thread-safety: Dag is an immutable value once built.
#pragma once

#include <map>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "common/result.h"
#include "common/strong_id.h"
#include "pipeline/node_state.h"
#include "pipeline/parameters.h"
#include "pipeline/pipeline_spec.h"
#include "pipeline/references.h"

namespace tessera::pipeline {

using NodeId = StrongId<struct DagNodeTag>;

struct DagNode {
  std::string name;             // "train-1"; the step's name when it is not fanned out
  size_t step = 0;              // index into Dag::steps
  std::optional<size_t> item;   // index into the step's withItems
  nlohmann::json pod_template;  // params and item substituted; {{steps.*}} as written
  Bindings bindings;            // the values of the params and item references its step makes
  std::string when;             // its step's condition as written; "" when none
  std::vector<NodeId> deps;     // direct upstream nodes, ascending
  std::vector<NodeId> dependents;
  // The nodes whose outputs it reads: its deps and the nodes of every step its
  // {{steps.*}} references name. Sorted by name; what CacheKey hashes.
  std::vector<std::string> inputs;
  RetryPolicy retries;
  bool cache = true;
};

struct DagStep {
  std::string name;
  nlohmann::json pod_template;  // as written
  std::optional<WhenExpr> when;
  std::set<std::string> references;  // Reference::Key() of every reference it makes
  bool fanned_out = false;
  std::vector<NodeId> nodes;  // in item order
};

struct Dag {
  std::vector<DagStep> steps;  // in the spec's order
  std::vector<DagNode> nodes;  // topological order; NodeId is the index
  std::map<std::string, NodeId, std::less<>> by_name;

  const DagNode& node(NodeId id) const { return nodes[static_cast<size_t>(id.value())]; }
  std::optional<NodeId> Find(std::string_view name) const;
  // Every (upstream, downstream) pair, by downstream then upstream.
  std::vector<std::pair<NodeId, NodeId>> Edges() const;
};

// The run's DAG. `values`: a value for every declared parameter
// (ResolveParameters); a missing one is an error naming it.
Result<Dag> Expand(const PipelineSpec& spec, const ParameterValues& values);

// The values of every reference the node's step makes: its params and item, and
// the {{steps.*}} ones from what is known of the run.
Bindings NodeBindings(const Dag& dag, NodeId id, const NodeStates& states, const NodeResults& results);

// The node's pod template with every reference substituted (see above): what
// the controller turns into the node's Workload. It cannot fail: the spec's
// checks leave no reference without a value.
nlohmann::json FinalTemplate(const Dag& dag, NodeId id, const NodeStates& states, const NodeResults& results);

// {{steps.STEP.status}} of step `step` (index into Dag::steps): "Succeeded",
// "Failed", "Skipped", "Omitted", or "Running"/"Pending" while unfinished.
std::string StepStatusText(const Dag& dag, size_t step, const NodeStates& states);

}  // namespace tessera::pipeline
