#include "agent/process_runner.h"

#include <dirent.h>
#include <fcntl.h>
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <linux/close_range.h>
#include <linux/magic.h>
#include <sched.h>
#include <signal.h>
#include <sys/mman.h>
#include <linux/mount.h>
#include <sys/mount.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <string_view>
#include <utility>

#include "agent/spawn_report.h"
#include "common/check.h"
#include "common/unique_fd.h"

namespace tessera {

namespace {

// ---------------------------------------------------------------------------
// Small I/O helpers.

// The child dup2()s its descriptors onto 0, 1 and 2; one that already is 0, 1 or
// 2 (when the agent runs with a standard stream closed) would keep its
// close-on-exec flag through dup2 and vanish at exec. So ours live above them.
Result<UniqueFd> AboveStdio(int fd, std::string_view what) {
  if (fd < 0) return Err(Status::IoError(fmt::format("cannot open {}: {}", what, ErrnoText(errno))));
  if (fd > STDERR_FILENO) return UniqueFd(fd);
  const int moved = ::fcntl(fd, F_DUPFD_CLOEXEC, STDERR_FILENO + 1);
  const int error = errno;
  ::close(fd);
  if (moved < 0) return Err(Status::IoError(fmt::format("cannot open {}: {}", what, ErrnoText(error))));
  return UniqueFd(moved);
}

struct Pipe {
  UniqueFd read_end;
  UniqueFd write_end;
};

// The two descriptors of a new pipe or socket pair, both moved above stdio.
Result<Pipe> PipeOf(const int (&fds)[2], const char* what) {
  Result<UniqueFd> read_end = AboveStdio(fds[0], what);
  if (!read_end) {
    ::close(fds[1]);
    return Err(read_end.error());
  }
  ASSIGN_OR_RETURN(UniqueFd write_end, AboveStdio(fds[1], what));
  return Pipe{std::move(*read_end), std::move(write_end)};
}

Result<Pipe> MakePipe() {
  int fds[2];
  if (::pipe2(fds, O_CLOEXEC) != 0)
    return Err(Status::IoError(fmt::format("cannot create a pipe: {}", ErrnoText(errno))));
  return PipeOf(fds, "a pipe");
}

// A pod reaper's gate: one byte on it lets the reaper run the command; the
// agent's end closing first (the agent is gone) tells it not to. A socket
// rather than a pipe, so that writing to a reaper that died already is an
// error (MSG_NOSIGNAL), not a SIGPIPE to the agent.
Result<Pipe> MakeGate() {
  int fds[2];
  if (::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, fds) != 0)
    return Err(Status::IoError(fmt::format("cannot create a socket pair: {}", ErrnoText(errno))));
  return PipeOf(fds, "a socket pair");
}

// Reads a small file (/proc, cgroupfs) whole. NotFound when it does not exist.
Result<std::string> ReadSmallFile(const std::string& path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    const int error = errno;
    if (error == ENOENT || error == ESRCH) return Err(Status::NotFound(fmt::format("{} does not exist", path)));
    return Err(Status::IoError(fmt::format("cannot read {}: {}", path, ErrnoText(error))));
  }
  UniqueFd owner(fd);
  std::string out;
  char buf[4096];
  while (true) {
    const ssize_t n = ::read(fd, buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      const int error = errno;
      // Reading /proc/<pid>/stat of a process that just vanished gives ESRCH.
      if (error == ESRCH) return Err(Status::NotFound(fmt::format("{} does not exist", path)));
      return Err(Status::IoError(fmt::format("cannot read {}: {}", path, ErrnoText(error))));
    }
    if (n == 0) break;
    out.append(buf, static_cast<size_t>(n));
  }
  return out;
}

// Writes `content` in one write(), as cgroupfs control files expect. On failure
// `*error` (when given) is the errno, for callers whose advice depends on it.
Status WriteControlFile(const std::string& path, std::string_view content, int* error = nullptr) {
  const int fd = ::open(path.c_str(), O_WRONLY | O_CLOEXEC);
  if (fd < 0) {
    if (error != nullptr) *error = errno;
    return Status::IoError(fmt::format("cannot open {}: {}", path, ErrnoText(errno)));
  }
  UniqueFd owner(fd);
  ssize_t n;
  do {
    n = ::write(fd, content.data(), content.size());
  } while (n < 0 && errno == EINTR);
  if (n < 0) {
    if (error != nullptr) *error = errno;
    return Status::IoError(fmt::format("cannot write \"{}\" to {}: {}", content, path, ErrnoText(errno)));
  }
  return Status::Ok();
}

std::vector<std::string_view> Split(std::string_view s, char sep) {
  std::vector<std::string_view> out;
  while (true) {
    const size_t at = s.find(sep);
    out.push_back(s.substr(0, at));
    if (at == std::string_view::npos) break;
    s.remove_prefix(at + 1);
  }
  return out;
}

std::vector<std::string_view> Words(std::string_view s) {
  std::vector<std::string_view> out;
  for (std::string_view w : Split(s, ' ')) {
    while (!w.empty() && (w.back() == '\n' || w.back() == '\t')) w.remove_suffix(1);
    if (!w.empty()) out.push_back(w);
  }
  return out;
}

bool Contains(const std::vector<std::string_view>& items, std::string_view item) {
  return std::find(items.begin(), items.end(), item) != items.end();
}

std::optional<int64_t> ParseInt(std::string_view s) {
  if (s.empty()) return std::nullopt;
  int64_t v = 0;
  for (char c : s) {
    if (c < '0' || c > '9') return std::nullopt;
    if (__builtin_mul_overflow(v, 10, &v) || __builtin_add_overflow(v, c - '0', &v)) return std::nullopt;
  }
  return v;
}

// ---------------------------------------------------------------------------
// /proc/<pid>/stat.

struct ProcStat {
  char state = '?';  // R, S, D, Z (zombie), X (dead), ...
  pid_t pgid = 0;
  uint64_t start_ticks = 0;
};

Result<ProcStat> ReadProcStat(pid_t pid) {
  if (pid <= 0) return Err(Status::InvalidArgument(fmt::format("{} is not a pid", pid)));
  ASSIGN_OR_RETURN(std::string text, ReadSmallFile(fmt::format("/proc/{}/stat", pid)));
  // "pid (comm) state ppid pgrp ...": comm may hold spaces and ')', so the
  // fields are counted from the last ')'. After it, field 3 (state) is index 0.
  const size_t paren = text.rfind(')');
  if (paren == std::string::npos || paren + 2 > text.size()) {
    return Err(Status::Corruption(fmt::format("/proc/{}/stat is malformed", pid)));
  }
  const std::vector<std::string_view> fields = Words(std::string_view(text).substr(paren + 2));
  constexpr size_t kStateIndex = 0;       // field 3
  constexpr size_t kPgrpIndex = 2;        // field 5
  constexpr size_t kStartTimeIndex = 19;  // field 22
  if (fields.size() <= kStartTimeIndex || fields[kStateIndex].empty()) {
    return Err(Status::Corruption(fmt::format("/proc/{}/stat has too few fields", pid)));
  }
  const std::optional<int64_t> pgid = ParseInt(fields[kPgrpIndex]);
  const std::optional<int64_t> start = ParseInt(fields[kStartTimeIndex]);
  if (!pgid || !start) return Err(Status::Corruption(fmt::format("/proc/{}/stat has non-numeric fields", pid)));
  return ProcStat{fields[kStateIndex][0], static_cast<pid_t>(*pgid), static_cast<uint64_t>(*start)};
}

bool HasEnded(const ProcStat& stat) { return stat.state == 'Z' || stat.state == 'X'; }

// ---------------------------------------------------------------------------
// The child's environment and command.

constexpr std::string_view kDefaultPath = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin";

std::string_view EnvKey(std::string_view entry) { return entry.substr(0, entry.find('=')); }

