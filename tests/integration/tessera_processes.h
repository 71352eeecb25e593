// Starting the real `tessera` binary from integration tests: the server (its URL
// read from its first line) and agents.
//
// Each process writes its stdout and stderr to a file (appended to, so that a
// restarted process adds to the same file), never to a pipe that the test stops
// reading: both log with spdlog to stdout, and a write to a pipe without a
// reader would kill them with SIGPIPE at their first log line after start.
#pragma once

#include <fcntl.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include <nlohmann/json.hpp>

#include "client/api_client.h"
#include "tests/testing/read_file.h"

namespace tessera {

// kill(2) for a process the test started, refusing (-1) a pid that is not one:
// -1 comes from a start that failed, and kill(-1) would signal every process of
// the machine.
inline int KillProcess(pid_t pid, int sig) { return pid > 0 ? ::kill(pid, sig) : -1; }

struct ServerProcess {
  pid_t pid = -1;
  std::string url;
};

// A TCP port on 127.0.0.1 that was free a moment ago: bound to port 0, read back,
// released. For a server that must come back on the same address after a restart.
inline int FreeLocalPort() {
  const int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  EXPECT_GE(fd, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  addr.sin_port = 0;
  EXPECT_EQ(bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr), 0);
  socklen_t len = sizeof addr;
  EXPECT_EQ(getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len), 0);
  close(fd);
  return ntohs(addr.sin_port);
}

