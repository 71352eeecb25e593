// Starting the real `tessera` binary from integration tests: the server (its URL
// read from its first line) and agents.
#pragma once

#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <string>
#include <vector>

namespace tessera {

struct ServerProcess {
  pid_t pid = -1;
  std::string url;
};

// Starts `tessera server` on a free port and reads the URL from its first line.
inline ServerProcess StartServer(const std::string& data_dir) {
  int out[2];
  EXPECT_EQ(pipe(out), 0);
  const pid_t pid = fork();
  if (pid == 0) {
    dup2(out[1], STDOUT_FILENO);
    close(out[0]);
    close(out[1]);
    execl(TESSERA_BINARY, TESSERA_BINARY, "server", "--listen", "127.0.0.1:0", "--data-dir", data_dir.c_str(),
          static_cast<char*>(nullptr));
    _exit(127);
  }
  close(out[1]);
  std::string line;
  char c;
  while (read(out[0], &c, 1) == 1 && c != '\n') line += c;
  close(out[0]);
  ServerProcess p{.pid = pid};
  const auto at = line.find("http://");
  EXPECT_NE(at, std::string::npos) << "server said: " << line;
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

// Starts `tessera agent` and waits for its "registered" line; its output goes to <data_dir>.out.
inline pid_t StartAgent(const std::string& url, const std::string& token, const std::string& node,
                        const std::string& data_dir, const std::vector<std::string>& extra) {
  int out[2];
  EXPECT_EQ(pipe(out), 0);
  std::vector<std::string> args{TESSERA_BINARY, "agent",      "--server", url,     "--token", token,
                                "--node",       node,         "--data-dir", data_dir};
  args.insert(args.end(), extra.begin(), extra.end());
  std::vector<char*> argv;
  for (std::string& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  const pid_t pid = fork();
  if (pid == 0) {
    dup2(out[1], STDOUT_FILENO);
    close(out[0]);
    close(out[1]);
    execv(TESSERA_BINARY, argv.data());
    _exit(127);
  }
  close(out[1]);
  std::string line;
  char c;
  while (read(out[0], &c, 1) == 1 && c != '\n') line += c;
  close(out[0]);
  EXPECT_NE(line.find("registered"), std::string::npos) << "agent said: " << line;
  return pid;
}

}  // namespace tessera