// The minimal base (PATH, HOME, LANG as the agent has them), then `overrides`.
Result<std::vector<std::string>> BuildEnvironment(const std::vector<std::string>& overrides) {
  std::vector<std::string> env;
  const char* path = std::getenv("PATH");
  env.push_back(fmt::format("PATH={}", path != nullptr ? std::string_view(path) : kDefaultPath));
  for (const char* key : {"HOME", "LANG"}) {
    if (const char* value = std::getenv(key)) env.push_back(fmt::format("{}={}", key, value));
  }
  for (const std::string& entry : overrides) {
    const size_t eq = entry.find('=');
    if (eq == std::string::npos || eq == 0) {
      return Err(Status::InvalidArgument(fmt::format("environment entry \"{}\" is not KEY=VALUE", entry)));
    }
    if (entry.find('\0') != std::string::npos) {
      return Err(Status::InvalidArgument(fmt::format("environment entry for {} holds a NUL byte", EnvKey(entry))));
    }
    auto same_key = [&](const std::string& e) { return EnvKey(e) == EnvKey(entry); };
    if (auto it = std::find_if(env.begin(), env.end(), same_key); it != env.end()) {
      *it = entry;
    } else {
      env.push_back(entry);
    }
  }
  return env;
}

std::string_view LookupEnv(const std::vector<std::string>& env, std::string_view key) {
  for (const std::string& e : env) {
    if (EnvKey(e) == key) return std::string_view(e).substr(key.size() + 1);
  }
  return {};
}

// Whether `who` (the child's uid and gid; nullopt: the agent's own) may run
// `file`: search on every directory above it and execute on it, by its mode
// bits (supplementary groups aside). The agent runs as root, which passes
// access(2) where the pod's user would not (a PATH entry under /root).
bool RunnableBy(const std::string& file, std::optional<uid_t> uid, std::optional<gid_t> gid) {
  if (!uid || *uid == 0) return ::access(file.c_str(), X_OK) == 0;
  auto allows = [&](const struct stat& st) {
    if (st.st_uid == *uid) return (st.st_mode & S_IXUSR) != 0;
    if (gid && st.st_gid == *gid) return (st.st_mode & S_IXGRP) != 0;
    return (st.st_mode & S_IXOTH) != 0;
  };
  for (size_t slash = file.find('/', 1); slash != std::string::npos; slash = file.find('/', slash + 1)) {
    struct stat dir;
    if (::stat(file.substr(0, slash).c_str(), &dir) != 0 || !allows(dir)) return false;
  }
  struct stat st;
  return ::stat(file.c_str(), &st) == 0 && allows(st);
}

// execvp's search, done by the parent against the child's PATH (execvp would
// search the agent's own) and before clone, so the child has nothing to allocate.
// A candidate the child's user may not run is passed over, as execvp would.
// A command containing '/' is used as given; exec reports whether it exists.
Result<std::string> ResolveCommand(const std::string& command, std::string_view path, const std::string& working_dir,
                                   std::optional<uid_t> uid, std::optional<gid_t> gid) {
  if (command.find('/') != std::string::npos) return command;
  bool found_not_executable = false;
  for (std::string_view dir : Split(path, ':')) {
    if (dir.empty()) continue;  // an empty entry means "." to execvp: ambiguous, skipped
    std::string candidate =
        dir.front() == '/' ? fmt::format("{}/{}", dir, command) : fmt::format("{}/{}/{}", working_dir, dir, command);
    struct stat st;
    if (::stat(candidate.c_str(), &st) != 0 || !S_ISREG(st.st_mode)) continue;
    if (RunnableBy(candidate, uid, gid)) return candidate;
    found_not_executable = true;
  }
  if (found_not_executable) {
    return Err(Status::PermissionDenied(fmt::format("command {} is not executable (PATH={})", command, path)));
  }
  return Err(Status::NotFound(fmt::format("command not found: {} (looked in PATH={})", command, path)));
}

Status CheckWorkingDir(const std::string& dir) {
  if (dir.empty()) return Status::InvalidArgument("a process needs a working directory");
  struct stat st;
  if (::stat(dir.c_str(), &st) != 0) {
    return Status::NotFound(fmt::format("working directory {} cannot be used: {}", dir, ErrnoText(errno)));
  }
  if (!S_ISDIR(st.st_mode)) return Status::InvalidArgument(fmt::format("working directory {} is not a directory", dir));
  return Status::Ok();
}

// ---------------------------------------------------------------------------
// Cgroups.

constexpr std::string_view kCgroupPrefix = "tessera-";
constexpr size_t kMaxCgroupLeaf = 240;
constexpr int64_t kCpuPeriodMicros = 100'000;  // the kernel's default CFS period
constexpr int64_t kMinCpuQuotaMicros = 1'000;  // the kernel refuses less

std::string JoinPath(std::string_view dir, std::string_view name) {
  if (!dir.empty() && dir.back() == '/') return fmt::format("{}{}", dir, name);
  return fmt::format("{}/{}", dir, name);
}

// Empty when `dir` is a directory of the given cgroup version; else why not.
std::string NotACgroupReason(const std::string& dir, CgroupPlacement::Version version) {
  struct statfs fs;
  if (::statfs(dir.c_str(), &fs) != 0) return fmt::format("{}: {}", dir, ErrnoText(errno));
  const bool v2 = version == CgroupPlacement::Version::kV2;
  const auto want = static_cast<decltype(fs.f_type)>(v2 ? CGROUP2_SUPER_MAGIC : CGROUP_SUPER_MAGIC);
  if (fs.f_type != want) return fmt::format("{} is not in a cgroup {} file system", dir, v2 ? "v2" : "v1");
  return {};
}

// A pod's cgroup dirs and what its setup could not do.
struct CgroupSetup {
  std::vector<std::string> dirs;
  std::string memory_dir;
  std::vector<std::string> warnings;
};

// Creates `dir` fresh. A leftover from an earlier run is removed when empty; one
// that still holds processes means that run is alive: Conflict.
// Other failures are returned as the warning text, in `why`.
Status MakeLeafCgroup(const std::string& dir, std::string* why) {
  if (::mkdir(dir.c_str(), 0755) == 0) return Status::Ok();
  if (errno == EEXIST) {
    if (::rmdir(dir.c_str()) != 0) {
      if (errno == EBUSY) {
        return Status::Conflict(fmt::format(
            "cgroup {} still holds processes: an earlier run of this pod is alive; terminate it first", dir));
      }
      *why = fmt::format("cannot remove the stale cgroup {}: {}", dir, ErrnoText(errno));
      return Status::Ok();
    }
    if (::mkdir(dir.c_str(), 0755) == 0) return Status::Ok();
  }
  *why = fmt::format("cannot create cgroup {}: {}", dir, ErrnoText(errno));
  return Status::Ok();
}

int64_t CpuQuotaMicros(int64_t millicores) {
  // quota / period = millicores / 1000, so quota = millicores * period / 1000.
  int64_t quota = 0;
  if (__builtin_mul_overflow(millicores, kCpuPeriodMicros / 1000, &quota)) quota = INT64_MAX;
  return std::max(quota, kMinCpuQuotaMicros);
}

Result<CgroupSetup> CreateV2Cgroup(const std::string& parent, const std::string& leaf, const ResourceLimits& limits) {
  CgroupSetup setup;
  auto not_enforced = [&](std::string why) {
    setup.warnings.push_back(fmt::format("cpu and memory limits not enforced: {}", why));
    return setup;
  };
  if (std::string why = NotACgroupReason(parent, CgroupPlacement::Version::kV2); !why.empty()) {
    return not_enforced(std::move(why));
  }
  std::vector<std::string_view> needed;
  if (limits.cpu_millicores) needed.push_back("cpu");
  if (limits.memory_bytes) needed.push_back("memory");

  // A v2 controller works in a child only when the parent has it (delegated from
  // above) and enables it for its children in cgroup.subtree_control.
  const std::string controllers_path = JoinPath(parent, "cgroup.controllers");
  Result<std::string> available_text = ReadSmallFile(controllers_path);
  if (!available_text) return not_enforced(available_text.error().message());
  const std::vector<std::string_view> available = Words(*available_text);
  for (std::string_view c : needed) {
    if (!Contains(available, c)) {
      return not_enforced(
          fmt::format("the {} controller is not delegated to {} (its cgroup.controllers lists \"{}\"); "
                      "delegate it, or configure a parent cgroup that has it",
                      c, parent, fmt::join(available, " ")));
    }
  }
  const std::string subtree_path = JoinPath(parent, "cgroup.subtree_control");
  Result<std::string> enabled_text = ReadSmallFile(subtree_path);
  if (!enabled_text) return not_enforced(enabled_text.error().message());
  const std::vector<std::string_view> enabled = Words(*enabled_text);
  std::string to_enable;
  for (std::string_view c : needed) {
    if (!Contains(enabled, c)) to_enable += fmt::format("{}+{}", to_enable.empty() ? "" : " ", c);
  }
  if (!to_enable.empty()) {
    int error = 0;
    if (Status s = WriteControlFile(subtree_path, to_enable, &error); !s.ok()) {
      return not_enforced(fmt::format(
          "{}{}", s.message(),
          error == EBUSY ? " (cgroup v2 enables controllers only for cgroups without processes of their own: "
                           "run the agent in a leaf and give it a dedicated parent cgroup for pods)"
                         : ""));
    }
  }

  const std::string dir = JoinPath(parent, leaf);
  std::string why;
  RETURN_IF_ERROR(MakeLeafCgroup(dir, &why));
  if (!why.empty()) return not_enforced(std::move(why));
  Status written;
  if (limits.cpu_millicores) {
    written = WriteControlFile(JoinPath(dir, "cpu.max"),
                               fmt::format("{} {}", CpuQuotaMicros(*limits.cpu_millicores), kCpuPeriodMicros));
  }
  if (written.ok() && limits.memory_bytes) {
    written = WriteControlFile(JoinPath(dir, "memory.max"), fmt::format("{}", *limits.memory_bytes));
    // Best effort: absent when the kernel does not account swap.
    if (written.ok()) (void)WriteControlFile(JoinPath(dir, "memory.swap.max"), "0");
  }
  if (!written.ok()) {
    ::rmdir(dir.c_str());
    return not_enforced(written.message());
  }
  setup.dirs.push_back(dir);
  if (limits.memory_bytes) setup.memory_dir = dir;
  return setup;
}

