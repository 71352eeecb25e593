// A test's node agent: the options of a simulated-GPU agent beside a test
// server, and the clean-up of the pods a stopped agent leaves running (they
// stay for the next agent to adopt; a test ends them).
#pragma once

#include <signal.h>

#include <filesystem>
#include <fstream>
#include <string>

#include <nlohmann/json.hpp>

#include "agent/agent.h"
#include "server/server.h"

namespace tessera::testing {

// An agent for `node` with its data under dir/node, checkpoints under
// dir/checkpoints, and a simulated inventory `gpus` ("2xA100-80GB").
inline AgentOptions TestAgentOptions(const Server& server, const std::filesystem::path& dir,
                                     const std::string& node, const std::string& gpus) {
  AgentOptions o;
  o.server = server.url();
  o.token = server.admin_token();
  o.node_name = node;
  o.data_dir = (dir / node).string();
  o.checkpoint_root = (dir / "checkpoints").string();
  o.gpus.simulated = gpus;
  o.gpus.preference = GpuPreference::kSimulated;
  o.lease_duration = Duration::Seconds(4);
  return o;
}

// Kills the process groups of the pods a stopped agent recorded in node_dir.
inline void KillAgentPods(const std::filesystem::path& node_dir) {
  std::ifstream in(node_dir / "agent-state.json");
  const nlohmann::json state = nlohmann::json::parse(in, nullptr, false);
  if (!state.is_object()) return;
  const auto pods = state.find("pods");
  if (pods == state.end() || !pods->is_object()) return;
  for (const auto& [uid, p] : pods->items()) ::kill(-p.value("pid", 0), SIGKILL);
}

}  // namespace tessera::testing
