// Steps: walk the new DAG in topological order (deps first), and carry a node
// over when the previous run finished it well, its deps were carried over, and
// its key over the carried digests is the one recorded (resume.h).
#include "pipeline/resume.h"

#include <algorithm>

#include "pipeline/digests.h"

namespace tessera::pipeline {

ResumePlan ResumeStates(const Dag& now, const PreviousRun& previous) {
  ResumePlan plan;
  for (const DagNode& node : now.nodes) {
    auto it = previous.nodes.find(node.name);
    if (it == previous.nodes.end()) continue;
    const PreviousNode& prev = it->second;
    const bool finished_well =
        prev.state == NodeState::kSucceeded || prev.state == NodeState::kCached || prev.state == NodeState::kSkipped;
    if (!finished_well || prev.cache_key.empty()) continue;
    const bool deps_carried = std::all_of(node.deps.begin(), node.deps.end(),
                                          [&](NodeId d) { return plan.states.contains(now.node(d).name); });
    if (!deps_carried) continue;
    const std::string key = CacheKey(node, plan.output_digests);
    if (key != prev.cache_key) continue;

    NodeStatus status;
    status.state = prev.state == NodeState::kSkipped ? NodeState::kSkipped : NodeState::kSucceeded;
    status.resumed_from = prev.resumed_from.value_or(previous.name);
    plan.states.emplace(node.name, std::move(status));
    plan.results.emplace(node.name, prev.result);
    plan.output_digests.emplace(node.name, prev.output_digest);
    plan.cache_keys.emplace(node.name, key);
  }
  return plan;
}

}  // namespace tessera::pipeline