// cgroup v1: one hierarchy per controller, each set up (or not) on its own.
Result<CgroupSetup> CreateV1Cgroups(const CgroupPlacement& placement, const std::string& leaf,
                                    const ResourceLimits& limits) {
  CgroupSetup setup;
  struct Controller {
    std::string_view name;
    const std::string& parent;
    std::vector<std::pair<std::string, std::string>> writes;  // file, value; in order
    std::vector<std::pair<std::string, std::string>> best_effort_writes;
  };
  std::vector<Controller> controllers;
  if (limits.cpu_millicores) {
    controllers.push_back({"cpu",
                           placement.v1_cpu_parent,
                           {{"cpu.cfs_period_us", fmt::format("{}", kCpuPeriodMicros)},
                            {"cpu.cfs_quota_us", fmt::format("{}", CpuQuotaMicros(*limits.cpu_millicores))}},
                           {}});
  }
  if (limits.memory_bytes) {
    // memsw (memory + swap) must be set after, and at least, the memory limit.
    controllers.push_back({"memory",
                           placement.v1_memory_parent,
                           {{"memory.limit_in_bytes", fmt::format("{}", *limits.memory_bytes)}},
                           {{"memory.memsw.limit_in_bytes", fmt::format("{}", *limits.memory_bytes)}}});
  }
  for (const Controller& c : controllers) {
    auto not_enforced = [&](std::string why) {
      setup.warnings.push_back(fmt::format("{} limit not enforced: {}", c.name, why));
    };
    if (c.parent.empty()) {
      not_enforced(fmt::format("no cgroup v1 {} hierarchy is mounted", c.name));
      continue;
    }
    if (std::string why = NotACgroupReason(c.parent, CgroupPlacement::Version::kV1); !why.empty()) {
      not_enforced(std::move(why));
      continue;
    }
    const std::string dir = JoinPath(c.parent, leaf);
    std::string why;
    if (Status made = MakeLeafCgroup(dir, &why); !made.ok()) {
      for (const std::string& created : setup.dirs) ::rmdir(created.c_str());
      return Err(std::move(made));
    }
    if (!why.empty()) {
      not_enforced(std::move(why));
      continue;
    }
    Status written;
    for (const auto& [file, value] : c.writes) {
      if (written.ok()) written = WriteControlFile(JoinPath(dir, file), value);
    }
    if (!written.ok()) {
      ::rmdir(dir.c_str());
      not_enforced(written.message());
      continue;
    }
    for (const auto& [file, value] : c.best_effort_writes) (void)WriteControlFile(JoinPath(dir, file), value);
    setup.dirs.push_back(dir);
    if (c.name == "memory") setup.memory_dir = dir;
  }
  return setup;
}

Result<CgroupSetup> CreatePodCgroup(const CgroupPlacement& placement, const std::string& leaf,
                                    const ResourceLimits& limits) {
  switch (placement.version) {
    case CgroupPlacement::Version::kV2:
      return CreateV2Cgroup(placement.v2_parent, leaf, limits);
    case CgroupPlacement::Version::kV1:
      return CreateV1Cgroups(placement, leaf, limits);
    case CgroupPlacement::Version::kNone:
      break;
  }
  return CgroupSetup{.warnings = {fmt::format("cpu and memory limits not enforced: {}", placement.why_none)}};
}

// The number after "oom_kill" in memory.events (v2) or memory.oom_control (v1).
int64_t ReadOomKills(const std::string& memory_dir) {
  for (const char* file : {"memory.events", "memory.oom_control"}) {
    Result<std::string> text = ReadSmallFile(JoinPath(memory_dir, file));
    if (!text) continue;
    for (std::string_view line : Split(*text, '\n')) {
      const std::vector<std::string_view> words = Words(line);
      if (words.size() == 2 && words[0] == "oom_kill") return ParseInt(words[1]).value_or(0);
    }
  }
  return 0;
}

std::vector<pid_t> CgroupMembers(const std::string& dir) {
  std::vector<pid_t> pids;
  Result<std::string> text = ReadSmallFile(JoinPath(dir, "cgroup.procs"));
  if (!text) return pids;
  for (std::string_view line : Split(*text, '\n')) {
    if (std::optional<int64_t> pid = ParseInt(line)) pids.push_back(static_cast<pid_t>(*pid));
  }
  return pids;
}

// SIGKILLs every process in the cgroup, including those that left the pod's
// process group. cgroup.kill (v2, Linux 5.14) does it atomically; otherwise the
// members are killed one by one (a member forking meanwhile lands in the cgroup
// too, so a second pass catches it).
void KillCgroupMembers(const std::string& dir) {
  if (WriteControlFile(JoinPath(dir, "cgroup.kill"), "1").ok()) return;
  for (int pass = 0; pass < 3; ++pass) {
    const std::vector<pid_t> members = CgroupMembers(dir);
    if (members.empty()) return;
    for (pid_t pid : members) ::kill(pid, SIGKILL);
  }
}

// The directories pod cgroups are made in.
std::vector<std::string> CgroupParents(const CgroupPlacement& placement) {
  std::vector<std::string> parents;
  for (const std::string* parent : {&placement.v2_parent, &placement.v1_cpu_parent, &placement.v1_memory_parent}) {
    if (!parent->empty()) parents.push_back(*parent);
  }
  return parents;
}

// The "tessera-*" cgroups under `parent`: the ones runners made.
std::vector<std::string> OurCgroupsUnder(const std::string& parent) {
  std::vector<std::string> dirs;
  DIR* listing = ::opendir(parent.c_str());
  if (listing == nullptr) return dirs;
  while (const dirent* entry = ::readdir(listing)) {
    if (entry->d_type == DT_DIR && std::string_view(entry->d_name).starts_with(kCgroupPrefix)) {
      dirs.push_back(JoinPath(parent, entry->d_name));
    }
  }
  ::closedir(listing);
  return dirs;
}

// Removes `dir`; false when its last processes are still exiting (retry later).
bool RemoveCgroupDir(const std::string& dir) { return ::rmdir(dir.c_str()) == 0 || errno != EBUSY; }

// ---------------------------------------------------------------------------
// Cgroup detection.

struct CgroupMount {
  std::string root;         // the part of the hierarchy mounted (field 4)
  std::string mount_point;  // field 5
  std::string fs_type;      // "cgroup" or "cgroup2"
  std::vector<std::string> super_options;
};

std::vector<CgroupMount> ReadCgroupMounts() {
  std::vector<CgroupMount> mounts;
  Result<std::string> text = ReadSmallFile("/proc/self/mountinfo");
  if (!text) return mounts;
  for (std::string_view line : Split(*text, '\n')) {
    // "id parent dev root mount_point options [optional...] - fs_type source super_options"
    const std::vector<std::string_view> f = Words(line);
    const auto dash = std::find(f.begin(), f.end(), "-");
    if (f.size() < 5 || dash == f.end() || f.end() - dash < 4) continue;
    const std::string_view fs_type = *(dash + 1);
    if (fs_type != "cgroup" && fs_type != "cgroup2") continue;
    CgroupMount m{std::string(f[3]), std::string(f[4]), std::string(fs_type), {}};
    for (std::string_view o : Split(*(dash + 3), ',')) m.super_options.emplace_back(o);
    mounts.push_back(std::move(m));
  }
  return mounts;
}

