#include "cli/commands/exec_command.h"

#include <fmt/format.h>

#include "cli/commands/exit_codes.h"
#include "cli/commands/resource_paths.h"
#include "client/exec_client.h"

namespace tessera {

Result<std::string> ExecTarget(const std::string& ns, const ExecOptions& options) {
  std::string name = options.pod;
  if (const size_t slash = name.find('/'); slash != std::string::npos) {
    const std::string kind = name.substr(0, slash);
    if (kind != "pod" && kind != "pods" && kind != "po") {
      return Err(Status::InvalidArgument(
          fmt::format("exec runs in a pod: give pod/NAME (or NAME), not {}", options.pod)));
    }
    name = name.substr(slash + 1);
  }
  if (name.empty()) return Err(Status::InvalidArgument("exec needs a pod: tessera exec pod/NAME -- CMD..."));
  if (options.command.empty()) {
    return Err(Status::InvalidArgument("you must specify at least one command for the container: tessera exec pod/NAME -- CMD..."));
  }
  std::string target = fmt::format("/api/v1/namespaces/{}/pods/{}/exec?", PercentEncode(ns), PercentEncode(name));
  for (const std::string& arg : options.command) target += "command=" + PercentEncode(arg) + "&";
  if (!options.container.empty()) target += "container=" + PercentEncode(options.container) + "&";
  target += fmt::format("stdin={}&stdout=true&stderr=true&tty={}", options.stdin_open, options.tty);
  return target;
}

int RunExec(const CommandContext& ctx, const ExecOptions& options) {
  auto target = ExecTarget(ctx.ns, options);
  if (!target) {
    *ctx.err << "error: " << target.error().message() << "\n";
    return kExitUsage;
  }
  const ExecStreams streams{.in = options.stdin_open ? ctx.in : nullptr, .out = ctx.out, .err = ctx.err};
  auto code = ExecInPod(ctx.config, *target, streams);
  if (!code) {
    const char* what = code.error().code() == StatusCode::kPermissionDenied ? "Error from server (Forbidden): "
                       : code.error().code() == StatusCode::kNotFound     ? "Error from server (NotFound): "
                       : code.error().code() == StatusCode::kInvalidArgument ? "Error from server (BadRequest): "
                                                                             : "error: ";
    *ctx.err << what << code.error().message() << "\n";
    return kExitFailure;
  }
  if (*code != 0) *ctx.err << "command terminated with exit code " << *code << "\n";
  return *code;
}

}  // namespace tessera
