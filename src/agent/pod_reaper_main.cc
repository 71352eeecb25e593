// tessera-pod-reaper: the leader of a pod's process group, which stays behind
// as a reaper. The command runs as its child, in the same group and cgroup; its
// wait status goes to STATUS_FD (a line "PID STATUS" appended), where an agent that restarted meanwhile (not
// the parent, so not told) reads it. The reaper ignores the termination
// signals the group receives (SIGKILL still ends it) and finally ends the way
// the command did.
//
// A program of its own, small and static, so that the agent can start pods with
// clone(CLONE_VM|CLONE_VFORK) and exec, without copying the agent's address
// space (fork) for every pod. The agent execs it with every signal blocked, its
// handlers reset, and its standard streams, directory and credentials already
// those of the pod.
//
// It runs the command only once the agent writes a byte to GATE_FD, which the
// agent does after it recorded the reaper's pid (agent-state.json, which the
// fence reads): an agent killed between the two leaves a reaper that reads
// end-of-file, and so never a pod that runs without a record of it.
//
// Usage: tessera-pod-reaper STATUS_FD REPORT_FD GATE_FD EXECUTABLE ARGV0 [ARGS...]
#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <initializer_list>

#include "agent/spawn_report.h"

namespace {

using tessera::ChildFailure;
using tessera::ChildStage;

[[noreturn]] void Fail(int report_fd, int error, ChildStage stage = ChildStage::kExec) {
  const ChildFailure failure{static_cast<int32_t>(stage), error};
  ssize_t n;
  do {
    n = ::write(report_fd, &failure, sizeof failure);
  } while (n < 0 && errno == EINTR);
  ::_exit(127);
}

// Writes `value` in decimal backwards, ending just before `end`; returns where it starts.
char* PutDecimal(char* end, unsigned long long value) {
  do {
    *--end = static_cast<char>('0' + value % 10);
    value /= 10;
  } while (value > 0);
  return end;
}

// This process's start time in clock ticks since boot (field 22 of
// /proc/self/stat): with the pid, what the agent knows the process by.
unsigned long long StartTicks() {
  char stat[1024];
  const int fd = ::open("/proc/self/stat", O_RDONLY | O_CLOEXEC);
  if (fd < 0) return 0;
  const ssize_t n = ::read(fd, stat, sizeof stat - 1);
  ::close(fd);
  if (n <= 0) return 0;
  stat[n] = '\0';
  const char* p = std::strrchr(stat, ')');  // the command name may hold spaces
  if (p == nullptr) return 0;
  for (int field = 2; field < 22 && p != nullptr; ++field) p = std::strchr(p + 1, ' ');
  return p == nullptr ? 0 : std::strtoull(p + 1, nullptr, 10);
}

// Appends "PID START_TICKS WHAT\n" to the exit status file (opened for
// appending) in one write, and makes it durable. A pod's successive processes
// share the file: the pid and start time say whose line it is, so a new start
// never hides how the one before ended (an agent killed before it recorded the
// new one reads that), and a pid used again is not taken for the earlier one.
void WriteStatusLine(int fd, unsigned long long start_ticks, const char* what) {
  char buf[96];
  char* end = buf + sizeof buf;
  char* p = end;
  *--p = '\n';
  const size_t what_length = std::strlen(what);
  p -= what_length;
  std::memcpy(p, what, what_length);
  *--p = ' ';
  p = PutDecimal(p, start_ticks);
  *--p = ' ';
  p = PutDecimal(p, static_cast<unsigned long long>(::getpid()));
  (void)!::write(fd, p, static_cast<size_t>(end - p));
  ::fsync(fd);
}

// A non-negative number in decimal.
const char* Decimal(int value, char (&buf)[16]) {
  buf[sizeof buf - 1] = '\0';
  return PutDecimal(buf + sizeof buf - 1, static_cast<unsigned long long>(value));
}

int ParseFd(const char* text) {
  char* end = nullptr;
  const long fd = std::strtol(text, &end, 10);
  return (end == text || *end != '\0' || fd < 0 || fd > 1'000'000) ? -1 : static_cast<int>(fd);
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 6) return 127;
  const int status_fd = ParseFd(argv[1]);
  const int report_fd = ParseFd(argv[2]);
  const int gate_fd = ParseFd(argv[3]);
  if (status_fd < 0 || report_fd < 0 || gate_fd < 0) return 127;
  // None may reach the command.
  ::fcntl(status_fd, F_SETFD, FD_CLOEXEC);
  ::fcntl(report_fd, F_SETFD, FD_CLOEXEC);
  const char* executable = argv[4];
  const unsigned long long start_ticks = StartTicks();

  char go = 0;
  ssize_t got;
  do {
    got = ::read(gate_fd, &go, 1);
  } while (got < 0 && errno == EINTR);
  ::close(gate_fd);
  if (got != 1) {
    WriteStatusLine(status_fd, start_ticks, tessera::kNotStartedStatus);
    Fail(report_fd, got < 0 ? errno : 0, ChildStage::kNotReleased);
  }

  int exec_report[2];
  if (::pipe2(exec_report, O_CLOEXEC) != 0) Fail(report_fd, errno);
  sigset_t none;
  sigemptyset(&none);
  // vfork: this process is small, but the worker only execs anyway.
  const pid_t worker = ::vfork();
  if (worker < 0) Fail(report_fd, errno);
  if (worker == 0) {
    ::close(exec_report[0]);
    ::sigprocmask(SIG_SETMASK, &none, nullptr);
    ::execve(executable, argv + 5, environ);
    const int32_t error = errno;
    (void)!::write(exec_report[1], &error, sizeof error);
    ::_exit(127);
  }
  ::close(exec_report[1]);
  int32_t exec_error = 0;
  ssize_t n;
  do {
    n = ::read(exec_report[0], &exec_error, sizeof exec_error);
  } while (n < 0 && errno == EINTR);
  if (n == sizeof exec_error) {
    ::waitpid(worker, nullptr, 0);
    Fail(report_fd, exec_error);
  }
  // The command runs: what the agent waits for. Said outright, so that a reaper
  // killed before this point (end-of-file alone) is not taken for a start.
  const ChildFailure runs{static_cast<int32_t>(ChildStage::kNone), 0};
  (void)!::write(report_fd, &runs, sizeof runs);
  ::close(report_fd);

  // Signals are still blocked (the agent blocked them all): ignore the ones a
  // pod's group receives on termination before letting any through.
  struct sigaction ignore {};
  ignore.sa_handler = SIG_IGN;
  for (int sig : {SIGTERM, SIGINT, SIGHUP, SIGQUIT, SIGPIPE}) ::sigaction(sig, &ignore, nullptr);
  ::sigprocmask(SIG_SETMASK, &none, nullptr);
  int status = 0;
  while (::waitpid(worker, &status, 0) < 0 && errno == EINTR) {
  }
  char decimal[16];
  WriteStatusLine(status_fd, start_ticks, Decimal(status, decimal));
  if (WIFSIGNALED(status)) {
    struct sigaction default_action {};
    default_action.sa_handler = SIG_DFL;
    ::sigaction(WTERMSIG(status), &default_action, nullptr);
    ::kill(::getpid(), WTERMSIG(status));
  }
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}