// Where the cgroup at `path` (as /proc/self/cgroup names it) is under `mount`.
std::string CgroupDirUnder(const CgroupMount& mount, std::string_view path) {
  if (mount.root != "/" && path.starts_with(mount.root)) path.remove_prefix(mount.root.size());
  while (path.starts_with('/')) path.remove_prefix(1);
  return path.empty() ? mount.mount_point : JoinPath(mount.mount_point, path);
}

}  // namespace

// ---------------------------------------------------------------------------
// Public value types.

std::string ProcessIdentity::ToString() const { return fmt::format("pid {} (start tick {})", pid, start_ticks); }

Result<uint64_t> ReadStartTicks(pid_t pid) {
  ASSIGN_OR_RETURN(ProcStat stat, ReadProcStat(pid));
  return stat.start_ticks;
}

bool IsRunning(const ProcessIdentity& identity) {
  Result<ProcStat> stat = ReadProcStat(identity.pid);
  return stat && stat->start_ticks == identity.start_ticks && !HasEnded(*stat);
}

std::string ProcessExit::Describe() const {
  std::string out;
  switch (cause) {
    case Cause::kExited:
      out = fmt::format("exited with code {}", exit_code);
      break;
    case Cause::kSignaled: {
      const char* abbrev = sigabbrev_np(signal);
      out = abbrev != nullptr ? fmt::format("killed by signal {} (SIG{})", signal, abbrev)
                              : fmt::format("killed by signal {}", signal);
      break;
    }
    case Cause::kUnknown:
      out = "ended; exit code unknown (the process was adopted, so it was not this agent's child)";
      break;
    case Cause::kNotStarted:
      out = "never started (the agent that launched it went away before letting it run)";
      break;
  }
  if (oom_killed) out += "; the OOM killer killed a process of the pod (memory limit reached)";
  return out;
}

CgroupPlacement CgroupPlacement::V2(std::string parent) {
  return {.version = Version::kV2, .v2_parent = std::move(parent)};
}
CgroupPlacement CgroupPlacement::V1(std::string cpu_parent, std::string memory_parent) {
  return {
      .version = Version::kV1, .v1_cpu_parent = std::move(cpu_parent), .v1_memory_parent = std::move(memory_parent)};
}
CgroupPlacement CgroupPlacement::None(std::string why) {
  return {.version = Version::kNone, .why_none = std::move(why)};
}

CgroupPlacement DetectCgroupPlacement() {
  Result<std::string> self = ReadSmallFile("/proc/self/cgroup");
  if (!self) return CgroupPlacement::None(self.error().message());
  const std::vector<CgroupMount> mounts = ReadCgroupMounts();

  // /proc/self/cgroup lines: "hierarchy-id:controllers:path"; v2's is "0::path".
  std::string v2_dir;
  std::string v1_cpu_dir;
  std::string v1_memory_dir;
  for (std::string_view line : Split(*self, '\n')) {
    const size_t first = line.find(':');
    const size_t second = line.find(':', first + 1);
    if (first == std::string_view::npos || second == std::string_view::npos) continue;
    const std::string_view controllers = line.substr(first + 1, second - first - 1);
    const std::string_view path = line.substr(second + 1);
    for (const CgroupMount& m : mounts) {
      if (controllers.empty() && line.starts_with("0:") && m.fs_type == "cgroup2") {
        v2_dir = CgroupDirUnder(m, path);
      }
      if (m.fs_type != "cgroup") continue;
      const std::vector<std::string_view> names = Split(controllers, ',');
      auto mounted_here = [&](std::string_view c) {
        return Contains(names, c) &&
               std::find(m.super_options.begin(), m.super_options.end(), c) != m.super_options.end();
      };
      if (mounted_here("cpu")) v1_cpu_dir = CgroupDirUnder(m, path);
      if (mounted_here("memory")) v1_memory_dir = CgroupDirUnder(m, path);
    }
  }

  std::string v2_offers;
  if (!v2_dir.empty()) {
    Result<std::string> text = ReadSmallFile(JoinPath(v2_dir, "cgroup.controllers"));
    const std::vector<std::string_view> offered = text ? Words(*text) : std::vector<std::string_view>{};
    if (Contains(offered, "cpu") && Contains(offered, "memory")) return CgroupPlacement::V2(v2_dir);
    v2_offers = fmt::format("the agent's cgroup v2 {} offers only \"{}\"", v2_dir, fmt::join(offered, " "));
  }
  if (!v1_cpu_dir.empty() || !v1_memory_dir.empty()) return CgroupPlacement::V1(v1_cpu_dir, v1_memory_dir);
  if (!v2_offers.empty()) {
    return CgroupPlacement::None(
        fmt::format("{}, not both cpu and memory, and no cgroup v1 cpu or memory hierarchy is mounted; delegate the "
                    "controllers to the agent's cgroup",
                    v2_offers));
  }
  return CgroupPlacement::None("no cgroup file system is mounted (looked in /proc/self/mountinfo)");
}

bool CgroupOomKilled(std::string_view cgroups_path) {
  for (const CgroupMount& m : ReadCgroupMounts()) {
    const bool memory = m.fs_type == "cgroup2" ||
                        std::find(m.super_options.begin(), m.super_options.end(), "memory") != m.super_options.end();
    if (!memory) continue;
    std::string_view path = cgroups_path;
    while (path.starts_with('/')) path.remove_prefix(1);
    if (ReadOomKills(JoinPath(m.mount_point, path)) > 0) return true;
  }
  return false;
}

// ---------------------------------------------------------------------------
// The child, between clone and exec. It shares the agent's memory (CLONE_VM)
// while the agent's thread waits (CLONE_VFORK), as posix_spawn does, so that no
// page table is copied. Only async-signal-safe calls: another thread of the
// agent may hold the malloc lock (or any other), and nothing may be allocated.
// Every input is prepared by the parent; the results go back in the plan.

namespace {

constexpr size_t kMaxPodCgroups = 3;  // v2: one; v1: cpu and memory
constexpr size_t kMaxVisiblePaths = 8;  // a pod's own directories inside the hidden ones
constexpr size_t kChildStackBytes = 128 * 1024;

struct ChildPlan {
  const char* executable = nullptr;  // the command, or the pod reaper
  char* const* argv = nullptr;
  char* const* envp = nullptr;
  const char* working_dir = nullptr;
  int stdin_fd = -1;
  int output_fd = -1;
  // The pod reaper's descriptors, kept open across its exec; -1 without a reaper.
  int status_fd = -1;
  int report_fd = -1;
  int gate_fd = -1;
  int netns_fd = -1;  // ProcessSpec::netns_path, opened; -1: the agent's network
  // cgroup.procs files the child moves itself into, before anything else runs.
  const char* cgroup_procs[kMaxPodCgroups] = {};
  bool set_gid = false;
  gid_t gid = 0;
  bool set_uid = false;
  uid_t uid = 0;
  // The private view (ProcessSpec::hidden_paths): null-terminated lists.
  bool private_mounts = false;
  const char* const* visible = nullptr;    // copied (open_tree) before the hiding, put back after
  const char* const* hide = nullptr;       // a tmpfs over each
  const char* const* make_dirs = nullptr;  // the places, in those tmpfs, the visible ones go back to
  int visible_trees[kMaxVisiblePaths] = {};

