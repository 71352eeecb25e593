// The node agent's process runtime: a pod runs as a process group, started,
// identified, signalled, reaped, adopted again after an agent restart, and
// terminated (SIGTERM, grace period, SIGKILL) without blocking the agent's loop.
//
// Contract
// - Identity is (pid, start_ticks), never the pid alone. start_ticks is field 22
//   of /proc/<pid>/stat (clock ticks after boot); a reused pid has a later start
//   time, so every call that acts on a process first checks both.
// - A started process calls setsid(): it leads its own session and process group
//   (pgid == pid), and signals go to the whole group (kill(-pgid)), so the pod's
//   descendants receive them too. Descendants that leave the group on purpose
//   (setsid, setpgid) are reached only through the pod's cgroup, when it has one.
// - A pod ends as a whole: when the group leader has ended, Poll SIGKILLs what is
//   left of its group (while the unreaped leader still pins the group id, so the
//   signal cannot reach a stranger) and of its cgroup, then removes the cgroup.
// - Processes outlive the runner: destroying it kills nothing, so a restarted
//   agent can Adopt its pods again. An adopted process is not our child, so its
//   end is seen as its identity leaving /proc and its exit code is unknown.
// - Resource limits are best effort, as DESIGN.md section 6 asks: when the host
//   does not let us create or write cgroups, Start still succeeds and
//   RunningProcess::warnings says exactly why the limits are not enforced.
//
// Thread-safety: a ProcessRunner is not thread-safe; one loop owns it. Start is
// safe to call in a multithreaded program: every string and array the child needs
// is built before clone, and the child makes only async-signal-safe calls until exec.
//
// Cost: Start clones with CLONE_VM|CLONE_VFORK (as posix_spawn does), so it costs
// the same in a small agent as in a large server-plus-agent process: no page
// table is copied. A pod that records its exit status runs under a small static
// reaper program (tessera-pod-reaper) rather than under a copy of the agent.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "common/result.h"
#include "common/time.h"
#include "common/unique_fd.h"

namespace tessera {

// Who a process is: a pid is only meaningful together with its start time.
struct ProcessIdentity {
  pid_t pid = 0;
  uint64_t start_ticks = 0;  // /proc/<pid>/stat field 22

  std::string ToString() const;  // "pid 123 (start tick 456)"
  friend bool operator==(const ProcessIdentity&, const ProcessIdentity&) = default;
};

// Reads field 22 of /proc/<pid>/stat. NotFound when the pid does not exist.
Result<uint64_t> ReadStartTicks(pid_t pid);

// True when `identity` names a process that exists with that start time and has
// not ended (a zombie, ended but not yet reaped by its parent, has ended).
bool IsRunning(const ProcessIdentity& identity);

// Limits enforced through a cgroup; an absent field is not limited.
struct ResourceLimits {
  std::optional<int64_t> cpu_millicores;  // 1000 = one CPU; below 10 counts as 10 (1 ms per 100 ms)
  std::optional<int64_t> memory_bytes;    // swap cannot extend it (v1: memory+swap capped too; v2: swap.max 0)

  bool empty() const { return !cpu_millicores && !memory_bytes; }
};

// What to run.
struct ProcessSpec {
  // Names the pod's cgroup ("tessera-<name>"), so it must be unique among the
  // pods running on this node (the pod uid and attempt, say). May be empty when
  // no limits are asked for.
  std::string name;
  // argv[0] is looked up in the child's PATH when it contains no '/', as execvp does.
  std::vector<std::string> argv;
  // "KEY=VALUE" entries added to, or replacing, a minimal base environment:
  // PATH, HOME and LANG as the agent has them (PATH has a default when unset).
  std::vector<std::string> env;
  // Must exist; it is not created.
  std::string working_dir;
  // stdout and stderr go here, appended. A regular file (created when missing)
  // or a FIFO from log_files.h. Opened read-write, so that a FIFO always has a
  // reader and the pod is never killed by SIGPIPE while the agent is away.
  std::string output_path;
  // Applied only when the agent runs as root; otherwise a warning says so.
  std::optional<uid_t> uid;
  std::optional<gid_t> gid;
  ResourceLimits limits;
  // A private view of the filesystem, in a mount namespace of the process's
  // own (applied only when the agent runs as root; otherwise a warning says
  // so): each of `hidden_paths` is an empty directory, but for the
  // `visible_paths` inside it, which stay where they are. Absolute, normalised
  // paths; a hidden path inside another is redundant. The working directory is
  // entered after this, so it must be visible.
  std::vector<std::string> hidden_paths;
  std::vector<std::string> visible_paths;
  // When set, the process runs in this network namespace (a file such as
  // /run/netns/NAME; src/agent/pod_network.h): entered before anything else.
  std::string netns_path;
  // When set, the group leader stays a reaper: the command runs as its child and
  // its wait status is written here, so that an agent that restarts while the
  // pod runs (and is not its parent) still learns how it ended. Truncated at start.
  std::string exit_status_path;
};

// A process that Start started or Adopt found again.
struct RunningProcess {
  ProcessIdentity identity;
  pid_t pgid = 0;
  // The pod's cgroup directories: one for cgroup v2, one per controller for v1;
  // empty when the process runs without a cgroup.
  std::vector<std::string> cgroup_dirs;
  // Why something asked for is not in effect (limits not enforced, uid not
  // applied). Each says what the host refused and what would fix it.
  std::vector<std::string> warnings;
  bool adopted = false;  // not our child: the exit code will be unknown
};

// How a process ended.
struct ProcessExit {
  enum class Cause {
    kExited,    // exit_code is set
    kSignaled,  // signal is set
    kUnknown,   // an adopted process: it is gone, but only its parent learnt how
    kNotStarted,  // its pod reaper never ran the command: the agent that launched it went away first
  };
  Cause cause = Cause::kUnknown;
  int exit_code = -1;
  int signal = 0;
  // The kernel's OOM killer killed a process of the pod's cgroup (its
  // oom_kill counter is non-zero). Without a memory cgroup this is never
  // set: a SIGKILL alone does not mean out of memory.
  bool oom_killed = false;

