// tessera: one binary for the control plane, the node agent, the client and the
// simulator. Subcommands grow with the platform; see docs/.
#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include <iostream>

#include "cli/demo.h"
#include "tessera_version.h"

int main(int argc, char** argv) {
  CLI::App app{"Tessera: a self-service GPU platform"};
  app.require_subcommand(1);

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

  CLI11_PARSE(app, argc, argv);
  return rc;
}