  // Written by the child, read by the parent once clone returns.
  int cgroup_errors[kMaxPodCgroups] = {};  // errno per cgroup_procs entry; 0: joined
  ChildFailure failure;                    // stage kNone: exec succeeded
};

[[noreturn]] void ChildFail(ChildPlan& plan, ChildStage stage) {
  plan.failure = ChildFailure{static_cast<int32_t>(stage), errno};
  ::_exit(127);
}

int RunChild(void* arg) {
  ChildPlan& plan = *static_cast<ChildPlan*>(arg);
  // The agent's handlers and ignored signals must not leak into the pod (an
  // ignored SIGPIPE or SIGTERM would be inherited across exec). The parent
  // blocked every signal around clone so that no handler of the agent runs here.
  struct sigaction default_action {};
  default_action.sa_handler = SIG_DFL;
  for (int sig = 1; sig < NSIG; ++sig) ::sigaction(sig, &default_action, nullptr);  // fails harmlessly for KILL, STOP
  sigset_t none;
  sigemptyset(&none);

  if (::setsid() < 0) ChildFail(plan, ChildStage::kSetsid);
  if (plan.netns_fd >= 0 && ::setns(plan.netns_fd, CLONE_NEWNET) != 0) ChildFail(plan, ChildStage::kNetworkNamespace);
  // Into the pod's cgroups before the command runs ("0" names the writer).
  for (size_t i = 0; i < kMaxPodCgroups && plan.cgroup_procs[i] != nullptr; ++i) {
    const int fd = ::open(plan.cgroup_procs[i], O_WRONLY | O_CLOEXEC);
    if (fd < 0 || ::write(fd, "0", 1) != 1) plan.cgroup_errors[i] = errno;
    if (fd >= 0) ::close(fd);
  }
  if (::dup2(plan.stdin_fd, STDIN_FILENO) < 0 || ::dup2(plan.output_fd, STDOUT_FILENO) < 0 ||
      ::dup2(plan.output_fd, STDERR_FILENO) < 0) {
    ChildFail(plan, ChildStage::kRedirect);
  }
  if (plan.private_mounts) {
    // A mount namespace of the pod's own; nothing mounted here reaches the host.
    if (::unshare(CLONE_NEWNS) != 0 || ::mount(nullptr, "/", nullptr, MS_REC | MS_SLAVE, nullptr) != 0) {
      ChildFail(plan, ChildStage::kMountNamespace);
    }
    // Copies of the pod's own directories, taken in this namespace (a mount of
    // another namespace cannot be bound here), before the tmpfs covers them.
    for (size_t i = 0; plan.visible[i] != nullptr; ++i) {
      plan.visible_trees[i] = static_cast<int>(
          ::syscall(SYS_open_tree, AT_FDCWD, plan.visible[i], OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC | AT_RECURSIVE));
      if (plan.visible_trees[i] < 0) ChildFail(plan, ChildStage::kMountNamespace);
    }
    for (const char* const* p = plan.hide; *p != nullptr; ++p) {
      if (::mount("tessera-hidden", *p, "tmpfs", MS_NOSUID | MS_NODEV, "mode=0755,size=64k") != 0) {
        ChildFail(plan, ChildStage::kMountNamespace);
      }
    }
    for (const char* const* p = plan.make_dirs; *p != nullptr; ++p) {
      if (::mkdir(*p, 0755) != 0 && errno != EEXIST) ChildFail(plan, ChildStage::kMountNamespace);
    }
    for (size_t i = 0; plan.visible[i] != nullptr; ++i) {
      if (::syscall(SYS_move_mount, plan.visible_trees[i], "", AT_FDCWD, plan.visible[i], MOVE_MOUNT_F_EMPTY_PATH) != 0) {
        ChildFail(plan, ChildStage::kMountNamespace);
      }
    }
  }
  if (::chdir(plan.working_dir) != 0) ChildFail(plan, ChildStage::kChdir);
  // Raw syscalls: glibc's wrappers would try to change the credentials of every
  // thread of the agent, and the child is a thread of no one.
  if (plan.set_gid || plan.set_uid) {
    if (::syscall(SYS_setgroups, 0, nullptr) != 0) ChildFail(plan, ChildStage::kSetGroups);
  }
  if (plan.set_gid && ::syscall(SYS_setresgid, plan.gid, plan.gid, plan.gid) != 0) ChildFail(plan, ChildStage::kSetGid);
  if (plan.set_uid && ::syscall(SYS_setresuid, plan.uid, plan.uid, plan.uid) != 0) ChildFail(plan, ChildStage::kSetUid);
  // Descriptors the agent's libraries opened without O_CLOEXEC must not leak
  // into the pod. (Ignored where close_range is missing, before Linux 5.11.)
  ::syscall(SYS_close_range, STDERR_FILENO + 1, ~0U, CLOSE_RANGE_CLOEXEC);
  if (plan.status_fd >= 0) {
    // The reaper keeps these three, and starts with every signal still blocked so
    // that a termination signal cannot end it before it ignores them.
    if (::fcntl(plan.status_fd, F_SETFD, 0) != 0 || ::fcntl(plan.report_fd, F_SETFD, 0) != 0 ||
        ::fcntl(plan.gate_fd, F_SETFD, 0) != 0) {
      ChildFail(plan, ChildStage::kExecReaper);
    }
    ::execve(plan.executable, plan.argv, plan.envp);
    ChildFail(plan, ChildStage::kExecReaper);
  }
  ::sigprocmask(SIG_SETMASK, &none, nullptr);
  ::execve(plan.executable, plan.argv, plan.envp);
  ChildFail(plan, ChildStage::kExec);
}

Status ChildFailureStatus(const ChildFailure& failure, const ProcessSpec& spec, const std::string& executable,
                          const std::string& reaper) {
  const std::string why = ErrnoText(failure.error);
  switch (static_cast<ChildStage>(failure.stage)) {
    case ChildStage::kNone:
      break;
    case ChildStage::kExecReaper:
      return Status::Unavailable(fmt::format(
          "cannot run the pod reaper {}: {}; it is built and installed beside the tessera program", reaper, why));
    case ChildStage::kNotReleased:
      return Status::Unavailable(fmt::format("{} was not started: its pod reaper was never told to run it", spec.argv[0]));
    case ChildStage::kSetsid:
      return Status::Internal(fmt::format("setsid failed in the new process: {}", why));
    case ChildStage::kRedirect:
      return Status::IoError(fmt::format("cannot send the output of the new process to {}: {}", spec.output_path, why));
    case ChildStage::kMountNamespace:
      return Status::Unavailable(fmt::format(
          "cannot give the process its private view of the node's files (hiding {}): {}",
          spec.hidden_paths.empty() ? std::string("nothing") : spec.hidden_paths.front(), why));
    case ChildStage::kNetworkNamespace:
      return Status::Unavailable(fmt::format("cannot enter the pod's network namespace {}: {}", spec.netns_path, why));
    case ChildStage::kChdir:
      return Status::NotFound(fmt::format("working directory {} cannot be used: {}", spec.working_dir, why));
    case ChildStage::kSetGroups:
    case ChildStage::kSetGid:
      return Status::PermissionDenied(fmt::format("cannot switch to gid {}: {}", spec.gid.value_or(0), why));
    case ChildStage::kSetUid:
      return Status::PermissionDenied(fmt::format("cannot switch to uid {}: {}", spec.uid.value_or(0), why));
    case ChildStage::kExec:
      if (failure.error == ENOENT) {
        // The file vanished, or it is a script whose #! interpreter does not exist.
        return Status::NotFound(fmt::format("command not found: {} ({}: {})", spec.argv[0], executable, why));
      }
      if (failure.error == EACCES) {
        return Status::PermissionDenied(fmt::format("cannot run {} ({}): {}", spec.argv[0], executable, why));
      }
      return Status::InvalidArgument(fmt::format("cannot run {} ({}): {}", spec.argv[0], executable, why));
  }
  return Status::Internal(fmt::format("the new process failed at an unknown stage {}: {}", failure.stage, why));
}

// Owned strings and the NULL-terminated pointer arrays execve wants, built
// before clone so that the child allocates nothing.
// ProcessSpec::hidden_paths and visible_paths as the child applies them, with
// every string it needs made here, before clone.
struct PrivateView {
  std::vector<std::string> storage;  // the strings the pointers below point into
  std::vector<const char*> visible, hide, make_dirs;  // each null-terminated
};

bool UnderPath(const std::string& path, const std::string& dir) {
  return path.size() > dir.size() && path.compare(0, dir.size(), dir) == 0 && path[dir.size()] == '/';
}

Result<PrivateView> PlanPrivateView(const std::vector<std::string>& hidden, const std::vector<std::string>& visible) {
  PrivateView view;
  std::vector<std::string> hide, dirs, shown;
  for (const std::string& h : hidden) {
    if (h.empty() || h[0] != '/') return Err(Status::InvalidArgument(fmt::format("hidden path {} is not absolute", h)));
    const bool inside_another = std::any_of(hidden.begin(), hidden.end(), [&](const std::string& o) { return UnderPath(h, o); });
    if (!inside_another && std::find(hide.begin(), hide.end(), h) == hide.end()) hide.push_back(h);
  }
  for (const std::string& v : visible) {
    auto root = std::find_if(hide.begin(), hide.end(), [&](const std::string& h) { return UnderPath(v, h); });
    if (root == hide.end()) continue;  // not hidden: nothing to bring back
    // Its parents inside the tmpfs, then itself, so that the bind has a place.
    for (size_t at = root->size() + 1; at != std::string::npos && at <= v.size();) {
      const size_t slash = v.find('/', at);
      const std::string dir = v.substr(0, slash);
      if (std::find(dirs.begin(), dirs.end(), dir) == dirs.end()) dirs.push_back(dir);
      at = slash == std::string::npos ? std::string::npos : slash + 1;
    }
    struct stat st {};
    if (::stat(v.c_str(), &st) != 0 || !S_ISDIR(st.st_mode)) {
      return Err(Status::IoError(fmt::format("{} cannot be given to the pod: it is not a directory", v)));
    }
    if (std::find(shown.begin(), shown.end(), v) == shown.end()) shown.push_back(v);
  }
  if (shown.size() > kMaxVisiblePaths) {
    return Err(Status::InvalidArgument(fmt::format("a pod may keep at most {} of its directories visible", kMaxVisiblePaths)));
  }
  view.storage.reserve(hide.size() + dirs.size() + shown.size());
  auto keep = [&](std::vector<std::string>& strings, std::vector<const char*>& out) {
    for (std::string& s : strings) out.push_back(view.storage.emplace_back(std::move(s)).c_str());
    out.push_back(nullptr);
  };
  keep(shown, view.visible);
  keep(hide, view.hide);
  keep(dirs, view.make_dirs);
  return view;
}

struct ExecStrings {
  std::vector<std::string> argv_storage;
  std::vector<std::string> env_storage;
  std::vector<char*> argv;
  std::vector<char*> envp;