// Runs `args` (args[0] is the program) with stdout and stderr appended to
// `output_path`, and waits (up to `seconds`) for a line containing `expect` among
// those it writes after the start. Returns that line, or "" when the process
// ended or did not say it in time (then *pid_out is -1 if it ended).
inline std::string SpawnAndWaitForLine(const std::vector<std::string>& args, const std::string& output_path,
                                       const std::string& expect, pid_t* pid_out, int seconds = 30) {
  std::error_code ec;
  const uintmax_t before = std::filesystem::exists(output_path, ec) ? std::filesystem::file_size(output_path, ec) : 0;
  std::vector<std::string> copy = args;
  std::vector<char*> argv;
  for (std::string& a : copy) argv.push_back(a.data());
  argv.push_back(nullptr);
  const pid_t pid = fork();
  if (pid == 0) {
    const int out = open(output_path.c_str(), O_WRONLY | O_CREAT | O_APPEND, 0644);
    if (out < 0) _exit(126);
    dup2(out, STDOUT_FILENO);
    dup2(out, STDERR_FILENO);
    // Nothing of the test (its sockets, its other children's files) leaks into the process.
    syscall(SYS_close_range, 3, ~0U, 0);
    execv(argv[0], argv.data());
    _exit(127);
  }
  *pid_out = pid;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(seconds);
  while (std::chrono::steady_clock::now() < deadline) {
    const std::string text = testing::ReadFile(output_path);
    for (size_t at = before; at < text.size();) {
      const auto nl = text.find('\n', at);
      if (nl == std::string::npos) break;  // a line still being written
      const std::string line = text.substr(at, nl - at);
      if (line.find(expect) != std::string::npos) return line;
      at = nl + 1;
    }
    if (waitpid(pid, nullptr, WNOHANG) == pid) {  // it ended without saying it
      *pid_out = -1;
      return "";
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return "";
}

// Starts `tessera server` on `listen` (by default a free port chosen by the
// server) and reads the URL from its "listening on" line. Its output goes to
// <data_dir>/server.out.
inline ServerProcess StartServer(const std::string& data_dir, const std::string& listen = "127.0.0.1:0",
                                 const std::vector<std::string>& extra = {}) {
  std::filesystem::create_directories(data_dir);
  const std::string out = data_dir + "/server.out";
  ServerProcess p;
  std::vector<std::string> args{TESSERA_BINARY, "server", "--listen", listen, "--data-dir", data_dir};
  args.insert(args.end(), extra.begin(), extra.end());
  const std::string line = SpawnAndWaitForLine(args, out, "listening on", &p.pid);
  const auto at = line.find("http://");
  EXPECT_NE(at, std::string::npos) << "server said: " << line << "\n" << testing::ReadFile(out);
  if (at != std::string::npos) p.url = line.substr(at, line.find(' ', at) - at);
  return p;
}

inline std::string ReadToken(const std::string& dir) {
  FILE* f = fopen((dir + "/admin.token").c_str(), "r");
  char buf[256] = {};
  if (f != nullptr) {
    if (fgets(buf, sizeof buf, f) == nullptr) buf[0] = 0;
    fclose(f);
  }
  std::string t(buf);
  while (!t.empty() && (t.back() == '\n' || t.back() == '\r')) t.pop_back();
  return t;
}

// A credential for node `node`'s agent, made with the admin's `token` (as
// `tessera create node-token` does) and written to `path` (mode 0600).
inline void WriteNodeToken(const std::string& url, const std::string& token, const std::string& node,
                           const std::string& path) {
  ApiClient admin(url, token);
  auto r = admin.Request("POST", "/api/v1/nodes/" + node + "/token", "{}");
  ASSERT_TRUE(r && r->status == 201) << (r ? r->body : r.error().ToString());
  const std::string node_token = nlohmann::json::parse(r->body)["status"]["token"];
  const int fd = open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
  ASSERT_GE(fd, 0) << path;
  ASSERT_EQ(write(fd, node_token.data(), node_token.size()), static_cast<ssize_t>(node_token.size()));
  close(fd);
}

// Starts `tessera agent` with a node credential of its own (made with the
// admin's `token`, in <data_dir>.token) and waits for its "registered" line;
// its output goes to <data_dir>.out.
inline pid_t StartAgent(const std::string& url, const std::string& token, const std::string& node,
                        const std::string& data_dir, const std::vector<std::string>& extra) {
  const std::string token_file = data_dir + ".token";
  WriteNodeToken(url, token, node, token_file);
  std::vector<std::string> args{TESSERA_BINARY, "agent",      "--server",   url,     "--token-file", token_file,
                                "--node",       node,         "--data-dir", data_dir};
  // Agents sharing the test host's network (the pod network's tests make
  // nodes of network namespaces and ask for --pod-network bridge).
  if (std::find(extra.begin(), extra.end(), "--pod-network") == extra.end()) {
    args.insert(args.end(), {"--pod-network", "host"});
  }
  args.insert(args.end(), extra.begin(), extra.end());
  pid_t pid = -1;
  const std::string out = data_dir + ".out";
  const std::string line = SpawnAndWaitForLine(args, out, " registered with ", &pid);
  EXPECT_NE(line.find("registered"), std::string::npos) << "agent said: " << line << "\n" << testing::ReadFile(out);
  return pid;
}

// True while `pid` exists and has not ended (a zombie has ended).
inline bool ProcessAlive(pid_t pid) {
  if (pid <= 0 || kill(pid, 0) != 0) return false;
  const std::string stat = testing::ReadFile("/proc/" + std::to_string(pid) + "/stat");
  const auto paren = stat.rfind(')');  // the state follows the command name in parentheses
  return paren != std::string::npos && paren + 2 < stat.size() && stat[paren + 2] != 'Z' && stat[paren + 2] != 'X';
}

// The pids of the processes whose command line contains `marker`. With
// `top_level`, only those whose parent's does not: a shell's child between its
// fork and its exec still shows the shell's command line, so it is not another copy.
inline std::vector<pid_t> ProcessesWithMarker(const std::string& marker, bool top_level = false) {
  std::vector<pid_t> pids;
  std::error_code ec;
  for (const auto& e : std::filesystem::directory_iterator("/proc", ec)) {
    const std::string name = e.path().filename().string();
    if (name.empty() || name.find_first_not_of("0123456789") != std::string::npos) continue;
    std::string cmdline = testing::ReadFile(e.path().string() + "/cmdline");
    for (char& c : cmdline) c = c == '\0' ? ' ' : c;
    const pid_t pid = std::stoi(name);
    if (cmdline.find(marker) != std::string::npos && pid != getpid() && ProcessAlive(pid)) pids.push_back(pid);
  }
  if (!top_level) return pids;
  std::vector<pid_t> tops;
  for (pid_t pid : pids) {
    const std::string stat = testing::ReadFile("/proc/" + std::to_string(pid) + "/stat");
    const auto paren = stat.rfind(')');
    pid_t parent = 0;
    if (paren != std::string::npos) {
      std::istringstream rest(stat.substr(paren + 2));
      std::string state;
      rest >> state >> parent;
    }
    if (std::find(pids.begin(), pids.end(), parent) == pids.end()) tops.push_back(pid);
  }
  return tops;
}

// Polls `ready` every 50 ms for up to `seconds`; its last answer.
inline bool WaitUntil(const std::function<bool()>& ready, int seconds) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(seconds);
  while (std::chrono::steady_clock::now() < deadline) {
    if (ready()) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  return ready();
}

// The pids of the fences of the agents whose data directories are dir/<node>:
// read them before those directories go.
inline std::vector<pid_t> AgentFences(const std::filesystem::path& dir, const std::map<std::string, pid_t>& agents) {
  std::vector<pid_t> fences;
  for (const auto& [node, pid] : agents) {
    std::ifstream in(dir / node / "fence.json");
    const nlohmann::json f = nlohmann::json::parse(in, nullptr, false);
    if (f.is_object() && f.value("pid", 0) > 0) fences.push_back(f.value("pid", 0));
  }
  return fences;
}

// Removes `dir` (the fences see their agents' directories go, kill what is
// left and exit), then expects every process that carries `marker` and every
// fence to be gone within 10 s; kills what outlived that.
inline void RemoveAndExpectFencesGone(const std::filesystem::path& dir, const std::string& marker,
                                      const std::vector<pid_t>& fences) {
  std::error_code ec;
  std::filesystem::remove_all(dir, ec);
  const bool all_gone = WaitUntil(
      [&] {
        if (!ProcessesWithMarker(marker).empty()) return false;
        return std::none_of(fences.begin(), fences.end(), [](pid_t f) { return ProcessAlive(f); });
      },
      10);
  EXPECT_TRUE(all_gone) << "processes outlived the test: " << ProcessesWithMarker(marker).size()
                        << " pod process(es) with the marker, fences " << ::testing::PrintToString(fences);
  for (pid_t pid : ProcessesWithMarker(marker)) KillProcess(pid, SIGKILL);  // ours: they carry this run's marker
}

}  // namespace tessera
