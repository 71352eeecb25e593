// Assumptions: a spec that ParsePipelineSpec accepted (acyclic, references
// known). Steps of Expand:
//   1. every declared parameter has a value;
//   2. one node per step, or per item of a fanned-out step, in spec and item
//      order ("proto" order), with its bindings and substituted template;
//   3. deps: all nodes of each dependsOn step;
//   4. order: repeatedly emit, of the nodes whose deps are all emitted, the one
//      whose last dep was emitted most recently (roots count as -1), ties by
//      proto order. This is a topological order and a depth-first one, which
//      RenderDag draws as a tree (each node under its latest dep);
//   5. renumber by that order; fill dependents, inputs and the name index.
#include "pipeline/dag.h"

#include <fmt/format.h>

#include <algorithm>
#include <set>

#include "common/check.h"

namespace tessera::pipeline {
namespace {

using nlohmann::json;

// The value of each early (params, item) reference a step makes, for one node.
Bindings EarlyBindings(const Step& step, const ParameterValues& values, const json* item) {
  Bindings out;
  for (const std::string& key : step.references) {
    if (key.starts_with("params.")) {
      auto it = values.find(std::string_view(key).substr(7));
      TESSERA_CHECK(it != values.end(), "parameter of {} checked in Expand", key);
      out[key] = it->second;
    } else if (key == "item") {
      TESSERA_CHECK(item != nullptr, "step {} refers to {{{{item}}}} without withItems", step.name);
      out[key] = BindingText(*item);
    } else if (key.starts_with("item.")) {
      TESSERA_CHECK(item != nullptr && item->is_object(), "step {} refers to {}", step.name, key);
      auto it = item->find(key.substr(5));
      TESSERA_CHECK(it != item->end(), "item key {} checked by ParsePipelineSpec", key);
      out[key] = BindingText(*it);
    }
  }
  return out;
}

std::string_view SummaryName(NodeState s) { return s == NodeState::kCached ? "Succeeded" : NodeStateName(s); }

}  // namespace

std::optional<NodeId> Dag::Find(std::string_view name) const {
  auto it = by_name.find(name);
  if (it == by_name.end()) return std::nullopt;
  return it->second;
}

std::vector<std::pair<NodeId, NodeId>> Dag::Edges() const {
  std::vector<std::pair<NodeId, NodeId>> out;
  for (size_t i = 0; i < nodes.size(); ++i) {
    for (NodeId d : nodes[i].deps) out.emplace_back(d, NodeId(static_cast<int32_t>(i)));
  }
  return out;
}

Result<Dag> Expand(const PipelineSpec& spec, const ParameterValues& values) {
  // 1. Values for every parameter.
  for (const Parameter& p : spec.parameters) {
    if (!values.contains(p.name)) {
      return Err(Status::InvalidArgument(
          fmt::format("spec.parameters: no value for parameter \"{}\" (resolve the run's parameters first)", p.name)));
    }
  }

  // 2. Nodes in proto order.
  Dag dag;
  std::vector<DagNode> proto;
  std::vector<std::vector<size_t>> step_proto(spec.steps.size());
  std::map<std::string, size_t, std::less<>> step_index;
  for (size_t s = 0; s < spec.steps.size(); ++s) {
    const Step& step = spec.steps[s];
    step_index.emplace(step.name, s);
    dag.steps.push_back({step.name, step.pod_template, step.when, step.references, step.with_items.has_value(), {}});
    const size_t count = step.with_items ? step.with_items->size() : 1;
    for (size_t k = 0; k < count; ++k) {
      DagNode node;
      node.item = step.with_items ? std::optional<size_t>(k) : std::nullopt;
      node.name = step.NodeName(node.item);
      node.step = s;
      node.bindings = EarlyBindings(step, values, step.with_items ? &(*step.with_items)[k] : nullptr);
      node.pod_template = SubstituteJson(step.pod_template, node.bindings);
      node.when = step.when ? step.when->text() : "";
      node.retries = step.retries;
      node.cache = step.cache;
      step_proto[s].push_back(proto.size());
      proto.push_back(std::move(node));
    }
  }

  // 3. Deps (proto indices), and how many each node waits for.
  std::vector<std::vector<size_t>> deps(proto.size()), dependents(proto.size());
  for (size_t p = 0; p < proto.size(); ++p) {
    for (const std::string& dep : spec.steps[proto[p].step].depends_on) {
      auto it = step_index.find(dep);
      TESSERA_CHECK(it != step_index.end(), "dependsOn {} checked by ParsePipelineSpec", dep);
      for (size_t q : step_proto[it->second]) {
        deps[p].push_back(q);
        dependents[q].push_back(p);
      }
    }
  }

  // 4. Depth-first topological order: ready nodes keyed by (-(position of the
  // latest dep emitted), proto index).
  std::vector<size_t> waiting(proto.size());
  std::set<std::pair<int64_t, size_t>> ready;
  for (size_t p = 0; p < proto.size(); ++p) {
    waiting[p] = deps[p].size();
    if (waiting[p] == 0) ready.emplace(1, p);  // -(-1)
  }
  std::vector<size_t> order;
  std::vector<int32_t> position(proto.size(), -1);
  while (!ready.empty()) {
    const size_t p = ready.begin()->second;
    ready.erase(ready.begin());
    position[p] = static_cast<int32_t>(order.size());
    order.push_back(p);
    for (size_t q : dependents[p]) {
      if (--waiting[q] == 0) ready.emplace(-static_cast<int64_t>(position[p]), q);
    }
  }
  TESSERA_CHECK(order.size() == proto.size(), "cycle in a checked spec: {} of {} nodes ordered", order.size(),
                proto.size());

  // 5. Renumber.
  for (size_t p : order) dag.nodes.push_back(std::move(proto[p]));
  for (size_t i = 0; i < order.size(); ++i) {
    DagNode& node = dag.nodes[i];
    const size_t p = order[i];
    for (size_t q : deps[p]) node.deps.emplace_back(position[q]);
    for (size_t q : dependents[p]) node.dependents.emplace_back(position[q]);
    std::sort(node.deps.begin(), node.deps.end());
    std::sort(node.dependents.begin(), node.dependents.end());
    dag.steps[node.step].nodes.emplace_back(static_cast<int32_t>(i));
    dag.by_name.emplace(node.name, NodeId(static_cast<int32_t>(i)));
  }
  for (DagStep& step : dag.steps)
    std::sort(step.nodes.begin(), step.nodes.end(),
              [&](NodeId a, NodeId b) { return dag.node(a).item < dag.node(b).item; });
  for (DagNode& node : dag.nodes) {
    std::set<std::string> inputs;
    for (NodeId d : node.deps) inputs.insert(dag.node(d).name);
    for (const std::string& key : dag.steps[node.step].references) {
      if (!key.starts_with("steps.")) continue;
      const std::string_view rest = std::string_view(key).substr(6);
      auto it = step_index.find(rest.substr(0, rest.find('.')));
      TESSERA_CHECK(it != step_index.end(), "step reference {} checked by ParsePipelineSpec", key);
      for (size_t q : step_proto[it->second]) inputs.insert(dag.nodes[static_cast<size_t>(position[q])].name);
    }
    node.inputs.assign(inputs.begin(), inputs.end());
  }
  return dag;
}

std::string StepStatusText(const Dag& dag, size_t step, const NodeStates& states) {
  bool any_failed = false, any_omitted = false, any_unfinished = false, any_started = false, all_skipped = true;
  for (NodeId id : dag.steps[step].nodes) {
    const NodeState s = StatusOf(states, dag.node(id).name).state;
    any_failed |= s == NodeState::kFailed;
    any_omitted |= s == NodeState::kOmitted;
    any_unfinished |= s == NodeState::kPending || s == NodeState::kRunning;
    any_started |= s != NodeState::kPending;
    all_skipped &= s == NodeState::kSkipped;
  }
  if (dag.steps[step].nodes.size() == 1)
    return std::string(SummaryName(StatusOf(states, dag.node(dag.steps[step].nodes[0]).name).state));
  if (any_failed) return "Failed";
  if (any_omitted) return "Omitted";
  if (any_unfinished) return any_started ? "Running" : "Pending";
  if (all_skipped) return "Skipped";
  return "Succeeded";
}

Bindings NodeBindings(const Dag& dag, NodeId id, const NodeStates& states, const NodeResults& results) {
  const DagNode& node = dag.node(id);
  Bindings out = node.bindings;
  for (const std::string& key : dag.steps[node.step].references) {
    if (!key.starts_with("steps.")) continue;
    const std::string_view rest = std::string_view(key).substr(6);
    const size_t dot = rest.find('.');
    const std::string_view step_name = rest.substr(0, dot);
    const std::string_view field = rest.substr(dot + 1);
    size_t s = 0;
    while (s < dag.steps.size() && dag.steps[s].name != step_name) ++s;
    TESSERA_CHECK(s < dag.steps.size(), "step reference {} checked by ParsePipelineSpec", key);
    if (field == "status") {
      out[key] = StepStatusText(dag, s, states);
      continue;
    }
    auto result_of = [&](NodeId n) {
      auto it = results.find(dag.node(n).name);
      return it == results.end() ? std::string() : it->second;
    };
    if (!dag.steps[s].fanned_out) {
      out[key] = result_of(dag.steps[s].nodes[0]);
    } else {
      json list = json::array();
      for (NodeId n : dag.steps[s].nodes) list.push_back(result_of(n));
      out[key] = BindingText(list);
    }
  }
  return out;
}

json FinalTemplate(const Dag& dag, NodeId id, const NodeStates& states, const NodeResults& results) {
  return SubstituteJson(dag.steps[dag.node(id).step].pod_template, NodeBindings(dag, id, states, results));
}

}  // namespace tessera::pipeline
