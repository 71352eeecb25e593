#include "agent/probes.h"

#include <fmt/format.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstring>

#include <boost/asio/connect.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/thread_pool.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>

namespace tessera {
namespace {

using nlohmann::json;
namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
using tcp = asio::ip::tcp;

// An exec probe's output is kept up to this many bytes (the kubelet's limit).
constexpr size_t kMaxExecOutput = 10 * 1024;

std::string_view ProbeField(ProbeKind kind) {
  switch (kind) {
    case ProbeKind::kStartup: return "startupProbe";
    case ProbeKind::kReadiness: return "readinessProbe";
    case ProbeKind::kLiveness: return "livenessProbe";
  }
  return "probe";
}

Result<int> ResolvePort(const json& port, const json& container, const std::string& field) {
  if (port.is_number_integer()) {
    const int64_t n = port.get<int64_t>();
    if (n >= 1 && n <= 65535) return static_cast<int>(n);
  } else if (port.is_string()) {
    const std::string name = port.get<std::string>();
    for (const json& p : container.value("ports", json::array())) {
      if (p.is_object() && p.value("name", "") == name && p.value("containerPort", json()).is_number_integer()) {
        return p["containerPort"].get<int>();
      }
    }
    return Err(Status::InvalidArgument(
        fmt::format("{}: the container has no port named \"{}\" (name it in ports, or give the number)", field, name)));
  }
  return Err(Status::InvalidArgument(fmt::format("{}: {} is not a port number in 1..65535 or a port name", field, port.dump())));
}

Result<Probe> ParseProbe(const json& spec, const json& container, const std::string& field) {
  if (!spec.is_object()) return Err(Status::InvalidArgument(fmt::format("{}: must be an object", field)));
  if (spec.contains("grpc")) {
    return Err(Status::InvalidArgument(
        fmt::format("{}.grpc: Tessera's agent does not run gRPC probes yet: use httpGet, tcpSocket or exec", field)));
  }
  Probe probe;
  int handlers = 0;
  if (const json http_get = spec.value("httpGet", json()); http_get.is_object()) {
    ++handlers;
    probe.action.type = ProbeAction::Type::kHttpGet;
    ASSIGN_OR_RETURN(probe.action.port, ResolvePort(http_get.value("port", json()), container, field + ".httpGet.port"));
    probe.action.host = http_get.value("host", "");
    probe.action.path = http_get.value("path", "/");
    if (probe.action.path.empty()) probe.action.path = "/";
    if (const std::string scheme = http_get.value("scheme", "HTTP"); scheme != "HTTP") {
      return Err(Status::InvalidArgument(fmt::format("{}.httpGet.scheme: \"{}\" is not supported: use HTTP", field, scheme)));
    }
    for (const json& h : http_get.value("httpHeaders", json::array())) {
      if (h.is_object()) probe.action.headers.emplace_back(h.value("name", ""), h.value("value", ""));
    }
  }
  if (const json tcp_socket = spec.value("tcpSocket", json()); tcp_socket.is_object()) {
    ++handlers;
    probe.action.type = ProbeAction::Type::kTcpSocket;
    ASSIGN_OR_RETURN(probe.action.port, ResolvePort(tcp_socket.value("port", json()), container, field + ".tcpSocket.port"));
    probe.action.host = tcp_socket.value("host", "");
  }
  if (const json exec = spec.value("exec", json()); exec.is_object()) {
    ++handlers;
    probe.action.type = ProbeAction::Type::kExec;
    for (const json& a : exec.value("command", json::array())) {
      if (a.is_string()) probe.action.command.push_back(a.get<std::string>());
    }
    if (probe.action.command.empty()) {
      return Err(Status::InvalidArgument(fmt::format("{}.exec.command: the command to run in the container is missing", field)));
    }
  }
  if (handlers != 1) {
    return Err(Status::InvalidArgument(fmt::format("{}: must have exactly one of httpGet, tcpSocket and exec", field)));
  }
  auto seconds = [&](const char* name, int64_t fallback, int64_t min) -> int64_t {
    const json v = spec.value(name, json());
    return v.is_number_integer() ? std::max(v.get<int64_t>(), min) : fallback;
  };
  probe.initial_delay = Duration::Seconds(seconds("initialDelaySeconds", 0, 0));
  probe.period = Duration::Seconds(seconds("periodSeconds", 10, 1));
  probe.timeout = Duration::Seconds(seconds("timeoutSeconds", 1, 1));
  probe.success_threshold = static_cast<int>(seconds("successThreshold", 1, 1));
  probe.failure_threshold = static_cast<int>(seconds("failureThreshold", 3, 1));
  if (const json grace = spec.value("terminationGracePeriodSeconds", json()); grace.is_number_integer()) {
    probe.termination_grace_seconds = grace.get<int64_t>();
  }
  return probe;
}

// A deadline for the probe's blocking steps.
using Clock = std::chrono::steady_clock;

std::string HostPort(const std::string& host, int port) {
  return host.find(':') != std::string::npos ? fmt::format("[{}]:{}", host, port) : fmt::format("{}:{}", host, port);
}

// Go's net error text for what asio reports, as the kubelet's messages read.
std::string DialError(const beast::error_code& ec) {
  if (ec == asio::error::connection_refused) return "connect: connection refused";
  if (ec == asio::error::host_unreachable) return "connect: no route to host";
  if (ec == asio::error::network_unreachable) return "connect: network is unreachable";
  if (ec == beast::error::timeout) return "i/o timeout";
  return ec.message();
}

ProbeOutcome RunHttpGet(const ProbeAction& action, Duration timeout, const std::string& host) {
  const std::string url = fmt::format("http://{}{}", HostPort(host, action.port), action.path);
  asio::io_context ioc;
  beast::tcp_stream stream(ioc);
  beast::flat_buffer buffer;
  http::response_parser<http::empty_body> parser;
  parser.skip(true);  // the status line and headers are the answer; the body is not read
  http::request<http::empty_body> request{http::verb::get, action.path, 11};
  request.set(http::field::host, HostPort(host, action.port));
  request.set(http::field::user_agent, "kube-probe/1.32");
  request.set(http::field::accept, "*/*");
  request.set(http::field::connection, "close");
  for (const auto& [name, value] : action.headers) request.set(name, value);
  beast::error_code error;
  bool connected = false;
  beast::error_code addr_error;
  const auto address = asio::ip::make_address(host, addr_error);
  if (addr_error) return {.success = false, .message = fmt::format("Get \"{}\": {} is not an IP address", url, host)};
  stream.expires_after(std::chrono::milliseconds(timeout.ms));
  stream.async_connect(tcp::endpoint(address, static_cast<uint16_t>(action.port)), [&](beast::error_code ec) {
    if (ec) {
      error = ec;
      return;
    }
    connected = true;
    http::async_write(stream, request, [&](beast::error_code ec2, size_t) {
      if (ec2) {
        error = ec2;
        return;
      }
      http::async_read_header(stream, buffer, parser, [&](beast::error_code ec3, size_t) { error = ec3; });
    });
  });
  ioc.run();
  if (!connected) {
    return {.success = false,
            .message = fmt::format("Get \"{}\": dial tcp {}: {}", url, HostPort(host, action.port), DialError(error))};
  }
  if (error == beast::error::timeout) {
    return {.success = false,
            .message = fmt::format("Get \"{}\": context deadline exceeded (Client.Timeout exceeded while awaiting headers)", url)};
  }
  if (error && !parser.is_header_done()) return {.success = false, .message = fmt::format("Get \"{}\": {}", url, error.message())};
  const unsigned code = parser.get().result_int();
  if (code >= 200 && code < 400) return {.success = true, .message = ""};
  return {.success = false, .message = fmt::format("HTTP probe failed with statuscode: {}", code)};
}

ProbeOutcome RunTcpSocket(const ProbeAction& action, Duration timeout, const std::string& host) {
  asio::io_context ioc;
  beast::tcp_stream stream(ioc);
  beast::error_code addr_error;
  const auto address = asio::ip::make_address(host, addr_error);
  if (addr_error) return {.success = false, .message = fmt::format("dial tcp {}: not an IP address", HostPort(host, action.port))};
  beast::error_code error = asio::error::would_block;
  stream.expires_after(std::chrono::milliseconds(timeout.ms));
  stream.async_connect(tcp::endpoint(address, static_cast<uint16_t>(action.port)), [&](beast::error_code ec) { error = ec; });
  ioc.run();
  if (!error) return {.success = true, .message = ""};
  return {.success = false, .message = fmt::format("dial tcp {}: {}", HostPort(host, action.port), DialError(error))};
}

// Runs argv in the pod, collecting its output, for at most `timeout`; its
// process group is killed then.
ProbeOutcome RunExec(const std::vector<std::string>& command, Duration timeout, const PodExecTarget& target) {
  auto spawned = SpawnInPod(command, target, /*with_stdin=*/false, /*merge_stderr=*/true);
  if (!spawned) return {.success = false, .message = spawned.error().message()};
  const pid_t pid = spawned->pid;
  const int out_fd = spawned->stdout_fd.get();
  const auto deadline = Clock::now() + std::chrono::milliseconds(timeout.ms);
  std::string output;
  bool timed_out = false, exited = false, open = true;
  int status = 0;
  char buf[4096];
  while (!exited || open) {
    if (!exited) {
      const pid_t w = ::waitpid(pid, &status, WNOHANG);
      exited = w == pid || (w < 0 && errno != EINTR);
    }
    if (exited && !open) break;
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()).count();
    if (left <= 0 && !exited) {
      timed_out = true;
      ::kill(-pid, SIGKILL);
      ::kill(pid, SIGKILL);
      while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
      }
      break;
    }
    if (!open) {
      ::usleep(10'000);
      continue;
    }
    pollfd p{.fd = out_fd, .events = POLLIN, .revents = 0};
    // Once it has exited, only what is already written is read (a descendant it
    // left behind may hold the pipe open).
    const int ready = ::poll(&p, 1, exited ? 0 : static_cast<int>(std::min<int64_t>(left, 20)));
    if (ready > 0) {
      const ssize_t n = ::read(out_fd, buf, sizeof buf);
      if (n > 0) {
        if (output.size() < kMaxExecOutput) output.append(buf, std::min(static_cast<size_t>(n), kMaxExecOutput - output.size()));
        continue;
      }
      if (n == 0 || errno != EINTR) open = false;
    } else if (exited) {
      open = false;
    }
  }
  if (timed_out) return {.success = false, .message = fmt::format("command \"{}\" timed out", CommandLine(command))};
  const int code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  if (code == 0) return {.success = true, .message = output};
  while (!output.empty() && (output.back() == '\n' || output.back() == '\r')) output.pop_back();
  if (output.empty()) output = fmt::format("command \"{}\" exited with code {}", CommandLine(command), code);
  return {.success = false, .message = output};
}

}  // namespace

