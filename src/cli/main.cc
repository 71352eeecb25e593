// tessera: one binary for the control plane, the node agent, the client and the
// simulator. Subcommands grow with the platform; see docs/.
#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include <iostream>

#include "cli/commands/client_commands.h"
#include "cli/commands/exit_codes.h"
#include "cli/demo.h"
#include "agent/fence.h"
#include "cli/serve_commands.h"
#include "cli/sim_command.h"
#include "tessera_version.h"

int main(int argc, char** argv) {
  CLI::App app{"Tessera: a self-service GPU platform", "tessera"};
  app.require_subcommand(1);
  app.footer(tessera::kExitCodesHelp);

  auto* version = app.add_subcommand("version", "Print the version and the build's git commit");
  version->callback([] { fmt::print("tessera {} (commit {})\n", TESSERA_VERSION, TESSERA_GIT_COMMIT); });

  tessera::DemoOptions demo_options;
  auto* demo = app.add_subcommand("demo", "Run the scheduler core on a generated fleet and print its decisions");
  demo->add_option("--nodes", demo_options.nodes, "GPU nodes (8 GPUs each)")->check(CLI::Range(1, 100000));
  demo->add_option("--workloads", demo_options.workloads, "Queued workloads")->check(CLI::Range(0, 1000000));
  demo->add_option("--queues", demo_options.queues, "ClusterQueues (teams)")->check(CLI::Range(1, 1000));
  demo->add_option("--seed", demo_options.seed, "Random seed");
  int rc = 0;
  demo->callback([&] { rc = tessera::RunDemo(demo_options, std::cout); });

  tessera::SimCommandOptions sim_options;
  auto* sim = app.add_subcommand("sim", "Replay a GPU-cluster trace with the scheduler core and compare policies");
  tessera::AddSimFlags(*sim, sim_options);
  sim->callback([&] { rc = tessera::RunSimCommand(sim_options, std::cout, std::cerr); });

  tessera::ServeOptions serve;
  auto add_serve_flags = [&](CLI::App* cmd) { tessera::AddServerFlags(*cmd, serve); };
  auto* server = app.add_subcommand("server", "Run the control plane (API server) in the foreground");
  add_serve_flags(server);
  server->callback([&] { rc = tessera::RunServerCommand(serve); });
  auto* up = app.add_subcommand("up", "Run Tessera on this machine: the control plane, with this machine as a node");
  add_serve_flags(up);
  up->add_option("--gpus", serve.gpus, "Simulated GPU inventory when there is no NVIDIA driver (COUNTxMODEL-MEMORY)");
  up->add_flag("--no-audit-log", serve.no_audit_log, "Keep no audit log (default: <data-dir>/audit.log)");
  tessera::AddPodNetworkFlag(*up, serve.pod_network);
  tessera::AddLogRetentionFlag(*up, serve.log_retention);
  up->callback([&] { rc = tessera::RunUpCommand(serve); });

  tessera::AgentCommandOptions agent;
  auto* agent_cmd = app.add_subcommand("agent", "Run the node agent: this machine runs the pods a server binds to it");
  tessera::AddAgentFlags(*agent_cmd, agent);
  agent_cmd->callback([&] { rc = tessera::RunAgentCommand(agent); });
  std::string fence_dir;
  int64_t fence_lease_ms = 40000;
  auto* fence = app.add_subcommand("agent-fence", "The node's fence, started by the agent (src/agent/fence.h)");
  fence->group("");  // internal: hidden from --help
  fence->add_option("--data-dir", fence_dir)->required();
  fence->add_option("--lease-ms", fence_lease_ms)->required();
  fence->callback([&] { rc = tessera::RunFence(fence_dir, tessera::Duration::Millis(fence_lease_ms)); });

  // apply, get, describe, delete, submit, queues: clients of the API server.
  tessera::ClientCommands client;
  client.AddTo(app, &rc);

  return tessera::ParseAndRun(app, argc, argv, rc);
}
