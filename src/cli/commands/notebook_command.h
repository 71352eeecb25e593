// `tessera notebook create|open|suspend|resume NAME`: tessera.dev/v1 Notebooks.
//
//   create NAME [--gpu 0.25|1|..] [--gpu-memory 20Gi] [--image I] [--cpu C]
//          [--memory M] [--home-size 10Gi] [--home-path DIR] [--idle-timeout 30m]
//          [--queue Q] [--priority CLASS] [-- CMD ARGS...]
//     Jupyter Lab unless a command is given (it reads NOTEBOOK_BASE_URL and
//     NOTEBOOK_PORT); prints `notebook.tessera.dev/NAME created in queue Q`.
//   open NAME [--print]: a suspended notebook is resumed first; then prints
//     (and opens, open_command.h) the URL the server's proxy serves it on
//     (the server's address + status.url) with a single-use login code.
//   suspend NAME: spec.suspend true (its GPU freed, its home volume kept).
//   resume NAME: spec.suspend false, and the annotation tessera.dev/resume-from
//     naming the suspension it resumes (an idle one stays until asked).
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "cli/commands/command_context.h"
#include "common/result.h"

namespace tessera {

struct NotebookOptions {
  std::string name;
  std::string image;
  std::string gpu;
  std::string gpu_memory;
  std::string cpu;
  std::string memory;
  std::string home_size;
  std::string home_path;
  std::string idle_timeout;
  std::string queue;
  std::string priority;
  std::vector<std::string> command;  // after --; empty: Jupyter Lab
};

// The Notebook `notebook create` makes, or InvalidArgument naming the bad flag.
Result<nlohmann::json> BuildNotebook(const NotebookOptions& options, const std::string& ns);

int RunNotebookCreate(const CommandContext& ctx, const NotebookOptions& options);
int RunNotebookOpen(const CommandContext& ctx, const std::string& name, bool print_only = false);
int RunNotebookSuspend(const CommandContext& ctx, const std::string& name, bool suspend);

}  // namespace tessera
