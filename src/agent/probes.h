// Container probes, as the kubelet runs them (docs/agent.md "Probes"):
// startupProbe, readinessProbe and livenessProbe, each an httpGet, a tcpSocket
// or an exec, with initialDelaySeconds, periodSeconds (10), timeoutSeconds (1),
// successThreshold (1), failureThreshold (3) and, for liveness and startup,
// terminationGracePeriodSeconds.
//
// Semantics (Kubernetes'):
// - A startup probe gates the others: until it has succeeded once, neither
//   readiness nor liveness runs and the container is not started (`started`
//   false); failureThreshold failures in a row kill the container.
// - Readiness starts at Failure: successThreshold successes in a row make the
//   container ready, failureThreshold failures in a row unready again. It keeps
//   running for as long as the container runs.
// - Liveness starts at Success: failureThreshold failures in a row kill the
//   container, which restarts as its pod's restartPolicy says.
// - Without a startup probe the container is started at once; without a
//   readiness probe it is ready once started.
// - Each probe first runs initialDelaySeconds after the container started, then
//   periodSeconds after its last run began; a probe still running is not run
//   again.
//
// Pieces: ParseContainerProbes reads a container's probes (the API validated
// them; named ports are resolved here). ProbeState is the pure state machine
// of one container's run (no clock of its own, no I/O). RunProbe does one
// probe, blocking for at most its timeout. ProbeWorker runs probes on a small
// thread pool so that the agent's loop never waits on one.
//
// Thread-safety: ProbeState is not thread-safe (the agent's loop owns it);
// ProbeWorker's methods may be called from any thread.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "agent/pod_exec.h"
#include "common/result.h"
#include "common/time.h"

namespace boost::asio {
class thread_pool;
}

namespace tessera {

enum class ProbeKind { kStartup, kReadiness, kLiveness };
// "Startup", "Readiness", "Liveness": as the kubelet's events begin ("Liveness probe failed: ...").
std::string_view ProbeKindName(ProbeKind kind);

// What a probe does.
struct ProbeAction {
  enum class Type { kHttpGet, kTcpSocket, kExec };
  Type type = Type::kTcpSocket;
  std::string host;  // httpGet, tcpSocket: empty, the pod's address (ProbeTarget::ip)
  int port = 0;      // httpGet, tcpSocket: resolved from a named container port
  std::string path = "/";                                   // httpGet
  std::vector<std::pair<std::string, std::string>> headers;  // httpGet: httpHeaders
  std::vector<std::string> command;                          // exec
};

struct Probe {
  ProbeAction action;
  Duration initial_delay = Duration::Seconds(0);
  Duration period = Duration::Seconds(10);
  Duration timeout = Duration::Seconds(1);
  int success_threshold = 1;
  int failure_threshold = 3;
  std::optional<int64_t> termination_grace_seconds;  // liveness, startup: overrides the pod's on a kill
};

struct ContainerProbes {
  std::optional<Probe> startup, readiness, liveness;
  bool empty() const { return !startup && !readiness && !liveness; }
  const std::optional<Probe>& Of(ProbeKind kind) const;
};

// The probes of `container` (a pod's container object). InvalidArgument,
// naming the field, when one cannot be run here: no handler, a gRPC probe, a
// port name the container does not declare.
Result<ContainerProbes> ParseContainerProbes(const nlohmann::json& container);

// How to reach the pod.
struct ProbeTarget {
  std::string ip = "127.0.0.1";  // the pod's IP (bridge network) or 127.0.0.1 (host network)
  PodExecTarget exec;            // where an exec probe runs (pod_exec.h)
};

struct ProbeOutcome {
  bool success = false;
  std::string message;  // why it failed, in the kubelet's words; or an exec probe's output
};

// Runs `action` once against `target`, for at most `timeout` (blocking).
// httpGet: success for a status in 200..399. tcpSocket: the connection opens.
// exec: the command exits 0.
ProbeOutcome RunProbe(const ProbeAction& action, Duration timeout, const ProbeTarget& target);

// One container run's probes and what they concluded.
class ProbeState {
 public:
  ProbeState(ContainerProbes probes, Timestamp started_at);

  // The probes due at `now` that are not running, now marked running. The
  // caller runs each and gives its outcome to Record.
  std::vector<ProbeKind> TakeDue(Timestamp now);

  struct Verdict {
    bool changed = false;      // started() or ready() changed
    bool kill = false;         // liveness or startup failed for good: kill the container
    std::string kill_message;  // "Liveness probe failed: ..."
    std::optional<int64_t> kill_grace_seconds;  // the probe's terminationGracePeriodSeconds
  };
  Verdict Record(ProbeKind kind, const ProbeOutcome& outcome, Timestamp now);

  bool started() const { return started_; }
  bool ready() const { return started_ && ready_ && !killed_; }
  // A liveness or startup probe failed for good: nothing runs any more.
  bool killed() const { return killed_; }
  const ContainerProbes& probes() const { return probes_; }
  // The last failure of the readiness probe while not ready ("Readiness probe failed: ..."); empty otherwise.
  const std::string& readiness_message() const { return readiness_message_; }

 private:
  struct Track {
    std::optional<Timestamp> next;  // when it runs next
    bool running = false;
    int successes = 0;  // in a row
    int failures = 0;   // in a row
  };
  Track& TrackOf(ProbeKind kind) { return tracks_[static_cast<size_t>(kind)]; }
  ContainerProbes probes_;
  Timestamp started_at_;
  Track tracks_[3];
  bool started_ = false;
  bool ready_ = false;
  bool killed_ = false;
  std::string readiness_message_;
};

// Runs probes on its own threads. Each finished probe is kept, with the key
// and generation it was submitted with, until TakeFinished.
class ProbeWorker {
 public:
  explicit ProbeWorker(size_t threads = 2);
  ~ProbeWorker();  // waits for the probes running (each bounded by its timeout)
  ProbeWorker(const ProbeWorker&) = delete;
  ProbeWorker& operator=(const ProbeWorker&) = delete;

  void Submit(std::string key, uint64_t generation, ProbeKind kind, ProbeAction action, Duration timeout,
              ProbeTarget target);
  struct Finished {
    std::string key;
    uint64_t generation = 0;
    ProbeKind kind = ProbeKind::kReadiness;
    ProbeOutcome outcome;
  };
  std::vector<Finished> TakeFinished();

 private:
  std::unique_ptr<boost::asio::thread_pool> pool_;
  std::mutex mu_;
  std::vector<Finished> finished_;
};

}  // namespace tessera