  ExecStrings(std::vector<std::string> args, std::vector<std::string> env)
      : argv_storage(std::move(args)), env_storage(std::move(env)) {
    for (std::string& s : argv_storage) argv.push_back(s.data());
    argv.push_back(nullptr);
    for (std::string& s : env_storage) envp.push_back(s.data());
    envp.push_back(nullptr);
  }
};

// `text` with every character a cgroup name should not hold replaced by '_'.
std::string CgroupSafe(std::string_view text) {
  std::string safe;
  for (char c : text) {
    const bool ok =
        (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-' || c == '_' || c == '.';
    safe += ok ? c : '_';
  }
  return safe;
}

// Blocking wait for a child we just killed or that is about to exit.
int ReapNow(pid_t pid) {
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  return status;
}

ProcessExit ExitFromWaitStatus(int status) {
  ProcessExit exit;
  if (WIFEXITED(status)) {
    exit.cause = ProcessExit::Cause::kExited;
    exit.exit_code = WEXITSTATUS(status);
  } else if (WIFSIGNALED(status)) {
    exit.cause = ProcessExit::Cause::kSignaled;
    exit.signal = WTERMSIG(status);
  }
  return exit;
}

}  // namespace

namespace {

// A reaper of an earlier version wrote its status alone, one word without a
// pid, over the file's start. By the time the pod is launched again its agent
// has read that (adopting or reporting the process): drops it, so that it is
// never taken for the new process's status.
void DropAnEarlierVersionsStatus(int fd) {
  char head[32];
  const ssize_t n = ::pread(fd, head, sizeof head, 0);
  if (n > 0 && std::find(head, head + n, ' ') == head + n) (void)!::ftruncate(fd, 0);
}

}  // namespace

ProcessExit ReadExitStatusFile(const std::string& path, const ProcessIdentity& process) {
  if (path.empty()) return ProcessExit{};
  std::ifstream in(path);
  // The last line of the process's; a line of one word was written by a reaper from
  // before lines named their process (the file then held only the newest, and
  // the next launch drops it).
  std::string line, mine, unnamed;
  const std::string prefix = fmt::format("{} {} ", process.pid, process.start_ticks);
  while (std::getline(in, line)) {
    if (line.starts_with(prefix)) {
      mine = line.substr(prefix.size());
    } else if (!line.empty() && line.find(' ') == std::string::npos) {
      unnamed = line;
    }
  }
  const std::string& text = mine.empty() ? unnamed : mine;
  if (text == kNotStartedStatus) return ProcessExit{.cause = ProcessExit::Cause::kNotStarted};
  int status = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), status);
  return !text.empty() && ec == std::errc() && end == text.data() + text.size() ? ExitFromWaitStatus(status)
                                                                                : ProcessExit{};
}

// ---------------------------------------------------------------------------
// ProcessRunner.

ProcessRunner::ProcessRunner(ProcessRunnerOptions options) : options_(std::move(options)) {}

std::string DefaultPodReaperPath() {
  std::error_code ec;
  const std::filesystem::path self = std::filesystem::read_symlink("/proc/self/exe", ec);
  if (!ec) {
    std::filesystem::path beside = self.parent_path() / kPodReaperName;
    if (::access(beside.c_str(), X_OK) == 0) return beside.string();
  }
  return TESSERA_POD_REAPER_BUILD_PATH;
}

const std::string& ProcessRunner::PodReaper() {
  if (options_.pod_reaper.empty()) options_.pod_reaper = DefaultPodReaperPath();
  return options_.pod_reaper;
}

const CgroupPlacement& ProcessRunner::Placement() {
  if (!options_.cgroups) options_.cgroups = DetectCgroupPlacement();
  return *options_.cgroups;
}

