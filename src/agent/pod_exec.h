// Running a command inside a running pod, as `kubectl exec` and the kubelet's
// exec probes do (src/agent/exec_server.h, src/agent/probes.h).
//
// A process pod: the command joins the pod's network and mount namespaces and
// its cgroups, and runs as its uid and gid, with its variables and in its
// working directory, all as /proc/PID of the pod's group leader (its reaper,
// which the agent started in that environment) shows them. A container: the
// command runs through `runc exec`, which takes the container's own process
// settings (user, variables, working directory, root).
//
// The command leads a process group of its own (kill(-pid) ends it and what it
// started). Thread-safety: SpawnInPod may be called from any thread; it makes
// only async-signal-safe calls between fork and exec.
#pragma once

#include <sys/types.h>

#include <optional>
#include <string>
#include <vector>

#include "common/result.h"
#include "common/unique_fd.h"

namespace tessera {

struct PodExecTarget {
  // A container: the argv that runs a command in it, the command appended
  // ({"runc", "--root", ROOT, "exec", ID}).
  std::vector<std::string> exec_prefix;
  // A process pod: its group leader and its cgroups.
  struct Process {
    pid_t pid = 0;
    std::vector<std::string> cgroup_dirs;
  };
  std::optional<Process> process;
};

struct SpawnedInPod {
  pid_t pid = 0;
  UniqueFd stdin_fd;   // write end of its stdin; invalid without with_stdin (it reads /dev/null)
  UniqueFd stdout_fd;  // read end of its stdout (and of its stderr when merged)
  UniqueFd stderr_fd;  // read end of its stderr; invalid when merged
};

// Starts `argv` in the pod. NotFound when the pod's process is gone;
// Internal when a pipe or fork fails. A command that cannot be executed ends
// with code 127 (126 when its environment could not be entered), saying so on
// its stderr, as a shell does.
Result<SpawnedInPod> SpawnInPod(const std::vector<std::string>& argv, const PodExecTarget& target, bool with_stdin,
                                bool merge_stderr);

// "sh -c exit 3": argv as one line, for messages.
std::string CommandLine(const std::vector<std::string>& argv);

}  // namespace tessera
