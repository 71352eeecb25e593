// Running a node tool (skopeo, umoci, runc) to its end from the agent, its
// output collected: for the short commands around containers, not for pods
// (process_runner.h runs those).
#pragma once

#include <string>
#include <vector>

#include "common/result.h"

namespace tessera {

struct ToolResult {
  int exit_code = -1;
  std::string output;  // stdout and stderr together, the first 64 KiB
};

// Runs argv (argv[0] looked up in PATH unless it holds a '/'), stdin from
// /dev/null. Unavailable naming the tool when it is not installed.
Result<ToolResult> RunTool(const std::vector<std::string>& argv);

// The message of a tool that failed: the last logrus `msg="..."` (skopeo,
// umoci, runc), else the last non-empty line of its output.
std::string ToolMessage(const std::string& output);

}  // namespace tessera
