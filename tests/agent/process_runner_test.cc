// ProcessRunner against real processes (sh, sleep) in a private temp dir. Waits
// poll with a deadline; no test asserts on how long something took.
#include "agent/process_runner.h"
#include "agent/spawn_report.h"
#include "tests/testing/read_file.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <stdlib.h>
#include <fcntl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <functional>
#include <sstream>
#include <thread>

namespace tessera {
namespace {

using ::testing::HasSubstr;
using ::testing::IsEmpty;
using ::testing::Not;

constexpr auto kWaitLimit = std::chrono::seconds(5);

class TempDir {
 public:
  TempDir() {
    std::string tmpl = (std::filesystem::temp_directory_path() / "tessera-runner-XXXXXX").string();
    path_ = ::mkdtemp(tmpl.data());
  }
  ~TempDir() { std::filesystem::remove_all(path_); }
  const std::string& path() const { return path_; }
  std::string Sub(const std::string& name) const { return path_ + "/" + name; }

 private:
  std::string path_;
};

Timestamp Now() {
  return Timestamp::FromMillis(
      std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::system_clock::now().time_since_epoch())
          .count());
}

using testing::ReadFile;

// Field 5 of /proc/<pid>/stat (the process group); 0 when unreadable.
pid_t ProcessGroupOf(pid_t pid) {
  const std::string stat = ReadFile("/proc/" + std::to_string(pid) + "/stat");
  const size_t paren = stat.rfind(')');
  if (paren == std::string::npos) return 0;
  std::istringstream fields(stat.substr(paren + 1));
  std::string state;
  pid_t ppid = 0;
  pid_t pgid = 0;
  fields >> state >> ppid >> pgid;
  return pgid;
}

// Polls `condition` every few ms until it holds or kWaitLimit passes.
template <typename Condition>
bool Eventually(Condition condition) {
  const auto deadline = std::chrono::steady_clock::now() + kWaitLimit;
  while (!condition()) {
    if (std::chrono::steady_clock::now() > deadline) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  return true;
}

// Polls until the process ends; `now` is the clock the runner's deadlines see
// (the real one unless a test pins it).
std::optional<ProcessExit> WaitForExit(ProcessRunner& runner, const ProcessIdentity& id,
                                       std::function<Timestamp()> now = Now) {
  std::optional<ProcessExit> exit;
  Eventually([&] {
    Result<std::optional<ProcessExit>> polled = runner.Poll(id, now());
    if (!polled) {
      ADD_FAILURE() << polled.error().ToString();
      return true;
    }
    exit = *polled;
    return exit.has_value();
  });
  return exit;
}

// Builds a ProcessSpec that runs in (and logs to) a temp dir.
class SpecBuilder {
 public:
  explicit SpecBuilder(const TempDir& dir) {
    spec_.working_dir = dir.path();
    spec_.output_path = dir.Sub("out.log");
  }
  SpecBuilder& Shell(const std::string& script) {
    spec_.argv = {"sh", "-c", script};
    return *this;
  }
  SpecBuilder& Argv(std::vector<std::string> argv) {
    spec_.argv = std::move(argv);
    return *this;
  }
  SpecBuilder& Env(const std::string& entry) {
    spec_.env.push_back(entry);
    return *this;
  }
  SpecBuilder& WorkingDir(const std::string& dir) {
    spec_.working_dir = dir;
    return *this;
  }
  SpecBuilder& Name(const std::string& name) {
    spec_.name = name;
    return *this;
  }
  SpecBuilder& Cpu(int64_t millicores) {
    spec_.limits.cpu_millicores = millicores;
    return *this;
  }
  SpecBuilder& Memory(int64_t bytes) {
    spec_.limits.memory_bytes = bytes;
    return *this;
  }
  ProcessSpec Build() const { return spec_; }

 private:
  ProcessSpec spec_;
};

// Kills and reaps whatever a test left running, so no test leaks processes.
class ProcessRunnerTest : public ::testing::Test {
 protected:
  void TearDown() override {
    for (const ProcessIdentity& id : started_) {
      (void)runner_.Signal(id, SIGKILL);
      Result<std::optional<ProcessExit>> ignored = runner_.Poll(id, Now());
      if (ignored && !ignored->has_value()) WaitForExit(runner_, id);
    }
    EXPECT_TRUE(Eventually([&] { return runner_.RetryCgroupRemovals() == 0; }));
    for (const ProcessIdentity& id : strays_) {
      if (IsRunning(id)) ::kill(id.pid, SIGKILL);
    }
  }

  RunningProcess StartOk(const ProcessSpec& spec) {
    Result<RunningProcess> started = runner_.Start(spec);
    EXPECT_TRUE(started.has_value()) << started.error().ToString();
    if (!started) return {};
    started_.push_back(started->identity);
    return *started;
  }

  // Waits for the log to hold `text`: the child's "I am ready" handshake.
  bool LogContains(const std::string& text) {
    return Eventually([&] { return ReadFile(dir_.Sub("out.log")).find(text) != std::string::npos; });
  }

  // The pid a script printed as "<tag> <pid>", as an identity.
  ProcessIdentity PrintedIdentity(const std::string& tag) {
    std::string log;
    EXPECT_TRUE(LogContains(tag + " ")) << tag << " not printed";
    std::istringstream in(ReadFile(dir_.Sub("out.log")));
    std::string word;
    pid_t pid = 0;
    while (in >> word) {
      if (word == tag) in >> pid;
    }
    Result<uint64_t> ticks = ReadStartTicks(pid);
    EXPECT_TRUE(ticks.has_value()) << "pid " << pid;
    ProcessIdentity id{pid, ticks.value_or(0)};
    strays_.push_back(id);
    return id;
  }

  TempDir dir_;
  ProcessRunner runner_;
  std::vector<ProcessIdentity> started_;
  std::vector<ProcessIdentity> strays_;
};

// A shell that writes to both streams and exits 3: the exit code is reported
// and the log holds both lines, stdout's first.
TEST_F(ProcessRunnerTest, ReportsExitCodeAndLogsBothStreams) {
  RunningProcess p = StartOk(SpecBuilder(dir_).Shell("echo hi; echo err >&2; exit 3").Build());
  EXPECT_EQ(p.pgid, p.identity.pid);  // setsid: it leads its own group
  EXPECT_GT(p.identity.start_ticks, 0u);
  EXPECT_THAT(p.warnings, IsEmpty());

  std::optional<ProcessExit> exit = WaitForExit(runner_, p.identity);
  ASSERT_TRUE(exit.has_value());
  EXPECT_EQ(exit->cause, ProcessExit::Cause::kExited);
  EXPECT_EQ(exit->exit_code, 3);
  EXPECT_FALSE(exit->oom_killed);
  EXPECT_EQ(exit->Describe(), "exited with code 3");
  EXPECT_EQ(ReadFile(dir_.Sub("out.log")), "hi\nerr\n");
  EXPECT_EQ(runner_.tracked_count(), 0u);  // reported once, then forgotten
}

// The child sees its own variables and working directory, a base PATH, and
// nothing else of the agent's environment.
TEST_F(ProcessRunnerTest, ChildSeesItsEnvironmentAndWorkingDirectory) {
  const std::string work = dir_.Sub("work");
  ASSERT_EQ(::mkdir(work.c_str(), 0755), 0);
  ::setenv("TESSERA_AGENT_ONLY", "leaked", 1);
  RunningProcess p = StartOk(SpecBuilder(dir_)
                                 .Shell("echo $FOO; pwd; echo ${TESSERA_AGENT_ONLY:-unset}; "
                                        "test -n \"$PATH\" && echo has-path")
                                 .Env("FOO=bar baz")
                                 .WorkingDir(work)
                                 .Build());
  ::unsetenv("TESSERA_AGENT_ONLY");
  std::optional<ProcessExit> exit = WaitForExit(runner_, p.identity);
  ASSERT_TRUE(exit.has_value());
  EXPECT_EQ(exit->exit_code, 0);
  EXPECT_EQ(ReadFile(dir_.Sub("out.log")), "bar baz\n" + work + "\nunset\nhas-path\n");
}

// A spec's variable replaces the base one of the same name.
TEST_F(ProcessRunnerTest, SpecEnvironmentOverridesTheBase) {
  RunningProcess p = StartOk(SpecBuilder(dir_).Shell("echo $HOME").Env("HOME=/pod/home").Build());
  ASSERT_TRUE(WaitForExit(runner_, p.identity).has_value());
  EXPECT_EQ(ReadFile(dir_.Sub("out.log")), "/pod/home\n");
}

// As root, the process runs as the given uid and gid, without root's groups.
TEST_F(ProcessRunnerTest, RunsAsTheGivenUser) {
  if (::geteuid() != 0) GTEST_SKIP() << "needs root to switch users";
  ProcessSpec spec = SpecBuilder(dir_).Shell("id -u; id -g; id -G").Build();
  spec.uid = 65534;  // nobody
  spec.gid = 65534;
  RunningProcess p = StartOk(spec);
  EXPECT_THAT(p.warnings, IsEmpty());
  std::optional<ProcessExit> exit = WaitForExit(runner_, p.identity);
  ASSERT_TRUE(exit.has_value());
  EXPECT_EQ(exit->exit_code, 0);
  EXPECT_EQ(ReadFile(dir_.Sub("out.log")), "65534\n65534\n65534\n");
}

// PATH is searched as the pod's user would search it: a directory only root
// may enter (root's pyenv shims under /root, say) is passed over.
TEST_F(ProcessRunnerTest, PathIsSearchedAsThePodsUser) {
  if (::geteuid() != 0) GTEST_SKIP() << "needs root to switch users";
  const std::string locked = dir_.Sub("locked"), bin = dir_.Sub("locked/bin");
  std::filesystem::create_directories(bin);
  std::ofstream(bin + "/tessera-which-true") << "#!/bin/sh\necho locked\n";
  ASSERT_EQ(::chmod((bin + "/tessera-which-true").c_str(), 0755), 0);
  ASSERT_EQ(::chmod(locked.c_str(), 0700), 0);  // root only
  const std::string open_bin = dir_.Sub("open");
  std::filesystem::create_directories(open_bin);
  std::ofstream(open_bin + "/tessera-which-true") << "#!/bin/sh\necho open\n";
  ASSERT_EQ(::chmod((open_bin + "/tessera-which-true").c_str(), 0755), 0);
  ASSERT_EQ(::chmod(dir_.Sub("").c_str(), 0755), 0);
  ProcessSpec spec = SpecBuilder(dir_).Argv({"tessera-which-true"}).Env("PATH=" + bin + ":" + open_bin + ":/usr/bin:/bin").Build();
  spec.uid = 65534;
  spec.gid = 65534;
  RunningProcess p = StartOk(spec);
  std::optional<ProcessExit> exit = WaitForExit(runner_, p.identity);
  ASSERT_TRUE(exit.has_value());
  EXPECT_EQ(exit->exit_code, 0);
  EXPECT_EQ(ReadFile(dir_.Sub("out.log")), "open\n");
}

// A command that is nowhere in PATH is an error naming it; nothing is started.
TEST_F(ProcessRunnerTest, MissingCommandIsAnErrorNamingIt) {
  Result<RunningProcess> started = runner_.Start(SpecBuilder(dir_).Argv({"tessera-no-such-command"}).Build());
  ASSERT_FALSE(started.has_value());
  EXPECT_EQ(started.error().code(), StatusCode::kNotFound);
  EXPECT_THAT(started.error().message(), HasSubstr("command not found: tessera-no-such-command"));
  EXPECT_EQ(runner_.tracked_count(), 0u);
}

// A path that exec itself fails on comes back through the report pipe as an
// error, not as a process that exits 127.
TEST_F(ProcessRunnerTest, ExecFailureInTheChildIsAnError) {
  Result<RunningProcess> missing = runner_.Start(SpecBuilder(dir_).Argv({"./not-here"}).Build());
  ASSERT_FALSE(missing.has_value());
  EXPECT_EQ(missing.error().code(), StatusCode::kNotFound);
  EXPECT_THAT(missing.error().message(), HasSubstr("command not found: ./not-here"));

  // A file without a #! line or ELF header: exec says "Exec format error".
  std::ofstream(dir_.Sub("garbage")) << "\x01\x02\x03 not a program";
  ASSERT_EQ(::chmod(dir_.Sub("garbage").c_str(), 0755), 0);
  Result<RunningProcess> garbage = runner_.Start(SpecBuilder(dir_).Argv({dir_.Sub("garbage")}).Build());
  ASSERT_FALSE(garbage.has_value());
  EXPECT_THAT(garbage.error().message(), HasSubstr("cannot run"));
  EXPECT_EQ(runner_.tracked_count(), 0u);
}

// Under the pod reaper (an exit status file), a command that exec refuses is
// reported the same way, through the reaper, and the reaper is reaped.
TEST_F(ProcessRunnerTest, ExecFailureUnderTheReaperIsAnError) {
  std::ofstream(dir_.Sub("garbage")) << "\x01\x02\x03 not a program";
  ASSERT_EQ(::chmod(dir_.Sub("garbage").c_str(), 0755), 0);
  ProcessSpec spec = SpecBuilder(dir_).Argv({dir_.Sub("garbage")}).Build();
  spec.exit_status_path = dir_.Sub("exit-status");
  Result<RunningProcess> garbage = runner_.Start(spec);
  ASSERT_FALSE(garbage.has_value());
  EXPECT_THAT(garbage.error().message(), HasSubstr("cannot run " + dir_.Sub("garbage")));
  EXPECT_THAT(garbage.error().message(), HasSubstr("Exec format error"));
  EXPECT_EQ(runner_.tracked_count(), 0u);
  int status = 0;
  EXPECT_EQ(::waitpid(-1, &status, WNOHANG), -1) << "a child was left unreaped";
}

// StartAll starts each spec as Start would, in order: a spec that cannot run
// (here, exec refuses it under its reaper) fails alone, the others run and end
// with their own exit statuses, and nothing is left unreaped.
TEST_F(ProcessRunnerTest, StartAllStartsEachSpecAsStartWould) {
  std::ofstream(dir_.Sub("garbage")) << "\x01\x02\x03 not a program";
  ASSERT_EQ(::chmod(dir_.Sub("garbage").c_str(), 0755), 0);
  std::vector<ProcessSpec> specs;
  for (int i = 0; i < 3; ++i) {
    ProcessSpec spec = i == 1 ? SpecBuilder(dir_).Argv({dir_.Sub("garbage")}).Build()
                              : SpecBuilder(dir_).Shell("echo ran-" + std::to_string(i) + "; exit " + std::to_string(i + 3)).Build();
    spec.exit_status_path = dir_.Sub("exit-status-" + std::to_string(i));
    specs.push_back(std::move(spec));
  }
  std::vector<Result<RunningProcess>> started = runner_.StartAll(specs);
  ASSERT_EQ(started.size(), 3u);
  ASSERT_TRUE(started[0].has_value()) << started[0].error().ToString();
  ASSERT_FALSE(started[1].has_value());
  EXPECT_THAT(started[1].error().message(), HasSubstr("Exec format error"));
  ASSERT_TRUE(started[2].has_value()) << started[2].error().ToString();
  EXPECT_EQ(runner_.tracked_count(), 2u);
  for (int i : {0, 2}) {
    std::optional<ProcessExit> exit = WaitForExit(runner_, started[i]->identity);
    ASSERT_TRUE(exit.has_value());
    EXPECT_EQ(exit->exit_code, i + 3);
    EXPECT_EQ(ReadExitStatusFile(specs[i].exit_status_path, started[i]->identity).exit_code, i + 3);
  }
  EXPECT_THAT(ReadFile(dir_.Sub("out.log")), HasSubstr("ran-0"));
  EXPECT_THAT(ReadFile(dir_.Sub("out.log")), HasSubstr("ran-2"));
  EXPECT_TRUE(runner_.StartAll({}).empty());
  int status = 0;
  EXPECT_EQ(::waitpid(-1, &status, WNOHANG), -1) << "a child was left unreaped";
}

// StartAll's hook sees every launched process before any pod's command runs
// (the agent records them there first): while it runs, each reaper is alive
// and its command has not started; once StartAll returns, they run.
TEST_F(ProcessRunnerTest, StartAllRunsNoCommandBeforeItsHookReturns) {
  std::vector<ProcessSpec> specs;
  for (int i = 0; i < 2; ++i) {
    ProcessSpec spec = SpecBuilder(dir_).Shell("touch ran-" + std::to_string(i) + "; sleep 30").Build();
    spec.exit_status_path = dir_.Sub("exit-status-" + std::to_string(i));
    specs.push_back(std::move(spec));
  }
  specs.push_back(SpecBuilder(dir_).Argv({dir_.Sub("missing-program")}).Build());
  std::vector<std::optional<ProcessIdentity>> seen;
  std::vector<Result<RunningProcess>> started = runner_.StartAll(specs, [&](const auto& launched) {
    seen = launched;
    std::this_thread::sleep_for(std::chrono::milliseconds(200));  // time enough for a command let go too early
    for (int i = 0; i < 2; ++i) {
      EXPECT_FALSE(std::filesystem::exists(dir_.Sub("ran-" + std::to_string(i)))) << "pod " << i << " ran early";
      EXPECT_TRUE(launched[i].has_value() && IsRunning(*launched[i]));
    }
    return true;
  });
  ASSERT_EQ(seen.size(), 3u);
  EXPECT_FALSE(seen[2].has_value());  // the missing program failed before any clone
  for (int i = 0; i < 2; ++i) {
    ASSERT_TRUE(seen[i].has_value());
    ASSERT_TRUE(started[i].has_value()) << started[i].error().ToString();
    EXPECT_EQ(started[i]->identity.pid, seen[i]->pid);
    EXPECT_TRUE(Eventually([&] { return std::filesystem::exists(dir_.Sub("ran-" + std::to_string(i))); }));
    ASSERT_TRUE(runner_.BeginTermination(started[i]->identity, Duration::Millis(0), Now()).ok());
    EXPECT_TRUE(WaitForExit(runner_, started[i]->identity).has_value());
  }
  EXPECT_FALSE(started[2].has_value());
}

// When the hook cannot record the launched processes (it returns false), none
// of their commands runs: each start fails, saying so, and nothing is left
// behind (no tracked process, no unreaped child); each exit status file says
// the pod never started.
TEST_F(ProcessRunnerTest, StartAllHoldsEveryCommandBackWhenItsHookFails) {
  std::vector<ProcessSpec> specs;
  for (int i = 0; i < 2; ++i) {
    ProcessSpec spec = SpecBuilder(dir_).Shell("touch ran-" + std::to_string(i)).Build();
    spec.exit_status_path = dir_.Sub("exit-status-" + std::to_string(i));
    specs.push_back(std::move(spec));
  }
  std::vector<std::optional<ProcessIdentity>> launched;
  std::vector<Result<RunningProcess>> started = runner_.StartAll(specs, [&](const auto& l) {
    launched = l;
    return false;
  });
  ASSERT_EQ(started.size(), 2u);
  ASSERT_EQ(launched.size(), 2u);
  for (int i = 0; i < 2; ++i) {
    ASSERT_FALSE(started[i].has_value());
    EXPECT_EQ(started[i].error().code(), StatusCode::kUnavailable);
    EXPECT_THAT(started[i].error().message(), HasSubstr("was not started: its pod reaper was never told to run it"));
    ASSERT_TRUE(launched[i].has_value());
    EXPECT_EQ(ReadExitStatusFile(specs[i].exit_status_path, *launched[i]).cause, ProcessExit::Cause::kNotStarted);
  }
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
  for (int i = 0; i < 2; ++i) EXPECT_FALSE(std::filesystem::exists(dir_.Sub("ran-" + std::to_string(i))));
  EXPECT_EQ(runner_.tracked_count(), 0u);
  int status = 0;
  EXPECT_EQ(::waitpid(-1, &status, WNOHANG), -1) << "a child was left unreaped";
  // A hook that throws holds them back too.
  started = runner_.StartAll(specs, [](const auto&) -> bool { throw std::runtime_error("no"); });
  for (int i = 0; i < 2; ++i) EXPECT_FALSE(started[i].has_value());
  EXPECT_EQ(::waitpid(-1, &status, WNOHANG), -1) << "a child was left unreaped";
}

// A reaper killed while it waits at its gate (the OOM killer, an admin) is not
// taken for a started pod: the start fails, saying so, and nothing is tracked.
TEST_F(ProcessRunnerTest, AReaperKilledAtItsGateIsNotAStart) {
  ProcessSpec spec = SpecBuilder(dir_).Shell("touch ran").Build();
  spec.exit_status_path = dir_.Sub("exit-status");
  std::vector<Result<RunningProcess>> started = runner_.StartAll({spec}, [](const auto& launched) {
    EXPECT_TRUE(launched[0].has_value());
    if (launched[0]) ::kill(launched[0]->pid, SIGKILL);
    return true;
  });
  ASSERT_EQ(started.size(), 1u);
  ASSERT_FALSE(started[0].has_value());
  EXPECT_THAT(started[0].error().message(), HasSubstr("ended before it ran the command"));
  EXPECT_EQ(runner_.tracked_count(), 0u);
  EXPECT_FALSE(std::filesystem::exists(dir_.Sub("ran")));
  int status = 0;
  EXPECT_EQ(::waitpid(-1, &status, WNOHANG), -1) << "a child was left unreaped";
}

// A reaper whose agent went away before letting it run its command (its gate
// closes without the byte) never runs it: it says so in the exit status file
// (read back as kNotStarted, so that the next agent starts the pod afresh
// rather than report it failed) and on its report pipe.
TEST_F(ProcessRunnerTest, AReaperWhoseAgentWentAwayNeverRunsTheCommand) {
  int gate[2], report[2];
  ASSERT_EQ(::socketpair(AF_UNIX, SOCK_STREAM, 0, gate), 0);
  ASSERT_EQ(::pipe(report), 0);
  const int status = ::open(dir_.Sub("exit-status").c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0640);
  ASSERT_GE(status, 0);
  const std::string reaper = DefaultPodReaperPath();
  const std::string marker = dir_.Sub("ran");
  const pid_t pid = ::fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    ::close(gate[1]);
    ::close(report[0]);
    const std::string status_fd = std::to_string(status), report_fd = std::to_string(report[1]),
                      gate_fd = std::to_string(gate[0]), script = "touch " + marker;
    ::execl(reaper.c_str(), reaper.c_str(), status_fd.c_str(), report_fd.c_str(), gate_fd.c_str(), "/bin/sh", "sh", "-c",
            script.c_str(), static_cast<char*>(nullptr));
    ::_exit(126);
  }
  ::close(gate[0]);
  ::close(report[1]);
  ::close(status);
  const Result<uint64_t> start_ticks = ReadStartTicks(pid);  // the reaper waits at its gate
  ::close(gate[1]);  // the agent dies: no byte ever comes
  ChildFailure failure;
  EXPECT_EQ(::read(report[0], &failure, sizeof failure), static_cast<ssize_t>(sizeof failure));
  EXPECT_EQ(failure.stage, static_cast<int32_t>(ChildStage::kNotReleased));
  ::close(report[0]);
  int wait_status = 0;
  ASSERT_EQ(::waitpid(pid, &wait_status, 0), pid);
  EXPECT_TRUE(WIFEXITED(wait_status) && WEXITSTATUS(wait_status) == 127) << wait_status;
  EXPECT_FALSE(std::filesystem::exists(marker));
  ASSERT_TRUE(start_ticks.has_value());
  const ProcessIdentity reaper_identity{.pid = pid, .start_ticks = *start_ticks};
  EXPECT_EQ(ReadExitStatusFile(dir_.Sub("exit-status"), reaper_identity).cause, ProcessExit::Cause::kNotStarted);
  EXPECT_EQ(ReadExitStatusFile(dir_.Sub("exit-status"), reaper_identity).Describe(),
            "never started (the agent that launched it went away before letting it run)");
}

// Without its reaper program the runner cannot keep a pod's exit status: Start
// says which program is missing and starts nothing.
TEST_F(ProcessRunnerTest, AMissingReaperIsAnErrorNamingIt) {
  ProcessRunner runner(ProcessRunnerOptions{.pod_reaper = dir_.Sub("no-reaper-here")});
  ProcessSpec spec = SpecBuilder(dir_).Shell("echo should-not-run").Build();
  spec.exit_status_path = dir_.Sub("exit-status");
  Result<RunningProcess> started = runner.Start(spec);
  ASSERT_FALSE(started.has_value());
  EXPECT_EQ(started.error().code(), StatusCode::kUnavailable);
  EXPECT_THAT(started.error().message(), HasSubstr("cannot run the pod reaper " + dir_.Sub("no-reaper-here")));
  EXPECT_THAT(started.error().message(), HasSubstr("No such file or directory"));
  EXPECT_EQ(runner.tracked_count(), 0u);
  EXPECT_EQ(ReadFile(dir_.Sub("out.log")).find("should-not-run"), std::string::npos);
}

// The reaper is found beside the build's programs, or beside this one.
TEST(PodReaperTest, TheDefaultPathIsAnExecutable) {
  EXPECT_EQ(::access(DefaultPodReaperPath().c_str(), X_OK), 0) << DefaultPodReaperPath();
}

TEST_F(ProcessRunnerTest, MissingWorkingDirectoryIsAnError) {
  Result<RunningProcess> started =
      runner_.Start(SpecBuilder(dir_).Shell("true").WorkingDir(dir_.Sub("absent")).Build());
  ASSERT_FALSE(started.has_value());
  EXPECT_EQ(started.error().code(), StatusCode::kNotFound);
  EXPECT_THAT(started.error().message(), HasSubstr(dir_.Sub("absent")));
}

TEST_F(ProcessRunnerTest, MalformedEnvironmentEntryIsAnError) {
  Result<RunningProcess> started = runner_.Start(SpecBuilder(dir_).Shell("true").Env("NOEQUALS").Build());
  ASSERT_FALSE(started.has_value());
  EXPECT_EQ(started.error().code(), StatusCode::kInvalidArgument);
  EXPECT_THAT(started.error().message(), HasSubstr("NOEQUALS"));
}

// A process that handles SIGTERM by exiting gets it and ends on its own: the
// deadline is never reached (the runner's clock is pinned before it), so no
// SIGKILL is sent, and the exit code is the handler's.
TEST_F(ProcessRunnerTest, TermHandlerEndsTheProcessWithinTheGrace) {
  RunningProcess p =
      StartOk(SpecBuilder(dir_).Shell("trap 'echo got-term; exit 0' TERM; echo ready; sleep 100 & wait").Build());
  ASSERT_TRUE(LogContains("ready"));  // the trap is set
  const Timestamp start = Now();
  ASSERT_TRUE(runner_.BeginTermination(p.identity, Duration::Seconds(30), start).ok());
  EXPECT_EQ(runner_.NextKillDeadline(), start + Duration::Seconds(30));

  std::optional<ProcessExit> exit = WaitForExit(runner_, p.identity, [start] { return start; });
  ASSERT_TRUE(exit.has_value());
  EXPECT_EQ(exit->cause, ProcessExit::Cause::kExited);
  EXPECT_EQ(exit->exit_code, 0);
  EXPECT_THAT(ReadFile(dir_.Sub("out.log")), HasSubstr("got-term"));
  EXPECT_EQ(runner_.NextKillDeadline(), Timestamp::Never());
}

// A stopped process is continued along with its SIGTERM, so it can still end
// gracefully instead of waiting, stopped, for the SIGKILL.
TEST_F(ProcessRunnerTest, StoppedProcessStillActsOnTheTerm) {
  RunningProcess p = StartOk(SpecBuilder(dir_).Shell("trap 'exit 0' TERM; echo ready; sleep 100 & wait").Build());
  ASSERT_TRUE(LogContains("ready"));
  ASSERT_TRUE(runner_.Signal(p.identity, SIGSTOP).ok());
  const Timestamp start = Now();
  ASSERT_TRUE(runner_.BeginTermination(p.identity, Duration::Seconds(30), start).ok());
  std::optional<ProcessExit> exit = WaitForExit(runner_, p.identity, [start] { return start; });
  ASSERT_TRUE(exit.has_value());
  EXPECT_EQ(exit->Describe(), "exited with code 0");
}

// A process that ignores SIGTERM is SIGKILLed by the first Poll after the grace.
TEST_F(ProcessRunnerTest, IgnoredTermIsFollowedByKillAfterTheGrace) {
  RunningProcess p = StartOk(SpecBuilder(dir_).Shell("trap '' TERM; echo ready; sleep 100").Build());
  ASSERT_TRUE(LogContains("ready"));
  const Timestamp start = Now();
  ASSERT_TRUE(runner_.BeginTermination(p.identity, Duration::Millis(200), start).ok());

  // Before the deadline a Poll leaves it running (TERM is ignored).
  Result<std::optional<ProcessExit>> early = runner_.Poll(p.identity, start + Duration::Millis(199));
  ASSERT_TRUE(early.has_value());
  EXPECT_FALSE(early->has_value());
  EXPECT_TRUE(IsRunning(p.identity));

  std::optional<ProcessExit> exit = WaitForExit(runner_, p.identity);
  ASSERT_TRUE(exit.has_value());
  EXPECT_EQ(exit->cause, ProcessExit::Cause::kSignaled);
  EXPECT_EQ(exit->signal, SIGKILL);
  EXPECT_FALSE(exit->oom_killed);  // a SIGKILL alone is not out of memory
  EXPECT_EQ(exit->Describe(), "killed by signal 9 (SIGKILL)");
}

// Termination reaches the whole group: a grandchild that also ignores SIGTERM
// dies with its parent.
TEST_F(ProcessRunnerTest, TerminationKillsGrandchildren) {
  RunningProcess p = StartOk(SpecBuilder(dir_).Shell("trap '' TERM; sleep 100 & echo grandchild $!; wait").Build());
  const ProcessIdentity grandchild = PrintedIdentity("grandchild");
  ASSERT_TRUE(IsRunning(grandchild));
  ASSERT_TRUE(runner_.BeginTermination(p.identity, Duration::Millis(200), Now()).ok());

  std::optional<ProcessExit> exit = WaitForExit(runner_, p.identity);
  ASSERT_TRUE(exit.has_value());
  EXPECT_EQ(exit->signal, SIGKILL);
  // Reparented once its parent died, it may linger as a zombie briefly.
  EXPECT_TRUE(Eventually([&] { return !IsRunning(grandchild); }));
}

// When the leader exits by itself, what it left behind in its group is killed:
// a pod ends as a whole.
TEST_F(ProcessRunnerTest, LeaderExitSweepsItsGroup) {
  RunningProcess p = StartOk(SpecBuilder(dir_).Shell("sleep 100 & echo straggler $!; exit 0").Build());
  const ProcessIdentity straggler = PrintedIdentity("straggler");
  std::optional<ProcessExit> exit = WaitForExit(runner_, p.identity);
  ASSERT_TRUE(exit.has_value());
  EXPECT_EQ(exit->exit_code, 0);
  EXPECT_TRUE(Eventually([&] { return !IsRunning(straggler); }));
}

// A process killed by a signal is reported as killed by it, not as an exit code.
TEST_F(ProcessRunnerTest, DeathBySignalIsReportedAsTheSignal) {
  RunningProcess p = StartOk(SpecBuilder(dir_).Argv({"sleep", "100"}).Build());
  ASSERT_TRUE(runner_.Signal(p.identity, SIGINT).ok());
  std::optional<ProcessExit> exit = WaitForExit(runner_, p.identity);
  ASSERT_TRUE(exit.has_value());
  EXPECT_EQ(exit->cause, ProcessExit::Cause::kSignaled);
  EXPECT_EQ(exit->signal, SIGINT);
  EXPECT_EQ(exit->exit_code, -1);
}

// A start time that does not match (as after pid reuse) makes Signal refuse.
TEST_F(ProcessRunnerTest, SignalRefusesAMismatchedIdentity) {
  RunningProcess p = StartOk(SpecBuilder(dir_).Argv({"sleep", "100"}).Build());
  const ProcessIdentity impostor{p.identity.pid, p.identity.start_ticks + 1};
  Status refused = runner_.Signal(impostor, SIGKILL);
  EXPECT_EQ(refused.code(), StatusCode::kConflict);
  EXPECT_THAT(refused.message(), HasSubstr("not signalled"));
  EXPECT_TRUE(IsRunning(p.identity));
  EXPECT_FALSE(IsRunning(impostor));
  EXPECT_EQ(runner_.BeginTermination(impostor, Duration::Millis(1), Now()).code(), StatusCode::kNotFound);
  EXPECT_EQ(runner_.Poll(impostor, Now()).error().code(), StatusCode::kNotFound);
}

TEST_F(ProcessRunnerTest, SignalToAVanishedPidIsNotFound) {
  RunningProcess p = StartOk(SpecBuilder(dir_).Shell("exit 0").Build());
  ASSERT_TRUE(WaitForExit(runner_, p.identity).has_value());  // reaped: the pid is free
  EXPECT_EQ(runner_.Signal(p.identity, SIGTERM).code(), StatusCode::kNotFound);
}

// After an agent restart, a new runner takes over a live process by identity;
// a wrong start time is refused.
TEST_F(ProcessRunnerTest, FreshRunnerAdoptsALiveProcess) {
  RunningProcess p = StartOk(SpecBuilder(dir_).Argv({"sleep", "100"}).Build());
  ProcessRunner restarted;
  Result<RunningProcess> adopted = restarted.Adopt(p.identity);
  ASSERT_TRUE(adopted.has_value()) << adopted.error().ToString();
  EXPECT_TRUE(adopted->adopted);
  EXPECT_EQ(adopted->identity, p.identity);
  EXPECT_EQ(adopted->pgid, p.identity.pid);
  EXPECT_EQ(restarted.tracked_count(), 1u);

  Result<RunningProcess> wrong = ProcessRunner().Adopt({p.identity.pid, p.identity.start_ticks + 1});
  ASSERT_FALSE(wrong.has_value());
  EXPECT_EQ(wrong.error().code(), StatusCode::kNotFound);
}

// An adopted process is not our child: its end shows as its identity leaving
// /proc (or turning zombie), with the exit code unknown. Here the process is a
// true orphan: it left the pod's session and its parent exited.
TEST_F(ProcessRunnerTest, AdoptedProcessEndIsDetected) {
  RunningProcess p = StartOk(SpecBuilder(dir_)
                                 .Shell("setsid sleep 100 >/dev/null 2>&1 & echo orphan $!; "
                                        "while [ ! -e go ]; do sleep 0.01; done")
                                 .Build());
  const ProcessIdentity orphan = PrintedIdentity("orphan");
  // Let the shell exit only once the orphan leads its own group (setsid ran).
  ASSERT_TRUE(Eventually([&] { return ProcessGroupOf(orphan.pid) == orphan.pid; }));
  std::ofstream(dir_.Sub("go")).flush();
  ASSERT_TRUE(WaitForExit(runner_, p.identity).has_value());
  ASSERT_TRUE(IsRunning(orphan));  // outside the group, so the sweep spared it

  ProcessRunner restarted;
  ASSERT_TRUE(restarted.Adopt(orphan).has_value());
  Result<std::optional<ProcessExit>> running = restarted.Poll(orphan, Now());
  ASSERT_TRUE(running.has_value());
  EXPECT_FALSE(running->has_value());

  ASSERT_TRUE(restarted.BeginTermination(orphan, Duration::Millis(200), Now()).ok());
  std::optional<ProcessExit> exit = WaitForExit(restarted, orphan);
  ASSERT_TRUE(exit.has_value());
  EXPECT_EQ(exit->cause, ProcessExit::Cause::kUnknown);
  EXPECT_THAT(exit->Describe(), HasSubstr("exit code unknown"));
  EXPECT_EQ(restarted.tracked_count(), 0u);
}

// With an exit status file, the group leader stays a reaper: a runner that adopts
// the pod after a restart (not its parent) still learns its exit code, and a
// SIGTERM to the group reaches the command, whose handler runs, not the reaper.
TEST_F(ProcessRunnerTest, AnAdoptedPodsExitCodeIsKeptByItsReaper) {
  ProcessSpec spec = SpecBuilder(dir_).Shell("echo up; while [ ! -e go ]; do sleep 0.01; done; exit 7").Build();
  spec.exit_status_path = dir_.Sub("exit-status");
  RunningProcess p = StartOk(spec);
  ASSERT_TRUE(LogContains("up"));
  ProcessRunner restarted;
  ASSERT_TRUE(restarted.Adopt(p.identity, spec.exit_status_path).has_value());
  std::ofstream(dir_.Sub("go")).flush();
  ASSERT_TRUE(WaitForExit(runner_, p.identity).has_value());  // the first runner, its parent, reaps it
  std::optional<ProcessExit> exit = WaitForExit(restarted, p.identity);
  ASSERT_TRUE(exit.has_value());
  EXPECT_EQ(exit->cause, ProcessExit::Cause::kExited);
  EXPECT_EQ(exit->exit_code, 7);

  ProcessSpec trapping = SpecBuilder(dir_).Shell("trap 'echo term; exit 0' TERM; echo ready; while :; do sleep 0.01; done").Build();
  trapping.exit_status_path = dir_.Sub("exit-status-2");
  RunningProcess t = StartOk(trapping);
  ASSERT_TRUE(LogContains("ready"));
  ASSERT_TRUE(runner_.BeginTermination(t.identity, Duration::Seconds(10), Now()).ok());
  std::optional<ProcessExit> ended = WaitForExit(runner_, t.identity);
  ASSERT_TRUE(ended.has_value());
  EXPECT_EQ(ended->cause, ProcessExit::Cause::kExited) << ended->Describe();
  EXPECT_EQ(ended->exit_code, 0);
  EXPECT_TRUE(LogContains("term"));
  EXPECT_EQ(ReadExitStatusFile(trapping.exit_status_path, t.identity).exit_code, 0);
}

// A pod's successive processes share one exit status file, each with its own
// line: a restart that is launched but never let run (its agent killed before
// recording it) does not hide how the process before it ended, which the next
// agent, still holding that one's identity, must report. A status written
// alone by a reaper of an earlier version is read as its process's, and the
// next launch drops it, so that it is never taken for a later process's.
TEST_F(ProcessRunnerTest, EachOfAPodsProcessesKeepsItsOwnExitStatus) {
  ProcessSpec spec = SpecBuilder(dir_).Shell("exit 3").Build();
  spec.exit_status_path = dir_.Sub("exit-status");
  std::ofstream(spec.exit_status_path) << "256";  // an earlier version's reaper: exit code 1, no pid, no newline
  const ProcessExit legacy = ReadExitStatusFile(spec.exit_status_path, ProcessIdentity{.pid = 12345, .start_ticks = 1});
  EXPECT_EQ(legacy.cause, ProcessExit::Cause::kExited);
  EXPECT_EQ(legacy.exit_code, 1);

  const RunningProcess first = StartOk(spec);
  std::optional<ProcessExit> first_exit = WaitForExit(runner_, first.identity);
  ASSERT_TRUE(first_exit.has_value());
  ASSERT_EQ(first_exit->exit_code, 3);
  EXPECT_EQ(ReadExitStatusFile(spec.exit_status_path, ProcessIdentity{.pid = 12345, .start_ticks = 1}).cause, ProcessExit::Cause::kUnknown)
      << "the earlier version's status was taken for another process's";

  std::vector<std::optional<ProcessIdentity>> launched;
  std::vector<Result<RunningProcess>> held = runner_.StartAll({spec}, [&](const auto& l) {
    launched = l;
    return false;
  });
  ASSERT_EQ(held.size(), 1u);
  ASSERT_FALSE(held[0].has_value());
  ASSERT_TRUE(launched.size() == 1 && launched[0].has_value());

  spec.argv = {"/bin/sh", "-c", "exit 4"};
  const RunningProcess third = StartOk(spec);
  ASSERT_TRUE(WaitForExit(runner_, third.identity).has_value());

  const ProcessExit read_first = ReadExitStatusFile(spec.exit_status_path, first.identity);
  EXPECT_EQ(read_first.cause, ProcessExit::Cause::kExited);
  EXPECT_EQ(read_first.exit_code, 3);
  EXPECT_EQ(ReadExitStatusFile(spec.exit_status_path, *launched[0]).cause, ProcessExit::Cause::kNotStarted);
  EXPECT_EQ(ReadExitStatusFile(spec.exit_status_path, third.identity).exit_code, 4);
  // The same pid, started at another time (used again): not that process's line.
  const ProcessIdentity reused{.pid = first.identity.pid, .start_ticks = first.identity.start_ticks + 1};
  EXPECT_EQ(ReadExitStatusFile(spec.exit_status_path, reused).cause, ProcessExit::Cause::kUnknown);
}

// A grace of zero kills at once; a later, longer grace does not extend it.
TEST_F(ProcessRunnerTest, ZeroGraceKillsAtOnce) {
  RunningProcess p = StartOk(SpecBuilder(dir_).Shell("trap '' TERM; echo ready; sleep 100").Build());
  ASSERT_TRUE(LogContains("ready"));
  const Timestamp start = Now();
  ASSERT_TRUE(runner_.BeginTermination(p.identity, Duration::Millis(0), start).ok());
  ASSERT_TRUE(runner_.BeginTermination(p.identity, Duration::Seconds(60), start).ok());
  std::optional<ProcessExit> exit = WaitForExit(runner_, p.identity, [start] { return start; });
  ASSERT_TRUE(exit.has_value());
  EXPECT_EQ(exit->signal, SIGKILL);
}

// ---------------------------------------------------------------------------
// Cgroups.

// Limits asked for with a parent that is not a cgroup: the process still runs,
// and the warning says why the limits are not enforced.
TEST_F(ProcessRunnerTest, LimitsWithoutUsableCgroupAreAWarning) {
  ProcessRunner runner({.cgroups = CgroupPlacement::V2(dir_.path())});
  Result<RunningProcess> started =
      runner.Start(SpecBuilder(dir_).Name("warned").Shell("exit 0").Cpu(500).Memory(64 << 20).Build());
  ASSERT_TRUE(started.has_value()) << started.error().ToString();
  EXPECT_THAT(started->cgroup_dirs, IsEmpty());
  ASSERT_EQ(started->warnings.size(), 1u);
  EXPECT_THAT(started->warnings[0], HasSubstr("limits not enforced"));
  EXPECT_THAT(started->warnings[0], HasSubstr(dir_.path() + " is not in a cgroup v2 file system"));
  EXPECT_FALSE(std::filesystem::exists(dir_.Sub("tessera-warned")));  // nothing written into the plain dir
  std::optional<ProcessExit> exit = WaitForExit(runner, started->identity);
  ASSERT_TRUE(exit.has_value());
  EXPECT_EQ(exit->exit_code, 0);
}

// cgroup v1 is per controller: each missing one has its own warning.
TEST_F(ProcessRunnerTest, V1LimitsWithoutHierarchiesAreWarnings) {
  ProcessRunner runner({.cgroups = CgroupPlacement::V1("", dir_.Sub("absent"))});
  Result<RunningProcess> started =
      runner.Start(SpecBuilder(dir_).Name("warned").Shell("exit 0").Cpu(250).Memory(64 << 20).Build());
  ASSERT_TRUE(started.has_value()) << started.error().ToString();
  ASSERT_EQ(started->warnings.size(), 2u);
  EXPECT_THAT(started->warnings[0], HasSubstr("cpu limit not enforced: no cgroup v1 cpu hierarchy"));
  EXPECT_THAT(started->warnings[1], HasSubstr("memory limit not enforced"));
  EXPECT_THAT(started->warnings[1], HasSubstr(dir_.Sub("absent")));
  ASSERT_TRUE(WaitForExit(runner, started->identity).has_value());
}

TEST_F(ProcessRunnerTest, NoCgroupsIsAWarningWithTheReason) {
  ProcessRunner runner({.cgroups = CgroupPlacement::None("no cgroup file system is mounted")});
  Result<RunningProcess> started = runner.Start(SpecBuilder(dir_).Shell("exit 0").Memory(1 << 30).Build());
  ASSERT_TRUE(started.has_value());
  ASSERT_EQ(started->warnings.size(), 1u);
  EXPECT_EQ(started->warnings[0], "cpu and memory limits not enforced: no cgroup file system is mounted");
  ASSERT_TRUE(WaitForExit(runner, started->identity).has_value());
}

// A real cgroup v2 hierarchy without the controllers delegated (this host's
// /sys/fs/cgroup/unified offers only hugetlb) gives a warning that says so.
TEST_F(ProcessRunnerTest, UndelegatedV2ControllersAreAWarning) {
  const std::string unified = "/sys/fs/cgroup/unified";
  const std::string offered = ReadFile(unified + "/cgroup.controllers");
  if (offered.empty() || offered.find("memory") != std::string::npos) {
    GTEST_SKIP() << "needs a cgroup v2 hierarchy at " << unified << " without the memory controller";
  }
  ProcessRunner runner({.cgroups = CgroupPlacement::V2(unified)});
  Result<RunningProcess> started =
      runner.Start(SpecBuilder(dir_).Name("undelegated").Shell("exit 0").Memory(1 << 30).Build());
  ASSERT_TRUE(started.has_value());
  ASSERT_EQ(started->warnings.size(), 1u);
  EXPECT_THAT(started->warnings[0], HasSubstr("the memory controller is not delegated to " + unified));
  ASSERT_TRUE(WaitForExit(runner, started->identity).has_value());
}

// Where the host lets us (root, writable cgroups), the limits are written, the
// process is inside its cgroup from before exec, and the cgroup is removed
// after the process ends.
TEST_F(ProcessRunnerTest, LimitsAreEnforcedWhereTheHostAllows) {
  if (::geteuid() != 0) GTEST_SKIP() << "needs root to create cgroups";
  const CgroupPlacement placement = DetectCgroupPlacement();
  ProcessRunner runner({.cgroups = placement});
  const std::string name = "runner-test-" + std::to_string(::getpid());
  Result<RunningProcess> started = runner.Start(SpecBuilder(dir_)
                                                    .Name(name)
                                                    .Shell("cat /proc/self/cgroup; echo ready; exec sleep 100")
                                                    .Cpu(500)
                                                    .Memory(64 << 20)
                                                    .Build());
  ASSERT_TRUE(started.has_value()) << started.error().ToString();
  if (!started->warnings.empty()) {
    (void)runner.Signal(started->identity, SIGKILL);
    WaitForExit(runner, started->identity);
    GTEST_SKIP() << "this host does not let us enforce limits: " << started->warnings[0];
  }
  ASSERT_TRUE(LogContains("ready"));
  const std::string log = ReadFile(dir_.Sub("out.log"));
  ASSERT_THAT(started->cgroup_dirs, Not(IsEmpty()));
  for (const std::string& dir : started->cgroup_dirs) {
    EXPECT_THAT(log, HasSubstr("/tessera-" + name));  // /proc/self/cgroup, read by the pod itself
    EXPECT_EQ(ReadFile(dir + "/cgroup.procs"), std::to_string(started->identity.pid) + "\n");
  }
  if (placement.version == CgroupPlacement::Version::kV2) {
    EXPECT_EQ(ReadFile(started->cgroup_dirs[0] + "/cpu.max"), "50000 100000\n");  // 500m = 50 ms per 100 ms
    EXPECT_EQ(ReadFile(started->cgroup_dirs[0] + "/memory.max"), "67108864\n");   // 64 << 20
  } else {
    ASSERT_EQ(started->cgroup_dirs.size(), 2u);
    EXPECT_EQ(ReadFile(started->cgroup_dirs[0] + "/cpu.cfs_quota_us"), "50000\n");
    EXPECT_EQ(ReadFile(started->cgroup_dirs[1] + "/memory.limit_in_bytes"), "67108864\n");
  }

  // A fresh runner finds the cgroup again when it adopts the process.
  ProcessRunner restarted({.cgroups = placement});
  Result<RunningProcess> adopted = restarted.Adopt(started->identity);
  ASSERT_TRUE(adopted.has_value());
  EXPECT_EQ(adopted->cgroup_dirs, started->cgroup_dirs);

  ASSERT_TRUE(runner.BeginTermination(started->identity, Duration::Millis(200), Now()).ok());
  std::optional<ProcessExit> exit = WaitForExit(runner, started->identity);
  ASSERT_TRUE(exit.has_value());
  EXPECT_FALSE(exit->oom_killed);
  EXPECT_TRUE(Eventually([&] { return runner.RetryCgroupRemovals() == 0; }));
  for (const std::string& dir : started->cgroup_dirs) EXPECT_FALSE(std::filesystem::exists(dir)) << dir;
  EXPECT_TRUE(WaitForExit(restarted, started->identity).has_value());
}

// A second start with the name of a pod whose cgroup still holds processes is
// refused: the earlier run is alive, and a pod never runs twice at once.
TEST_F(ProcessRunnerTest, StartRefusesWhileAnEarlierRunHoldsTheCgroup) {
  if (::geteuid() != 0) GTEST_SKIP() << "needs root to create cgroups";
  const std::string name = "twice-" + std::to_string(::getpid());
  RunningProcess first = StartOk(SpecBuilder(dir_).Name(name).Argv({"sleep", "100"}).Memory(64 << 20).Build());
  if (!first.warnings.empty()) GTEST_SKIP() << "this host does not let us enforce limits: " << first.warnings[0];
  Result<RunningProcess> second =
      runner_.Start(SpecBuilder(dir_).Name(name).Argv({"sleep", "100"}).Memory(64 << 20).Build());
  ASSERT_FALSE(second.has_value());
  EXPECT_EQ(second.error().code(), StatusCode::kConflict);
  EXPECT_THAT(second.error().message(), HasSubstr("an earlier run of this pod is alive"));
  EXPECT_TRUE(IsRunning(first.identity));
}

// Parents of this process's own under the detected ones, for a test of
// RemoveStaleCgroups: a runner without an owner removes every empty
// "tessera-*" cgroup under its parents, which would include the one another
// test process (ctest runs two at once) has just made for a pod it is
// starting. Removed again, once empty, when this goes.
class PrivateCgroupParents {
 public:
  explicit PrivateCgroupParents(const CgroupPlacement& detected) {
    const std::string name = "runner-test-" + std::to_string(::getpid());
    auto make = [&](const std::string& parent) {
      if (parent.empty()) return std::string();
      const std::string dir = parent + "/" + name;
      if (::mkdir(dir.c_str(), 0755) == 0) dirs_.push_back(dir);
      return dir;
    };
    if (detected.version == CgroupPlacement::Version::kV2) {
      // Its children get the controllers only if it has them from its parent.
      std::ofstream(detected.v2_parent + "/cgroup.subtree_control") << "+cpu +memory";
      placement_ = CgroupPlacement::V2(make(detected.v2_parent));
    } else if (detected.version == CgroupPlacement::Version::kV1) {
      placement_ = CgroupPlacement::V1(make(detected.v1_cpu_parent), make(detected.v1_memory_parent));
    } else {
      placement_ = detected;
    }
  }
  ~PrivateCgroupParents() {
    for (const std::string& dir : dirs_) ::rmdir(dir.c_str());
  }
  const CgroupPlacement& placement() const { return placement_; }

