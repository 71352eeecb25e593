#include "agent/pod_exec.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <sched.h>
#include <signal.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>

extern "C" char** environ;

namespace tessera {
namespace {

std::string ReadWhole(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

// The real uid or gid ("Uid:" or "Gid:" line) of /proc/PID/status.
std::optional<uint32_t> ProcId(pid_t pid, std::string_view key) {
  std::istringstream in(ReadWhole(fmt::format("/proc/{}/status", pid)));
  std::string line;
  while (std::getline(in, line)) {
    if (line.starts_with(key)) return static_cast<uint32_t>(std::strtoul(line.c_str() + key.size(), nullptr, 10));
  }
  return std::nullopt;
}

void WriteAll(int fd, const char* text) { (void)!::write(fd, text, std::strlen(text)); }

}  // namespace

std::string CommandLine(const std::vector<std::string>& argv) {
  std::string out;
  for (const std::string& a : argv) out += (out.empty() ? "" : " ") + a;
  return out;
}

Result<SpawnedInPod> SpawnInPod(const std::vector<std::string>& command, const PodExecTarget& target, bool with_stdin,
                                bool merge_stderr) {
  if (command.empty()) return Err(Status::InvalidArgument("no command to run in the pod"));
  std::vector<std::string> argv = target.exec_prefix;
  argv.insert(argv.end(), command.begin(), command.end());
  const std::optional<PodExecTarget::Process>& process = target.exec_prefix.empty() ? target.process : std::nullopt;
  // Everything the child needs is made before fork.
  std::vector<std::string> env_storage;
  std::string cwd = "/";
  UniqueFd netns, mntns;
  std::optional<uint32_t> uid, gid;
  std::vector<std::string> cgroup_procs;
  if (process) {
    const std::string environ_text = ReadWhole(fmt::format("/proc/{}/environ", process->pid));
    for (size_t start = 0; start < environ_text.size();) {
      size_t end = environ_text.find('\0', start);
      if (end == std::string::npos) end = environ_text.size();
      if (end > start) env_storage.push_back(environ_text.substr(start, end - start));
      start = end + 1;
    }
    char link[4096];
    const ssize_t n = ::readlink(fmt::format("/proc/{}/cwd", process->pid).c_str(), link, sizeof link - 1);
    if (n > 0) cwd.assign(link, static_cast<size_t>(n));
    netns.Reset(::open(fmt::format("/proc/{}/ns/net", process->pid).c_str(), O_RDONLY | O_CLOEXEC));
    mntns.Reset(::open(fmt::format("/proc/{}/ns/mnt", process->pid).c_str(), O_RDONLY | O_CLOEXEC));
    if (netns.get() < 0 || mntns.get() < 0) {
      return Err(Status::NotFound(fmt::format("the pod's process {} is gone", process->pid)));
    }
    uid = ProcId(process->pid, "Uid:");
    gid = ProcId(process->pid, "Gid:");
    for (const std::string& dir : process->cgroup_dirs) cgroup_procs.push_back(dir + "/cgroup.procs");
  } else {
    for (char** e = environ; e && *e; ++e) env_storage.emplace_back(*e);
  }
  std::vector<char*> args, envp, procs;
  for (const std::string& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  for (std::string& e : env_storage) envp.push_back(e.data());
  envp.push_back(nullptr);
  for (std::string& p : cgroup_procs) procs.push_back(p.data());
  procs.push_back(nullptr);
  const bool as_root = ::geteuid() == 0;

  int in_pipe[2] = {-1, -1}, out_pipe[2] = {-1, -1}, err_pipe[2] = {-1, -1};
  auto close_all = [&] {
    for (int* p : {in_pipe, out_pipe, err_pipe}) {
      for (int i = 0; i < 2; ++i) {
        if (p[i] >= 0) ::close(p[i]);
        p[i] = -1;
      }
    }
  };
  if ((with_stdin && ::pipe2(in_pipe, O_CLOEXEC) != 0) || ::pipe2(out_pipe, O_CLOEXEC) != 0 ||
      (!merge_stderr && ::pipe2(err_pipe, O_CLOEXEC) != 0)) {
    const int error = errno;
    close_all();
    return Err(Status::Internal(fmt::format("cannot run {} in the pod: pipe: {}", command.front(), ErrnoText(error))));
  }
  const int child_in = in_pipe[0], child_out = out_pipe[1], child_err = merge_stderr ? out_pipe[1] : err_pipe[1];
  sigset_t all, old;
  sigfillset(&all);
  ::pthread_sigmask(SIG_SETMASK, &all, &old);
  const pid_t pid = ::fork();
  if (pid == 0) {
    struct sigaction default_action {};
    default_action.sa_handler = SIG_DFL;
    for (int sig = 1; sig < NSIG; ++sig) ::sigaction(sig, &default_action, nullptr);
    sigset_t none;
    sigemptyset(&none);
    ::sigprocmask(SIG_SETMASK, &none, nullptr);
    ::setpgid(0, 0);
    const int devnull = child_in >= 0 ? -1 : ::open("/dev/null", O_RDONLY);
    ::dup2(child_in >= 0 ? child_in : devnull, STDIN_FILENO);
    ::dup2(child_out, STDOUT_FILENO);
    ::dup2(child_err, STDERR_FILENO);
    if (netns.get() >= 0 && ::setns(netns.get(), CLONE_NEWNET) != 0) {
      WriteAll(STDERR_FILENO, "cannot enter the pod's network namespace\n");
      ::_exit(126);
    }
    for (char* const* p = procs.data(); *p != nullptr; ++p) {
      const int fd = ::open(*p, O_WRONLY | O_CLOEXEC);
      if (fd >= 0) {
        (void)!::write(fd, "0", 1);
        ::close(fd);
      }
    }
    if (mntns.get() >= 0 && ::setns(mntns.get(), CLONE_NEWNS) != 0) {
      WriteAll(STDERR_FILENO, "cannot enter the pod's mount namespace\n");
      ::_exit(126);
    }
    if (process && ::chdir(cwd.c_str()) != 0) (void)!::chdir("/");
    // Raw syscalls: glibc's wrappers would try to change every thread of the parent's.
    if (as_root && (gid || uid)) {
      if (::syscall(SYS_setgroups, 0, nullptr) != 0 || (gid && ::syscall(SYS_setresgid, *gid, *gid, *gid) != 0) ||
          (uid && ::syscall(SYS_setresuid, *uid, *uid, *uid) != 0)) {
        WriteAll(STDERR_FILENO, "cannot take the pod's user\n");
        ::_exit(126);
      }
    }
    ::execvpe(args[0], args.data(), envp.data());
    WriteAll(STDERR_FILENO, "exec: ");
    WriteAll(STDERR_FILENO, args[0]);
    WriteAll(STDERR_FILENO, errno == ENOENT ? ": executable file not found in $PATH\n" : ": cannot be executed\n");
    ::_exit(127);
  }
  const int fork_error = errno;
  ::pthread_sigmask(SIG_SETMASK, &old, nullptr);
  if (pid < 0) {
    close_all();
    return Err(Status::Internal(fmt::format("cannot run {} in the pod: fork: {}", command.front(), ErrnoText(fork_error))));
  }
  SpawnedInPod out;
  out.pid = pid;
  if (with_stdin) {
    ::close(in_pipe[0]);
    out.stdin_fd.Reset(in_pipe[1]);
  }
  ::close(out_pipe[1]);
  out.stdout_fd.Reset(out_pipe[0]);
  if (!merge_stderr) {
    ::close(err_pipe[1]);
    out.stderr_fd.Reset(err_pipe[0]);
  }
  return out;
}

}  // namespace tessera