std::string_view ProbeKindName(ProbeKind kind) {
  switch (kind) {
    case ProbeKind::kStartup: return "Startup";
    case ProbeKind::kReadiness: return "Readiness";
    case ProbeKind::kLiveness: return "Liveness";
  }
  return "Probe";
}

const std::optional<Probe>& ContainerProbes::Of(ProbeKind kind) const {
  switch (kind) {
    case ProbeKind::kStartup: return startup;
    case ProbeKind::kReadiness: return readiness;
    case ProbeKind::kLiveness: break;
  }
  return liveness;
}

Result<ContainerProbes> ParseContainerProbes(const json& container) {
  ContainerProbes probes;
  if (!container.is_object()) return probes;
  for (ProbeKind kind : {ProbeKind::kStartup, ProbeKind::kReadiness, ProbeKind::kLiveness}) {
    const std::string field(ProbeField(kind));
    const json spec = container.value(field, json());
    if (spec.is_null()) continue;
    ASSIGN_OR_RETURN(Probe probe, ParseProbe(spec, container, field));
    if (kind == ProbeKind::kStartup) probes.startup = std::move(probe);
    if (kind == ProbeKind::kReadiness) probes.readiness = std::move(probe);
    if (kind == ProbeKind::kLiveness) probes.liveness = std::move(probe);
  }
  return probes;
}

