// `tessera sim`: replays a trace against a cluster and policy with the scheduler
// core, compares policies, prints a table and writes CSV files and SVG plots.
#pragma once

#include <cstdint>
#include <ostream>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

namespace tessera {

struct SimCommandOptions {
  std::string trace;
  std::string format = "csv";
  std::string cluster;
  std::string policy;  // manifests; empty: one queue per team with equal shares
  std::vector<std::string> policies = {"static", "borrowing", "fractional", "preemption"};
  std::string order = "fifo";
  std::string checkpoint_interval = "30m";
  bool runtime_limits = false;
  bool drop_unschedulable = false;
  std::string since, until;  // a date (formats with a wall clock) or an offset like 30d
  bool strict = false;
  int32_t max_gpus_per_pod = 8;
  bool teams = false;
  std::string out;
};

void AddSimFlags(CLI::App& command, SimCommandOptions& options);

// Exit code: 0, or 1 with the reason on `err`.
int RunSimCommand(const SimCommandOptions& options, std::ostream& out, std::ostream& err);

}  // namespace tessera