 private:
  CgroupPlacement placement_;
  std::vector<std::string> dirs_;
};

// A restarted agent removes the empty cgroups an earlier one left behind, and
// only those: a cgroup with a process in it stays, and so do the cgroups of
// another agent on the same host (another owner), even one whose name begins
// with this one's.
TEST_F(ProcessRunnerTest, RemoveStaleCgroupsKeepsTheOnesInUseAndOtherOwners) {
  if (::geteuid() != 0) GTEST_SKIP() << "needs root to create cgroups";
  const PrivateCgroupParents parents(DetectCgroupPlacement());
  const CgroupPlacement& placement = parents.placement();
  ProcessRunner runner({.cgroups = placement, .cgroup_owner = "node-1"});
  const std::string suffix = std::to_string(::getpid());
  Result<RunningProcess> live =
      runner.Start(SpecBuilder(dir_).Name("live-" + suffix).Argv({"sleep", "100"}).Memory(64 << 20).Build());
  ASSERT_TRUE(live.has_value());
  started_.push_back(live->identity);  // TearDown kills it if an assertion stops the test early
  if (!live->warnings.empty()) {
    (void)runner.Signal(live->identity, SIGKILL);
    WaitForExit(runner, live->identity);
    GTEST_SKIP() << "this host does not let us enforce limits: " << live->warnings[0];
  }
  for (const std::string& dir : live->cgroup_dirs) {
    EXPECT_EQ(std::filesystem::path(dir).filename().string(), "tessera-node-1_live-" + suffix);
  }
  const std::string parent =
      placement.version == CgroupPlacement::Version::kV2 ? placement.v2_parent : placement.v1_memory_parent;
  const std::string stale = parent + "/tessera-node-1_stale-" + suffix;
  const std::string other = parent + "/tessera-node-10_stale-" + suffix;
  ASSERT_EQ(::mkdir(stale.c_str(), 0755), 0);
  ASSERT_EQ(::mkdir(other.c_str(), 0755), 0);

  ProcessRunner restarted({.cgroups = placement, .cgroup_owner = "node-1"});
  restarted.RemoveStaleCgroups();
  EXPECT_FALSE(std::filesystem::exists(stale));
  EXPECT_TRUE(std::filesystem::exists(other));
  for (const std::string& dir : live->cgroup_dirs) EXPECT_TRUE(std::filesystem::exists(dir)) << dir;
  ProcessRunner shorter_name({.cgroups = placement, .cgroup_owner = "node"});
  shorter_name.RemoveStaleCgroups();
  EXPECT_TRUE(std::filesystem::exists(other));
  ProcessRunner underscored({.cgroups = placement, .cgroup_owner = "node_10"});  // its '_' becomes '-': node-10's
  underscored.RemoveStaleCgroups();
  EXPECT_FALSE(std::filesystem::exists(other));

  (void)runner.Signal(live->identity, SIGKILL);
  ASSERT_TRUE(WaitForExit(runner, live->identity).has_value());
  EXPECT_TRUE(Eventually([&] { return runner.RetryCgroupRemovals() == 0; }));
}

// A pod whose names add up to more than a file name holds (255 bytes) still
// gets its cgroup, under a shortened name that keeps it apart from others.
TEST_F(ProcessRunnerTest, ALongPodNameStillGetsItsCgroup) {
  if (::geteuid() != 0) GTEST_SKIP() << "needs root to create cgroups";
  const PrivateCgroupParents parents(DetectCgroupPlacement());
  ProcessRunner runner({.cgroups = parents.placement(), .cgroup_owner = std::string(63, 'n')});
  Result<RunningProcess> live = runner.Start(
      SpecBuilder(dir_).Name(std::string(300, 'p') + std::to_string(::getpid())).Argv({"sleep", "100"}).Memory(64 << 20).Build());
  ASSERT_TRUE(live.has_value()) << live.error().ToString();
  started_.push_back(live->identity);
  if (!live->warnings.empty()) {
    (void)runner.Signal(live->identity, SIGKILL);
    WaitForExit(runner, live->identity);
    GTEST_SKIP() << "this host does not let us enforce limits: " << live->warnings[0];
  }
  ASSERT_FALSE(live->cgroup_dirs.empty());
  for (const std::string& dir : live->cgroup_dirs) {
    EXPECT_LE(std::filesystem::path(dir).filename().string().size(), 255u) << dir;
    EXPECT_TRUE(std::filesystem::exists(dir)) << dir;
  }
  (void)runner.Signal(live->identity, SIGKILL);
  ASSERT_TRUE(WaitForExit(runner, live->identity).has_value());
  EXPECT_TRUE(Eventually([&] { return runner.RetryCgroupRemovals() == 0; }));
}

// A pod that outgrows its memory limit is killed by the kernel, and its exit
// says so (through the cgroup's oom_kill counter).
TEST_F(ProcessRunnerTest, OutOfMemoryIsDetected) {
  if (::geteuid() != 0) GTEST_SKIP() << "needs root to create cgroups";
  ProcessRunner runner;
  // The shell holds 64 MiB of output in a variable, past a 16 MiB limit.
  Result<RunningProcess> started =
      runner.Start(SpecBuilder(dir_)
                       .Name("oom-test-" + std::to_string(::getpid()))
                       .Shell("x=$(head -c 67108864 /dev/zero | tr '\\0' a); echo survived")
                       .Memory(16 << 20)
                       .Build());
  ASSERT_TRUE(started.has_value()) << started.error().ToString();
  if (!started->warnings.empty()) {
    WaitForExit(runner, started->identity);
    GTEST_SKIP() << "this host does not let us enforce limits: " << started->warnings[0];
  }
  std::optional<ProcessExit> exit = WaitForExit(runner, started->identity);
  ASSERT_TRUE(exit.has_value());
  EXPECT_TRUE(exit->oom_killed) << exit->Describe();
  EXPECT_THAT(exit->Describe(), HasSubstr("OOM killer"));
  EXPECT_THAT(ReadFile(dir_.Sub("out.log")), Not(HasSubstr("survived")));
  // Its pipeline may still be dying when the end is reported; the cgroup goes
  // once it is empty.
  EXPECT_TRUE(Eventually([&] { return runner.RetryCgroupRemovals() == 0; }));
}

// Detection on this host names a usable placement or says why there is none.
TEST(CgroupDetectionTest, DetectsAPlacementOrExplainsWhyNot) {
  const CgroupPlacement placement = DetectCgroupPlacement();
  switch (placement.version) {
    case CgroupPlacement::Version::kV2:
      EXPECT_TRUE(std::filesystem::exists(placement.v2_parent + "/cgroup.controllers"));
      break;
    case CgroupPlacement::Version::kV1:
      EXPECT_TRUE(!placement.v1_cpu_parent.empty() || !placement.v1_memory_parent.empty());
      if (!placement.v1_memory_parent.empty()) {
        EXPECT_TRUE(std::filesystem::exists(placement.v1_memory_parent + "/memory.limit_in_bytes"));
      }
      break;
    case CgroupPlacement::Version::kNone:
      EXPECT_FALSE(placement.why_none.empty());
      break;
  }
}

// ---------------------------------------------------------------------------
// Identity.

TEST(ProcessIdentityTest, ReadsOwnStartTicks) {
  Result<uint64_t> mine = ReadStartTicks(::getpid());
  ASSERT_TRUE(mine.has_value());
  EXPECT_TRUE(IsRunning({::getpid(), *mine}));
  EXPECT_FALSE(IsRunning({::getpid(), *mine + 1}));
  EXPECT_EQ(ReadStartTicks(0).error().code(), StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace tessera
