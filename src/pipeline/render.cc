// Steps: (1) each node's tree parent (its latest dep in the DAG's order; the
// order is depth-first, so each subtree is contiguous) and whether a later
// sibling follows it; (2) the tree marks from the chain of parents; (3) the
// columns, padded to the widest.
#include "pipeline/render.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <optional>

#include "pipeline/dag_scheduler.h"

namespace tessera::pipeline {
namespace {

size_t DisplayWidth(std::string_view s) {
  // Code points: every byte that is not a UTF-8 continuation byte.
  return static_cast<size_t>(
      std::count_if(s.begin(), s.end(), [](char c) { return (static_cast<unsigned char>(c) & 0xC0) != 0x80; }));
}

std::string PadRight(std::string s, size_t width) {
  const size_t w = DisplayWidth(s);
  if (w < width) s.append(width - w, ' ');
  return s;
}

// "b, c", with all the nodes of a fanned-out step as "train-0..2".
std::string DepList(const Dag& dag, const DagNode& node) {
  std::vector<std::string> parts;
  std::vector<size_t> steps_seen;
  for (NodeId d : node.deps) {
    const DagNode& dep = dag.node(d);
    if (std::find(steps_seen.begin(), steps_seen.end(), dep.step) != steps_seen.end()) continue;
    steps_seen.push_back(dep.step);
    const DagStep& step = dag.steps[dep.step];
    if (step.fanned_out && step.nodes.size() > 1) {
      parts.push_back(fmt::format("{}-0..{}", step.name, step.nodes.size() - 1));
    } else {
      parts.push_back(dep.name);
    }
  }
  return fmt::format("{}", fmt::join(parts, ", "));
}

std::string Details(const DagNode& node, const NodeStatus& status) {
  std::vector<std::string> parts;
  if (status.resumed_from) parts.push_back("resumed from " + *status.resumed_from);
  if (status.attempts > 0) parts.push_back(fmt::format("attempt {}/{}", status.attempts, node.retries.max_attempts()));
  if (WillRetry(node, status)) parts.push_back("will retry");
  std::string out = fmt::format("{}", fmt::join(parts, ", "));
  if (!status.message.empty()) out += (out.empty() ? "" : ": ") + status.message;
  return out;
}

}  // namespace

std::vector<std::string> RenderDag(const Dag& dag, const NodeStates& states) {
  const size_t n = dag.nodes.size();

  // 1. Tree parents and last children.
  std::vector<std::optional<size_t>> parent(n);
  std::vector<bool> last_child(n, true);
  std::vector<std::optional<size_t>> latest_child(n);  // of each parent, so far
  std::optional<size_t> latest_root;
  for (size_t i = 0; i < n; ++i) {
    const DagNode& node = dag.nodes[i];
    if (!node.deps.empty()) parent[i] = static_cast<size_t>(node.deps.back().value());
    std::optional<size_t>& previous_sibling = parent[i] ? latest_child[*parent[i]] : latest_root;
    if (previous_sibling) last_child[*previous_sibling] = false;
    previous_sibling = i;
  }

  // 2. Tree marks and names.
  std::vector<std::string> left(n);
  size_t width = 0;
  for (size_t i = 0; i < n; ++i) {
    std::string marks;
    if (parent[i]) {
      marks = last_child[i] ? "└─ " : "├─ ";
      for (std::optional<size_t> a = parent[i]; a && parent[*a]; a = parent[*a]) {
        marks = (last_child[*a] ? "   " : "│  ") + marks;
      }
    }
    const DagNode& node = dag.nodes[i];
    left[i] = marks + node.name;
    if (node.deps.size() > 1) left[i] += " ← " + DepList(dag, node);
    width = std::max(width, DisplayWidth(left[i]));
  }

  // 3. Columns.
  std::vector<std::string> lines;
  for (size_t i = 0; i < n; ++i) {
    const NodeStatus& status = StatusOf(states, dag.nodes[i].name);
    std::string line = PadRight(left[i], width) + "  " + PadRight(std::string(NodeStateName(status.state)), 9);
    const std::string details = Details(dag.nodes[i], status);
    if (!details.empty()) line += "  " + details;
    while (!line.empty() && line.back() == ' ') line.pop_back();
    lines.push_back(std::move(line));
  }
  return lines;
}

}  // namespace tessera::pipeline