ProbeOutcome RunProbe(const ProbeAction& action, Duration timeout, const ProbeTarget& target) {
  const std::string host = action.host.empty() ? target.ip : action.host;
  switch (action.type) {
    case ProbeAction::Type::kHttpGet: return RunHttpGet(action, timeout, host);
    case ProbeAction::Type::kTcpSocket: return RunTcpSocket(action, timeout, host);
    case ProbeAction::Type::kExec: return RunExec(action.command, timeout, target.exec);
  }
  return {.success = false, .message = "unknown probe"};
}

ProbeState::ProbeState(ContainerProbes probes, Timestamp started_at)
    : probes_(std::move(probes)), started_at_(started_at) {
  started_ = !probes_.startup;
  ready_ = !probes_.readiness;
  for (ProbeKind kind : {ProbeKind::kStartup, ProbeKind::kReadiness, ProbeKind::kLiveness}) {
    if (const auto& p = probes_.Of(kind)) TrackOf(kind).next = started_at_ + p->initial_delay;
  }
}

std::vector<ProbeKind> ProbeState::TakeDue(Timestamp now) {
  std::vector<ProbeKind> due;
  if (killed_) return due;
  const std::vector<ProbeKind> kinds = started_ ? std::vector{ProbeKind::kReadiness, ProbeKind::kLiveness}
                                                : std::vector{ProbeKind::kStartup};
  for (ProbeKind kind : kinds) {
    const auto& probe = probes_.Of(kind);
    Track& t = TrackOf(kind);
    if (!probe || t.running || !t.next || now < *t.next) continue;
    t.running = true;
    t.next = now + probe->period;
    due.push_back(kind);
  }
  return due;
}