// Steps:
//  1. Validate the spec; build the environment; resolve the command in its PATH.
//  2. Open the output (stdout and stderr), /dev/null (stdin), the exit status
//     file and the pipe on which the pod reaper reports the command's exec.
//  3. Create the cgroup with its limits (or note why not).
//  4. Clone with every signal blocked; the child runs RunChild, joins its
//     cgroups and execs the reaper (or the command); clone returns after that.
//  5. A failure before exec is in the plan: reap the child, leave nothing behind.
//  6. Read the child's start time; keep the cgroups it joined.
//  (Release: with a reaper, one byte on its gate lets it run the command.)
//  7. With a reaper, wait for its report: stage kNone means the command runs;
//     another stage, or end-of-file (the reaper was killed), means it could
//     not (or was held back), and the reaper is reaped.
Result<ProcessRunner::Launched> ProcessRunner::Launch(const ProcessSpec& spec) {
  // 1.
  if (spec.argv.empty() || spec.argv[0].empty()) {
    return Err(Status::InvalidArgument("a process needs a command: argv is empty"));
  }
  if (spec.output_path.empty()) return Err(Status::InvalidArgument("a process needs an output path for its logs"));
  RETURN_IF_ERROR(CheckWorkingDir(spec.working_dir));
  ASSIGN_OR_RETURN(std::vector<std::string> env, BuildEnvironment(spec.env));
  ASSIGN_OR_RETURN(std::string executable,
                   ResolveCommand(spec.argv[0], LookupEnv(env, "PATH"), spec.working_dir, spec.uid, spec.gid));
  const bool with_reaper = !spec.exit_status_path.empty();

  // 2.
  ASSIGN_OR_RETURN(
      UniqueFd output,
      AboveStdio(::open(spec.output_path.c_str(), O_RDWR | O_CREAT | O_APPEND | O_CLOEXEC, 0640), spec.output_path));
  ASSIGN_OR_RETURN(UniqueFd null_input, AboveStdio(::open("/dev/null", O_RDONLY | O_CLOEXEC), "/dev/null"));
  UniqueFd exit_status;
  Pipe report;
  Pipe gate;
  std::vector<std::string> argv = spec.argv;
  if (with_reaper) {
    ASSIGN_OR_RETURN(exit_status, AboveStdio(::open(spec.exit_status_path.c_str(), O_RDWR | O_CREAT | O_APPEND | O_CLOEXEC, 0640),
                                             spec.exit_status_path));
    DropAnEarlierVersionsStatus(exit_status.get());
    ASSIGN_OR_RETURN(report, MakePipe());
    ASSIGN_OR_RETURN(gate, MakeGate());
    argv.insert(argv.begin(), {PodReaper(), std::to_string(exit_status.get()), std::to_string(report.write_end.get()),
                               std::to_string(gate.read_end.get()), executable});
  }
  ExecStrings strings(std::move(argv), std::move(env));

  Launched launched;
  RunningProcess& process = launched.process;
  ChildPlan plan{.executable = with_reaper ? strings.argv[0] : executable.c_str(),
                 .argv = strings.argv.data(),
                 .envp = strings.envp.data(),
                 .working_dir = spec.working_dir.c_str(),
                 .stdin_fd = null_input.get(),
                 .output_fd = output.get(),
                 .status_fd = with_reaper ? exit_status.get() : -1,
                 .report_fd = with_reaper ? report.write_end.get() : -1,
                 .gate_fd = with_reaper ? gate.read_end.get() : -1};
  UniqueFd netns;
  if (!spec.netns_path.empty()) {
    netns.Reset(::open(spec.netns_path.c_str(), O_RDONLY | O_CLOEXEC));
    if (netns.get() < 0) {
      return Err(Status::Unavailable(
          fmt::format("cannot open the pod's network namespace {}: {}", spec.netns_path, ErrnoText(errno))));
    }
    plan.netns_fd = netns.get();
  }
  PrivateView view;
  if (!spec.hidden_paths.empty()) {
    if (::geteuid() == 0) {
      ASSIGN_OR_RETURN(view, PlanPrivateView(spec.hidden_paths, spec.visible_paths));
      plan.private_mounts = true;
      plan.visible = view.visible.data();
      plan.hide = view.hide.data();
      plan.make_dirs = view.make_dirs.data();
    } else {
      process.warnings.push_back(fmt::format("the agent's files are not hidden from the pod: the agent runs as uid {}, "
                                             "not root",
                                             ::geteuid()));
    }
  }
  if (spec.uid || spec.gid) {
    if (::geteuid() == 0) {
      plan.set_uid = spec.uid.has_value();
      plan.uid = spec.uid.value_or(0);
      plan.set_gid = spec.gid.has_value();
      plan.gid = spec.gid.value_or(0);
    } else {
      process.warnings.push_back(fmt::format("uid/gid not applied: the agent runs as uid {}, not root", ::geteuid()));
    }
  }

  // 3.
  CgroupSetup cgroup;
  if (!spec.limits.empty()) {
    std::string leaf = spec.name.empty() ? fmt::format("{}run-{}-{}", CgroupLeafPrefix(), ::getpid(), ++unnamed_runs_)
                                         : CgroupLeafPrefix() + CgroupSafe(spec.name);
    // A file name holds at most 255 bytes; a long namespace, pod and node name can pass that.
    if (leaf.size() > kMaxCgroupLeaf) {
      leaf = fmt::format("{}-{:016x}", leaf.substr(0, kMaxCgroupLeaf - 17), std::hash<std::string>{}(leaf));
    }
    ASSIGN_OR_RETURN(cgroup, CreatePodCgroup(Placement(), leaf, spec.limits));
  }
  TESSERA_CHECK(cgroup.dirs.size() <= kMaxPodCgroups, "a pod has at most one cgroup per controller hierarchy");
  std::vector<std::string> procs_files;
  for (const std::string& dir : cgroup.dirs) procs_files.push_back(JoinPath(dir, "cgroup.procs"));
  for (size_t i = 0; i < procs_files.size(); ++i) plan.cgroup_procs[i] = procs_files[i].c_str();
  auto remove_cgroup = [&] { RemoveCgroups(cgroup.dirs); };

  // 4.
  void* stack = ::mmap(nullptr, kChildStackBytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_STACK, -1, 0);
  if (stack == MAP_FAILED) {
    remove_cgroup();
    return Err(Status::Unavailable(fmt::format("cannot start {}: no memory for a stack: {}", spec.argv[0], ErrnoText(errno))));
  }
  sigset_t all;
  sigset_t saved;
  sigfillset(&all);
  ::pthread_sigmask(SIG_SETMASK, &all, &saved);
  const pid_t pid = ::clone(RunChild, static_cast<char*>(stack) + kChildStackBytes, CLONE_VM | CLONE_VFORK | SIGCHLD, &plan);
  const int clone_error = errno;
  ::pthread_sigmask(SIG_SETMASK, &saved, nullptr);
  ::munmap(stack, kChildStackBytes);
  if (pid < 0) {
    remove_cgroup();
    return Err(Status::Unavailable(fmt::format("cannot start {}: {}", spec.argv[0], ErrnoText(clone_error))));
  }
  report.write_end.Reset();
  gate.read_end.Reset();
  auto abandon_child = [&](Status why) { return Err(Abandon(pid, cgroup.dirs, std::move(why))); };

  // 5.
  if (plan.failure.stage != static_cast<int32_t>(ChildStage::kNone)) {
    return abandon_child(ChildFailureStatus(plan.failure, spec, executable, plan.executable));
  }

  // 6.
  Result<uint64_t> start_ticks = ReadStartTicks(pid);
  if (!start_ticks) return abandon_child(start_ticks.error().WithContext("reading the new process's start time"));
  process.identity = {pid, *start_ticks};
  process.pgid = pid;  // setsid makes it the leader of a group named after it
  for (size_t i = 0; i < cgroup.dirs.size(); ++i) {
    const std::string& dir = cgroup.dirs[i];
    if (plan.cgroup_errors[i] == 0) {
      process.cgroup_dirs.push_back(dir);
      continue;
    }
    cgroup.warnings.push_back(fmt::format("limits of cgroup {} not enforced: cannot write to {}: {}", dir,
                                          procs_files[i], ErrnoText(plan.cgroup_errors[i])));
    if (dir == cgroup.memory_dir) cgroup.memory_dir.clear();
    if (!RemoveCgroupDir(dir)) cgroups_to_remove_.push_back(dir);
  }
  cgroup.dirs = process.cgroup_dirs;  // from here on, removing means removing these
  process.warnings.insert(process.warnings.end(), cgroup.warnings.begin(), cgroup.warnings.end());

  launched.pid = pid;
  launched.report = std::move(report.read_end);
  launched.gate = std::move(gate.write_end);
  launched.executable = std::move(executable);
  launched.memory_cgroup_dir = cgroup.memory_dir;
  return launched;
}

Status ProcessRunner::Abandon(pid_t pid, const std::vector<std::string>& cgroup_dirs, Status why) {
  // The child is ours and unreaped, so its pid cannot be reused meanwhile (and
  // SIGKILL to one that has already exited does nothing).
  ::kill(pid, SIGKILL);
  ReapNow(pid);
  RemoveCgroups(cgroup_dirs);
  return why;
}

void ProcessRunner::RemoveCgroups(const std::vector<std::string>& dirs) {
  for (const std::string& dir : dirs) {
    if (!RemoveCgroupDir(dir)) cgroups_to_remove_.push_back(dir);  // still emptying: retried later
  }
}

void ProcessRunner::Release(Launched& launched) {
  if (launched.gate.get() < 0) return;
  const char go = 1;
  // A reaper that died already makes this fail; Confirm then finds out why.
  while (::send(launched.gate.get(), &go, 1, MSG_NOSIGNAL) < 0 && errno == EINTR) {
  }
  launched.gate.Reset();
}

Result<RunningProcess> ProcessRunner::Confirm(Launched launched, const ProcessSpec& spec) {
  // 7.
  Release(launched);
  if (launched.report.get() >= 0) {
    ChildFailure failure;
    ssize_t got;
    do {
      got = ::read(launched.report.get(), &failure, sizeof failure);
    } while (got < 0 && errno == EINTR);
    const bool whole = got == static_cast<ssize_t>(sizeof failure);
    if (!whole || failure.stage != static_cast<int32_t>(ChildStage::kNone)) {
      const Status why =
          got == 0 ? Status::Unavailable(fmt::format("the pod reaper for {} ended before it ran the command (killed?)",
                                                     spec.argv[0]))
          : !whole ? Status::Internal(fmt::format("the pod reaper for {} failed before exec and its report was cut short",
                                                  spec.argv[0]))
                   : ChildFailureStatus(failure, spec, launched.executable, PodReaper());
      return Err(Abandon(launched.pid, launched.process.cgroup_dirs, why));
    }
  }
  const pid_t pid = launched.pid;
  tracked_[pid] = Tracked{.process = launched.process, .memory_cgroup_dir = std::move(launched.memory_cgroup_dir)};
  return std::move(launched.process);
}