  std::string Describe() const;  // "exited with code 3", "killed by signal 9 (Killed), out of memory", ...
};

// Where pod cgroups are created. cgroup v2 has one hierarchy (one parent
// directory); cgroup v1 has one per controller, and either may be missing.
struct CgroupPlacement {
  enum class Version { kNone, kV1, kV2 };
  Version version = Version::kNone;
  std::string v2_parent;
  std::string v1_cpu_parent;     // empty: no v1 cpu hierarchy
  std::string v1_memory_parent;  // empty: no v1 memory hierarchy
  std::string why_none;          // kNone: why there are no cgroups to use

  static CgroupPlacement V2(std::string parent);
  static CgroupPlacement V1(std::string cpu_parent, std::string memory_parent);
  static CgroupPlacement None(std::string why);
};

// The agent's own cgroups, from /proc/self/cgroup and /proc/self/mountinfo:
// cgroup v2 when its hierarchy offers both the cpu and memory controllers,
// else cgroup v1 for the controllers mounted there, else None with the reason.
CgroupPlacement DetectCgroupPlacement();

// Whether the OOM killer killed a process of the cgroup at `cgroups_path` (as
// an OCI runtime's absolute cgroupsPath names it, "/tessera-node_pod"), read
// from its memory controller (cgroup v1 memory.oom_control or v2
// memory.events) before the runtime removes it; false when it is not there.
bool CgroupOomKilled(std::string_view cgroups_path);

struct ProcessRunnerOptions {
  // nullopt: DetectCgroupPlacement(), on the first call that needs it.
  std::optional<CgroupPlacement> cgroups;
  // The pod reaper program (src/agent/pod_reaper_main.cc), which leads a pod
  // started with ProcessSpec::exit_status_path; empty: DefaultPodReaperPath().
  std::string pod_reaper;
  // Who owns the cgroups this runner makes: they are named
  // "tessera-<owner>_<name>", and RemoveStaleCgroups removes only those. The
  // agent gives its node name, so that agents sharing a host (a test, a
  // workstation running two) never remove each other's. Empty: "tessera-<name>",
  // and RemoveStaleCgroups removes every empty "tessera-*" cgroup.
  std::string cgroup_owner;
};

// tessera-pod-reaper beside this program (/proc/self/exe) when it is there, else
// where the build put it.
std::string DefaultPodReaperPath();

// How `process` (a pod reaper, the process a Start returned) that ran with
// ProcessSpec::exit_status_path ended. A pod's successive processes share that
// file, each adding a line with its pid and start time, so a later start
// leaves an earlier process's outcome readable and a pid used again is not
// mistaken for it. Cause::kUnknown when the file has no line of the process's
// (the reaper was killed before it could write).
ProcessExit ReadExitStatusFile(const std::string& path, const ProcessIdentity& process);

class ProcessRunner {
 public:
  explicit ProcessRunner(ProcessRunnerOptions options = {});
  ProcessRunner(const ProcessRunner&) = delete;
  ProcessRunner& operator=(const ProcessRunner&) = delete;

  // Starts `spec` as the leader of a new session and process group. Returns an
  // error, with no process left behind, when it cannot run: the command is not
  // found (NotFound "command not found: NAME"), the working directory is missing,
  // exec fails, or a cgroup named for this spec still holds processes (Conflict:
  // a previous run of the pod is alive).
  Result<RunningProcess> Start(const ProcessSpec& spec);