ProbeState::Verdict ProbeState::Record(ProbeKind kind, const ProbeOutcome& outcome, Timestamp /*now*/) {
  Verdict v;
  Track& t = TrackOf(kind);
  t.running = false;
  const auto& probe = probes_.Of(kind);
  if (killed_ || !probe) return v;
  if (outcome.success) {
    ++t.successes;
    t.failures = 0;
  } else {
    ++t.failures;
    t.successes = 0;
  }
  const std::string failure = fmt::format("{} probe failed: {}", ProbeKindName(kind), outcome.message);
  switch (kind) {
    case ProbeKind::kStartup:
      if (started_) break;
      if (outcome.success) {
        started_ = true;
        v.changed = true;
      } else if (t.failures >= probe->failure_threshold) {
        v.kill = true;
      }
      break;
    case ProbeKind::kReadiness:
      if (!started_) break;
      if (outcome.success) {
        readiness_message_.clear();
        if (!ready_ && t.successes >= probe->success_threshold) {
          ready_ = true;
          v.changed = true;
        }
      } else {
        if (!ready_ || t.failures >= probe->failure_threshold) readiness_message_ = failure;
        if (ready_ && t.failures >= probe->failure_threshold) {
          ready_ = false;
          v.changed = true;
        }
      }
      break;
    case ProbeKind::kLiveness:
      if (started_ && !outcome.success && t.failures >= probe->failure_threshold) v.kill = true;
      break;
  }
  if (v.kill) {
    killed_ = true;
    v.kill_message = failure;
    v.kill_grace_seconds = probe->termination_grace_seconds;
  }
  return v;
}

ProbeWorker::ProbeWorker(size_t threads) : pool_(std::make_unique<asio::thread_pool>(threads)) {}

ProbeWorker::~ProbeWorker() { pool_->join(); }

void ProbeWorker::Submit(std::string key, uint64_t generation, ProbeKind kind, ProbeAction action, Duration timeout,
                         ProbeTarget target) {
  asio::post(*pool_, [this, key = std::move(key), generation, kind, action = std::move(action), timeout,
                      target = std::move(target)]() mutable {
    ProbeOutcome outcome = RunProbe(action, timeout, target);
    std::lock_guard lock(mu_);
    finished_.push_back(
        Finished{.key = std::move(key), .generation = generation, .kind = kind, .outcome = std::move(outcome)});
  });
}

std::vector<ProbeWorker::Finished> ProbeWorker::TakeFinished() {
  std::lock_guard lock(mu_);
  std::vector<Finished> out;
  out.swap(finished_);
  return out;
}

}  // namespace tessera
