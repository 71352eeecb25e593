// Assumptions: `states` is what the controller recorded; nodes it does not
// name are Pending. Steps of Next:
//   1. copy the states of every node (the local view decisions are applied to);
//   2. walk the nodes in topological order, so each node sees its deps' states
//      after this call's decisions:
//        Failed with attempts left: retry when the back-off is over, else note
//          when it will be;
//        Pending: omit if a dep failed for good or was omitted; wait while a dep
//          is unfinished; else decide its condition: start, skip, or fail;
//   3. the phase from the local view.
#include "pipeline/dag_scheduler.h"

#include <fmt/format.h>

#include <algorithm>

namespace tessera::pipeline {
namespace {

bool IsDone(NodeState s) { return s == NodeState::kSucceeded || s == NodeState::kCached || s == NodeState::kSkipped; }

std::string FailureText(const DagNode& node, const NodeStatus& status) {
  std::string out =
      status.attempts > 0 && !status.permanent
          ? fmt::format("{} failed after {} attempt{}", node.name, status.attempts, status.attempts == 1 ? "" : "s")
          : fmt::format("{} failed", node.name);
  if (!status.message.empty()) out += ": " + status.message;
  return out;
}

}  // namespace

std::string_view RunPhaseName(RunPhase phase) {
  switch (phase) {
    case RunPhase::kRunning: return "Running";
    case RunPhase::kSucceeded: return "Succeeded";
    case RunPhase::kFailed: return "Failed";
  }
  return "Unknown";
}

bool WillRetry(const DagNode& node, const NodeStatus& status) {
  return status.state == NodeState::kFailed && !status.permanent && status.attempts < node.retries.max_attempts();
}

Decision Next(const Dag& dag, const NodeStates& states, const NodeResults& results, Timestamp now) {
  Decision out;

  // 1. The local view.
  NodeStates local;
  for (const DagNode& node : dag.nodes) local.emplace(node.name, StatusOf(states, node.name));

  // 2. Topological walk.
  for (size_t i = 0; i < dag.nodes.size(); ++i) {
    const DagNode& node = dag.nodes[i];
    NodeStatus& status = local[node.name];
    if (status.state == NodeState::kFailed) {
      if (!WillRetry(node, status)) continue;
      const Timestamp due = status.finished_at + node.retries.DelayAfter(status.attempts);
      if (now >= due) {
        out.retry.push_back(node.name);
        status.state = NodeState::kRunning;
        ++status.attempts;
      } else {
        out.next_retry_at = std::min(out.next_retry_at, due);
      }
      continue;
    }
    if (status.state != NodeState::kPending) continue;

    bool ready = true;
    std::string blocked_by;
    for (NodeId d : node.deps) {
      const DagNode& dep = dag.node(d);
      const NodeStatus& ds = local[dep.name];
      if (ds.state == NodeState::kOmitted) {
        blocked_by = fmt::format("upstream {} was omitted", dep.name);
        break;
      }
      if (ds.state == NodeState::kFailed && !WillRetry(dep, ds)) {
        blocked_by = fmt::format("upstream {} failed", dep.name);
        break;
      }
      if (!IsDone(ds.state)) ready = false;
    }
    if (!blocked_by.empty()) {
      out.omit.push_back({node.name, blocked_by});
      status.state = NodeState::kOmitted;
      status.message = blocked_by;
      continue;
    }
    if (!ready) continue;

    const DagStep& step = dag.steps[node.step];
    if (step.when) {
      auto go = step.when->Evaluate(NodeBindings(dag, NodeId(static_cast<int32_t>(i)), local, results));
      if (!go) {
        std::string reason = "when: " + go.error().message();
        out.fail.push_back({node.name, reason});
        status.state = NodeState::kFailed;
        status.permanent = true;
        status.message = std::move(reason);
        continue;
      }
      if (!*go) {
        std::string reason = fmt::format("when \"{}\" is false", step.when->text());
        out.skip.push_back({node.name, reason});
        status.state = NodeState::kSkipped;
        status.message = std::move(reason);
        continue;
      }
    }
    out.start.push_back(node.name);
    status.state = NodeState::kRunning;
    status.attempts = 1;
  }

  // 3. The phase.
  bool unfinished = false, all_done = true;
  std::vector<std::string> failures;
  for (const DagNode& node : dag.nodes) {
    const NodeStatus& s = local[node.name];
    unfinished |= s.state == NodeState::kPending || s.state == NodeState::kRunning || WillRetry(node, s);
    all_done &= IsDone(s.state);
    if (s.state == NodeState::kFailed && !WillRetry(node, s)) failures.push_back(FailureText(node, s));
  }
  if (unfinished) {
    out.phase = RunPhase::kRunning;
  } else if (all_done) {
    out.phase = RunPhase::kSucceeded;
  } else {
    out.phase = RunPhase::kFailed;
    out.message = failures.empty() ? "nodes were omitted" : failures.front();
    if (failures.size() > 1) {
      out.message += fmt::format(" (and {} more node{} failed)", failures.size() - 1, failures.size() == 2 ? "" : "s");
    }
  }
  return out;
}

}  // namespace tessera::pipeline
