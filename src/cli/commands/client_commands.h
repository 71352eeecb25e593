// The client subcommands of `tessera` (apply, get, describe, delete, submit,
// queues) on a CLI11 app, with their flags and usage text, and the global flags
// they share: --server, --token, --certificate-authority,
// --insecure-skip-tls-verify, -n/--namespace. Each subcommand resolves the
// server, token and TLS settings (client_config.h) and runs its Run* function
// (one file per command in this directory).
//
// Exit codes (exit_codes.h): a command's own; CLI11's parse errors (unknown
// flag, missing argument, bad value) become 2 through ParseAndRun.
//
// Thread-safety: one parse per ClientCommands object.
#pragma once

#include <CLI/CLI.hpp>

#include <iostream>
#include <string>

#include "cli/commands/apply_command.h"
#include "cli/commands/approve_command.h"
#include "cli/commands/auth_commands.h"
#include "cli/commands/config_command.h"
#include "cli/commands/delete_command.h"
#include "cli/commands/describe_command.h"
#include "cli/commands/get_command.h"
#include "cli/commands/exec_command.h"
#include "cli/commands/logs_command.h"
#include "cli/commands/notebook_command.h"
#include "cli/commands/run_command.h"
#include "cli/commands/open_command.h"
#include "cli/commands/port_forward_command.h"
#include "cli/commands/queues_command.h"
#include "cli/commands/trace_report.h"
#include "cli/commands/usage_report.h"
#include "cli/commands/submit_command.h"
#include "cli/commands/train_command.h"
#include "cli/commands/sweep_command.h"

namespace tessera {

class ClientCommands {
 public:
  // The streams the commands (and CLI11's messages) write to and read from.
  explicit ClientCommands(std::ostream& out = std::cout, std::ostream& err = std::cerr, std::istream& in = std::cin)
      : out_(out), err_(err), in_(in) {}

  // Adds the global flags and the subcommands to `app`; a subcommand that runs
  // stores its exit code in *rc. `app` and *rc must outlive the parse.
  void AddTo(CLI::App& app, int* rc);

 private:
  // The server, credentials and namespace from the flags, environment and
  // config file; an error (a token file that cannot be read, an unknown
  // --context) for the user.
  Result<CommandContext> Context() const;
  // A subcommand's callback: resolves the context, runs `command`, stores its exit code.
  std::function<void()> Runs(int* rc, std::function<int(const CommandContext&)> command);
  void AddAuthCommands(CLI::App& app, int* rc);
  void AddNotebookCommands(CLI::App& app, int* rc);

  std::ostream& out_;
  std::ostream& err_;
  std::istream& in_;
  ClientFlags flags_;
  std::string ns_ = "default";
  CLI::Option* ns_option_ = nullptr;
  ApplyOptions apply_;
  GetOptions get_;
  DescribeOptions describe_;
  DeleteOptions delete_;
  LogsOptions logs_;
  ExecOptions exec_;
  SubmitOptions submit_;
  int64_t submit_max_run_ = 0;
  TrainOptions train_;
  int64_t train_max_run_ = 0;
  NotebookOptions notebook_;
  RunTemplateOptions run_;
  std::string notebook_name_;
  OpenOptions open_;
  PortForwardOptions port_forward_;
  QueuesOptions queues_;
  ReportUsageOptions report_usage_;
  ReportTraceOptions report_trace_;
  ReportSweepOptions report_sweep_;
  std::string resume_name_;
  std::string rollout_target_;
  CanIOptions can_i_;
  ApproveOptions approve_;
  std::string whoami_output_;
  KubeconfigCommandOptions kubeconfig_;
  CreateTokenOptions create_token_;
  SetContextOptions set_context_;
  std::string context_name_;
};

// Parses the command line and runs what it names. Returns the command's exit
// code; help is 0; any parse error prints CLI11's message and returns 2.
int ParseAndRun(CLI::App& app, int argc, const char* const* argv, const int& rc, std::ostream& out = std::cout,
                std::ostream& err = std::cerr);

}  // namespace tessera
