#include "agent/run_tool.h"

#include <fmt/format.h>

#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <sstream>

extern "C" char** environ;

namespace tessera {

Result<ToolResult> RunTool(const std::vector<std::string>& argv) {
  if (argv.empty()) return Err(Status::InvalidArgument("no tool to run"));
  int fds[2];
  if (::pipe2(fds, O_CLOEXEC) != 0) return Err(Status::IoError(fmt::format("cannot run {}: pipe: {}", argv.front(), std::strerror(errno))));
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, STDIN_FILENO, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_adddup2(&actions, fds[1], STDOUT_FILENO);
  posix_spawn_file_actions_adddup2(&actions, fds[1], STDERR_FILENO);
  std::vector<char*> args;
  for (const std::string& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  pid_t pid = 0;
  const int spawned = ::posix_spawnp(&pid, args[0], &actions, nullptr, args.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  ::close(fds[1]);
  if (spawned != 0) {
    ::close(fds[0]);
    if (spawned == ENOENT) {
      return Err(Status::Unavailable(
          fmt::format("{} is not installed on this node (scripts/install-deps.sh installs it)", argv.front())));
    }
    return Err(Status::Internal(fmt::format("cannot run {}: {}", argv.front(), std::strerror(spawned))));
  }
  ToolResult result;
  char buf[4096];
  for (;;) {
    const ssize_t n = ::read(fds[0], buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    if (result.output.size() < 64 * 1024) result.output.append(buf, static_cast<size_t>(n));
  }
  ::close(fds[0]);
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  result.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  return result;
}

std::string ToolMessage(const std::string& output) {
  // skopeo and umoci log with logrus: the last `msg="..."` is the error.
  const auto at = output.rfind("msg=\"");
  if (at != std::string::npos) {
    std::string msg;
    for (size_t i = at + 5; i < output.size() && output[i] != '\n'; ++i) {
      if (output[i] == '\\' && i + 1 < output.size()) {
        msg += output[++i];
        continue;
      }
      if (output[i] == '"') break;
      msg += output[i];
    }
    return msg;
  }
  std::istringstream lines(output);
  std::string line, last;
  while (std::getline(lines, line)) {
    if (line.find_first_not_of(" \t\r") != std::string::npos) last = line;
  }
  return last;
}

}  // namespace tessera
