#include "agent/fence.h"

#include <fmt/format.h>
#include <signal.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <optional>
#include <thread>

#include "agent/process_runner.h"
#include "common/atomic_file.h"
#include "common/time_format.h"

namespace tessera {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

void WriteAtomically(const fs::path& path, const std::string& text) {
  (void)WriteFileAtomically(path.string(), text, 0644);  // best effort: the next beat writes again
}

json ReadJson(const fs::path& path) {
  std::ifstream in(path);
  if (!in) return json();
  return json::parse(in, nullptr, false);
}

ProcessIdentity IdentityIn(const json& obj) {
  if (!obj.is_object()) return {};
  return ProcessIdentity{.pid = obj.value("pid", 0), .start_ticks = obj.value("startTicks", uint64_t{0})};
}

// The pod groups in agent-state.json that still run with their recorded identity;
// nullopt when the file cannot be read (the agent replaces it atomically, so that
// means it is being deleted with the directory).
std::optional<std::vector<ProcessIdentity>> RunningPods(const fs::path& dir) {
  const json state = ReadJson(dir / "agent-state.json");
  if (!state.is_object()) return std::nullopt;
  std::vector<ProcessIdentity> running;
  const json pods = state.value("pods", json::object());
  for (const auto& [uid, p] : pods.items()) {
    // A container pod's PID 1 too: runc set it in a session of its own, and it
    // outlives a killed runc (ending it ends its whole PID namespace).
    for (const ProcessIdentity& id : {IdentityIn(p), IdentityIn(p.value("container", json::object()).value("init", json()))}) {
      if (id.pid > 0 && IsRunning(id)) running.push_back(id);
    }
  }
  return running;
}

}  // namespace

void RecordLeaseRenewal(const std::string& data_dir, Timestamp now) {
  WriteAtomically(fs::path(data_dir) / "lease-renewed", std::to_string(now.ms));
}

int RunFence(const std::string& data_dir, Duration lease) {
  const fs::path dir(data_dir);
  bool fenced = false;
  std::vector<ProcessIdentity> pods;  // as last read: what to kill if the directory goes
  while (true) {
    if (!fs::exists(dir)) {
      // The node's state is gone, so no agent can adopt these pods: they end here.
      for (const ProcessIdentity& id : pods) {
        if (IsRunning(id)) ::kill(-id.pid, SIGKILL);
      }
      break;
    }
    std::ifstream in(dir / "lease-renewed");
    int64_t renewed = 0;
    in >> renewed;
    const bool expired = renewed > 0 && SystemNow().ms - renewed > lease.ms;
    // Keep the last list read: the directory may be going, and its pods must go with it.
    if (auto running = RunningPods(dir)) pods = std::move(*running);
    std::erase_if(pods, [](const ProcessIdentity& id) { return !IsRunning(id); });
    if (expired) {
      for (const ProcessIdentity& id : pods) ::kill(-id.pid, SIGKILL);
      if (!fenced || !pods.empty()) {
        fmt::print("fence: lease not renewed for over {} ms: killed {} pod group(s)\n", lease.ms, pods.size());
        std::fflush(stdout);
      }
    }
    fenced = expired;
    // Nothing left to guard: no agent, and no pod of its.
    const ProcessIdentity agent = IdentityIn(ReadJson(dir / "agent.json"));
    if ((agent.pid <= 0 || !IsRunning(agent)) && pods.empty()) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  return 0;
}

Status EnsureFence(const std::string& data_dir, const std::vector<std::string>& command) {
  const fs::path dir(data_dir);
  ASSIGN_OR_RETURN(const uint64_t agent_start, ReadStartTicks(::getpid()));
  WriteAtomically(dir / "agent.json", json{{"pid", ::getpid()}, {"startTicks", agent_start}}.dump());
  const json recorded = ReadJson(dir / "fence.json");
  if (recorded.is_object()) {
    const ProcessIdentity id{.pid = recorded.value("pid", 0), .start_ticks = recorded.value("startTicks", uint64_t{0})};
    if (id.pid > 0 && IsRunning(id)) return Status::Ok();
  }
  ProcessRunner runner;
  ProcessSpec spec{.name = "", .argv = command, .env = {}, .working_dir = data_dir,
                   .output_path = (dir / "fence.log").string()};
  ASSIGN_OR_RETURN(RunningProcess fence, runner.Start(spec));
  WriteAtomically(dir / "fence.json",
                  json{{"pid", fence.identity.pid}, {"startTicks", fence.identity.start_ticks}}.dump());
  return Status::Ok();
}

}  // namespace tessera
