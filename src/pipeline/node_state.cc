#include "pipeline/node_state.h"

#include <array>
#include <utility>

namespace tessera::pipeline {
namespace {

constexpr std::array<std::pair<NodeState, std::string_view>, 7> kNames = {{
    {NodeState::kPending, "Pending"},
    {NodeState::kRunning, "Running"},
    {NodeState::kSucceeded, "Succeeded"},
    {NodeState::kFailed, "Failed"},
    {NodeState::kSkipped, "Skipped"},
    {NodeState::kOmitted, "Omitted"},
    {NodeState::kCached, "Cached"},
}};

}  // namespace

std::string_view NodeStateName(NodeState state) {
  for (const auto& [s, name] : kNames) {
    if (s == state) return name;
  }
  return "Unknown";
}

std::optional<NodeState> ParseNodeState(std::string_view name) {
  for (const auto& [s, n] : kNames) {
    if (n == name) return s;
  }
  return std::nullopt;
}

const NodeStatus& StatusOf(const NodeStates& states, std::string_view node) {
  static const NodeStatus kPending;
  auto it = states.find(node);
  return it == states.end() ? kPending : it->second;
}

}  // namespace tessera::pipeline