  // Start for each spec, in order, with the same results; but every process is
  // launched first, and then their commands run together, instead of each
  // Start waiting for its command's exec before the next begins.
  // `before_running`, when set, is called once every process is launched and
  // before any command led by a pod reaper (a spec with exit_status_path) runs,
  // with each one's identity (nullopt: it could not be launched), so that the
  // caller can record them first: such a reaper runs its command only after
  // this returns true, and never if the agent dies before
  // (ProcessExit::Cause::kNotStarted in its exit status file). Returning false
  // (or throwing) holds them all back: each of those starts fails with
  // Unavailable, leaving nothing behind. A spec without a reaper has no such
  // gate: its command runs as soon as it is launched.
  using BeforeRunning = std::function<bool(const std::vector<std::optional<ProcessIdentity>>& launched)>;
  std::vector<Result<RunningProcess>> StartAll(const std::vector<ProcessSpec>& specs,
                                               const BeforeRunning& before_running = nullptr);

  // Takes over a process that an earlier agent started. NotFound when it is no
  // longer running with that identity (ended, or the pid now belongs to another
  // process). Its cgroup is found again among ours, for OOM detection and cleanup.
  // `exit_status_path`: the ProcessSpec's, to learn how the process ended.
  Result<RunningProcess> Adopt(const ProcessIdentity& identity, const std::string& exit_status_path = "");

  // Sends `signal` to the process group led by `identity`, only when that
  // identity still matches: NotFound when the pid is gone, Conflict when it now
  // belongs to another process. Works on any process group leader, tracked or not.
  Status Signal(const ProcessIdentity& identity, int signal);

  // Step one of termination: SIGTERM to the group now, and SIGKILL from the
  // first Poll at or after now + grace if the process has not ended by then.
  // Returns at once. A second call never extends the deadline. A grace of 0
  // sends SIGKILL at once. NotFound when the runner does not track `identity`.
  Status BeginTermination(const ProcessIdentity& identity, Duration grace, Timestamp now);

  // Non-blocking. nullopt while the process runs (after sending SIGKILL when its
  // termination deadline has passed); its exit, once, when it has ended; after
  // that the runner forgets it. NotFound when the runner does not track it.
  Result<std::optional<ProcessExit>> Poll(const ProcessIdentity& identity, Timestamp now);

  // The earliest termination deadline still pending, so that the agent's loop
  // knows when to Poll next; Timestamp::Never() when none is.
  Timestamp NextKillDeadline() const;

  // Removes the cgroups of ended pods whose last processes were still exiting
  // when Poll reported the end (a SIGKILLed child takes a moment to leave).
  // Cheap; Poll calls it, and the agent's loop should too while no pod runs.
  // Returns how many are still waiting.
  size_t RetryCgroupRemovals();

  // For a restarted agent: removes every empty cgroup of this runner's owner
  // (ProcessRunnerOptions::cgroup_owner) under the parents, left by pods that
  // ended while no agent ran or whose removal was still pending when the last
  // agent stopped. A cgroup that still holds a process is never removed (the
  // kernel refuses). REQUIRES: no other runner with the same owner creates
  // cgroups under the same parents.
  void RemoveStaleCgroups();

  size_t tracked_count() const { return tracked_.size(); }

 private:
  struct Tracked {
    RunningProcess process;
    std::string memory_cgroup_dir;  // where oom_kill is counted; empty: none
    std::string exit_status_path;   // adopted: where the reaper wrote the exit status
    std::optional<Timestamp> kill_at;
    bool kill_sent = false;
  };

  // A process cloned (its reaper exec'd) whose command's exec is not yet confirmed.
  struct Launched {
    pid_t pid = 0;
    RunningProcess process;
    UniqueFd report;  // the reaper's one ChildFailure (stage kNone: the command runs); invalid without a reaper
    UniqueFd gate;    // a byte on it lets the reaper run the command (Release); invalid without a reaper
    std::string executable;
    std::string memory_cgroup_dir;
  };
  // Start's steps up to the clone; Confirm waits for the reaper's report and tracks the process.
  Result<Launched> Launch(const ProcessSpec& spec);
  // Lets a launched reaper run its command (once; Confirm does it if not yet done).
  static void Release(Launched& launched);
  // Tells a launched reaper never to run its command (Confirm then fails).
  static void HoldBack(Launched& launched) { launched.gate.Reset(); }
  Result<RunningProcess> Confirm(Launched launched, const ProcessSpec& spec);
  // Kills and reaps a new process that cannot be used, removes its cgroups; returns `why`.
  Status Abandon(pid_t pid, const std::vector<std::string>& cgroup_dirs, Status why);
  void RemoveCgroups(const std::vector<std::string>& dirs);

  const CgroupPlacement& Placement();
  const std::string& PodReaper();
  ProcessExit Finish(Tracked& tracked, ProcessExit exit);

  // "tessera-", and the owner's name with '_' after it when there is one.
  std::string CgroupLeafPrefix() const;
  ProcessRunnerOptions options_;
  std::map<pid_t, Tracked> tracked_;
  // Cgroup directories whose last processes were still exiting when we tried
  // to remove them; retried on each Poll.
  std::vector<std::string> cgroups_to_remove_;
  uint64_t unnamed_runs_ = 0;
};

}  // namespace tessera