Result<RunningProcess> ProcessRunner::Start(const ProcessSpec& spec) {
  ASSIGN_OR_RETURN(Launched launched, Launch(spec));
  return Confirm(std::move(launched), spec);
}

std::vector<Result<RunningProcess>> ProcessRunner::StartAll(const std::vector<ProcessSpec>& specs,
                                                            const BeforeRunning& before_running) {
  std::vector<Result<Launched>> launched;
  launched.reserve(specs.size());
  for (const ProcessSpec& spec : specs) launched.push_back(Launch(spec));
  bool go = true;
  if (before_running) {
    std::vector<std::optional<ProcessIdentity>> identities;
    identities.reserve(launched.size());
    for (const Result<Launched>& l : launched) {
      identities.push_back(l ? std::optional<ProcessIdentity>(l->process.identity) : std::nullopt);
    }
    try {
      go = before_running(identities);
    } catch (...) {
      go = false;  // the launched processes must still be confirmed and reaped below
    }
  }
  // Every command is let go (or held back) before the first exec is waited for.
  for (Result<Launched>& l : launched) {
    if (l) go ? Release(*l) : HoldBack(*l);
  }
  std::vector<Result<RunningProcess>> started;
  started.reserve(specs.size());
  for (size_t i = 0; i < specs.size(); ++i) {
    started.push_back(launched[i] ? Confirm(std::move(*launched[i]), specs[i])
                                  : Result<RunningProcess>(Err(launched[i].error())));
  }
  return started;
}

Result<RunningProcess> ProcessRunner::Adopt(const ProcessIdentity& identity, const std::string& exit_status_path) {
  Result<ProcStat> stat = ReadProcStat(identity.pid);
  if (!stat || stat->start_ticks != identity.start_ticks || HasEnded(*stat)) {
    return Err(Status::NotFound(fmt::format(
        "{} is no longer running (it ended, or its pid now belongs to another process)", identity.ToString())));
  }
  RunningProcess process{.identity = identity, .pgid = stat->pgid, .adopted = true};
  Tracked tracked;
  // Its cgroup is one of ours that lists it.
  const CgroupPlacement& placement = Placement();
  for (const std::string& parent : CgroupParents(placement)) {
    for (const std::string& dir : OurCgroupsUnder(parent)) {
      const std::vector<pid_t> members = CgroupMembers(dir);
      if (std::find(members.begin(), members.end(), identity.pid) == members.end()) continue;
      process.cgroup_dirs.push_back(dir);
      if (parent != placement.v1_cpu_parent) tracked.memory_cgroup_dir = dir;
    }
  }
  tracked.process = process;
  tracked.exit_status_path = exit_status_path;
  tracked_[identity.pid] = std::move(tracked);
  return process;
}

Status ProcessRunner::Signal(const ProcessIdentity& identity, int signal) {
  Result<ProcStat> stat = ReadProcStat(identity.pid);
  if (!stat) {
    return Status::NotFound(fmt::format("{} is gone; not signalled", identity.ToString()));
  }
  if (stat->start_ticks != identity.start_ticks) {
    return Status::Conflict(
        fmt::format("pid {} now belongs to another process (started at tick {}, not {}); not signalled", identity.pid,
                    stat->start_ticks, identity.start_ticks));
  }
  // A session leader cannot change its group, so for the processes we start
  // pgid == pid always; anything else was not started by a runner.
  if (stat->pgid != identity.pid) {
    return Status::InvalidArgument(
        fmt::format("{} does not lead its process group (pgid {}); not signalled", identity.ToString(), stat->pgid));
  }
  // Between the check and kill() the group id cannot be reused while the leader
  // exists (for our own children, until we reap them). For an adopted leader
  // that ends in between, the id stays taken while any member of its group lives.
  if (::kill(-identity.pid, signal) != 0) {
    if (errno == ESRCH) return Status::NotFound(fmt::format("process group {} is gone; not signalled", identity.pid));
    return Status::PermissionDenied(fmt::format("cannot signal process group {}: {}", identity.pid, ErrnoText(errno)));
  }
  return Status::Ok();
}

Status ProcessRunner::BeginTermination(const ProcessIdentity& identity, Duration grace, Timestamp now) {
  auto it = tracked_.find(identity.pid);
  if (it == tracked_.end() || it->second.process.identity != identity) {
    return Status::NotFound(fmt::format("{} is not run by this agent", identity.ToString()));
  }
  Tracked& tracked = it->second;
  if (tracked.kill_sent) return Status::Ok();
  const Timestamp deadline = now + grace;
  tracked.kill_at = tracked.kill_at ? std::min(*tracked.kill_at, deadline) : deadline;
  // A process that has already ended cannot be signalled; Poll reports its end.
  if (grace.ms <= 0) {
    (void)Signal(identity, SIGKILL);
    tracked.kill_sent = true;
  } else {
    (void)Signal(identity, SIGTERM);
    // A stopped process acts on SIGTERM only once continued (systemd does the same).
    (void)Signal(identity, SIGCONT);
  }
  return Status::Ok();
}

Result<std::optional<ProcessExit>> ProcessRunner::Poll(const ProcessIdentity& identity, Timestamp now) {
  RetryCgroupRemovals();
  auto it = tracked_.find(identity.pid);
  if (it == tracked_.end() || it->second.process.identity != identity) {
    return Err(Status::NotFound(fmt::format("{} is not run by this agent", identity.ToString())));
  }
  Tracked& tracked = it->second;

  if (!tracked.process.adopted) {
    // WNOWAIT: look without reaping, so the zombie leader keeps its group id
    // taken while we SIGKILL what is left of the group.
    siginfo_t info{};
    const int rc = ::waitid(P_PID, identity.pid, &info, WEXITED | WNOHANG | WNOWAIT);
    if (rc == 0 && info.si_pid == identity.pid) {
      ::kill(-tracked.process.pgid, SIGKILL);
      return Finish(tracked, ExitFromWaitStatus(ReapNow(identity.pid)));
    }
    // ECHILD: someone else reaped it (SIGCHLD ignored, or a waitpid(-1) elsewhere).
    if (rc != 0 && errno == ECHILD) return Finish(tracked, ProcessExit{});
  } else if (!IsRunning(identity)) {
    return Finish(tracked, ReadExitStatusFile(tracked.exit_status_path, identity));
  }

  if (tracked.kill_at && !tracked.kill_sent && now >= *tracked.kill_at) {
    (void)Signal(identity, SIGKILL);
    tracked.kill_sent = true;
  }
  return std::optional<ProcessExit>();
}

ProcessExit ProcessRunner::Finish(Tracked& tracked, ProcessExit exit) {
  if (!tracked.memory_cgroup_dir.empty()) exit.oom_killed = ReadOomKills(tracked.memory_cgroup_dir) > 0;
  for (const std::string& dir : tracked.process.cgroup_dirs) {
    KillCgroupMembers(dir);
    if (!RemoveCgroupDir(dir)) cgroups_to_remove_.push_back(dir);
  }
  tracked_.erase(tracked.process.identity.pid);
  return exit;
}

size_t ProcessRunner::RetryCgroupRemovals() {
  std::erase_if(cgroups_to_remove_, [](const std::string& dir) { return RemoveCgroupDir(dir); });
  return cgroups_to_remove_.size();
}

std::string ProcessRunner::CgroupLeafPrefix() const {
  if (options_.cgroup_owner.empty()) return std::string(kCgroupPrefix);
  // The owner's own '_' become '-': no owner's prefix can start another's.
  std::string owner = CgroupSafe(options_.cgroup_owner);
  std::replace(owner.begin(), owner.end(), '_', '-');
  return fmt::format("{}{}_", kCgroupPrefix, owner);
}

void ProcessRunner::RemoveStaleCgroups() {
  const std::string prefix = CgroupLeafPrefix();
  for (const std::string& parent : CgroupParents(Placement())) {
    for (const std::string& dir : OurCgroupsUnder(parent)) {
      if (std::filesystem::path(dir).filename().string().starts_with(prefix)) ::rmdir(dir.c_str());  // fails while in use
    }
  }
}

Timestamp ProcessRunner::NextKillDeadline() const {
  Timestamp next = Timestamp::Never();
  for (const auto& [pid, tracked] : tracked_) {
    if (tracked.kill_at && !tracked.kill_sent) next = std::min(next, *tracked.kill_at);
  }
  return next;
}

}  // namespace tessera
