// Container probes (src/agent/probes.h): the state machine's Kubernetes
// semantics on their own, each kind of probe against real sockets and
// processes, and end to end a real server and agent running pods whose
// readiness follows an HTTP probe (and with it the Service's EndpointSlice),
// whose failed liveness probe restarts them, and whose startup (tcpSocket) and
// readiness (exec, in the pod's environment) probes gate their readiness.
#include "agent/probes.h"

#include <fmt/format.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <functional>
#include <thread>

#include "agent/agent.h"
#include "client/api_client.h"
#include "server/server.h"
#include "tests/testing/api_polling.h"
#include "tests/testing/test_agent.h"
#include "tests/testing/test_dirs.h"
#include "tests/testing/test_server.h"

namespace tessera {
namespace {

using nlohmann::json;
namespace fs = std::filesystem;

constexpr Timestamp T0 = Timestamp::FromMillis(1'000'000);

Timestamp At(int64_t seconds) { return T0 + Duration::Seconds(seconds); }

ProbeOutcome Ok() { return {.success = true, .message = ""}; }
ProbeOutcome Bad(const std::string& why = "HTTP probe failed with statuscode: 503") {
  return {.success = false, .message = why};
}

Probe TcpProbe(int failure_threshold = 3, int success_threshold = 1, int period_s = 10, int delay_s = 0) {
  Probe p;
  p.action.type = ProbeAction::Type::kTcpSocket;
  p.action.port = 1;
  p.failure_threshold = failure_threshold;
  p.success_threshold = success_threshold;
  p.period = Duration::Seconds(period_s);
  p.initial_delay = Duration::Seconds(delay_s);
  return p;
}

TEST(ProbeStateTest, WithoutProbesAContainerIsStartedAndReadyAtOnce) {
  ProbeState s(ContainerProbes{}, T0);
  EXPECT_TRUE(s.started());
  EXPECT_TRUE(s.ready());
  EXPECT_TRUE(s.TakeDue(At(100)).empty());
}

TEST(ProbeStateTest, ReadinessStartsAtFailureAndNeedsItsSuccessThresholdInARow) {
  // successThreshold 2, failureThreshold 2, every 10 s after a 5 s delay.
  ProbeState s(ContainerProbes{.readiness = TcpProbe(2, 2, 10, 5)}, T0);
  EXPECT_FALSE(s.ready());
  EXPECT_TRUE(s.TakeDue(At(4)).empty()) << "initialDelaySeconds 5";
  ASSERT_EQ(s.TakeDue(At(5)), std::vector{ProbeKind::kReadiness});
  EXPECT_TRUE(s.TakeDue(At(6)).empty()) << "still running, and not due before 15";
  EXPECT_FALSE(s.Record(ProbeKind::kReadiness, Ok(), At(5)).changed);  // 1 success of 2
  EXPECT_FALSE(s.ready());
  ASSERT_EQ(s.TakeDue(At(15)).size(), 1u);
  EXPECT_TRUE(s.Record(ProbeKind::kReadiness, Ok(), At(15)).changed);  // 2 of 2: ready
  EXPECT_TRUE(s.ready());
  ASSERT_EQ(s.TakeDue(At(25)).size(), 1u);
  EXPECT_FALSE(s.Record(ProbeKind::kReadiness, Bad(), At(25)).changed);  // 1 failure of 2: still ready
  EXPECT_TRUE(s.ready());
  ASSERT_EQ(s.TakeDue(At(35)).size(), 1u);
  const auto v = s.Record(ProbeKind::kReadiness, Bad(), At(35));  // 2 of 2: not ready, never killed
  EXPECT_TRUE(v.changed);
  EXPECT_FALSE(v.kill);
  EXPECT_FALSE(s.ready());
  EXPECT_EQ(s.readiness_message(), "Readiness probe failed: HTTP probe failed with statuscode: 503");
}

TEST(ProbeStateTest, LivenessKillsAfterItsFailureThresholdInARowWithItsGracePeriod) {
  Probe live = TcpProbe(3);
  live.termination_grace_seconds = 7;
  ProbeState s(ContainerProbes{.liveness = live}, T0);
  EXPECT_TRUE(s.ready()) << "no readiness probe: ready once started";
  auto run = [&](int64_t at, const ProbeOutcome& o) {
    EXPECT_EQ(s.TakeDue(At(at)).size(), 1u) << "at " << at;
    return s.Record(ProbeKind::kLiveness, o, At(at));
  };
  EXPECT_FALSE(run(0, Bad()).kill);
  EXPECT_FALSE(run(10, Bad()).kill);
  EXPECT_FALSE(run(20, Ok()).kill) << "a success resets the count";
  EXPECT_FALSE(run(30, Bad()).kill);
  EXPECT_FALSE(run(40, Bad()).kill);
  const auto v = run(50, Bad("dial tcp 127.0.0.1:1: connect: connection refused"));  // 3 in a row
  EXPECT_TRUE(v.kill);
  EXPECT_EQ(v.kill_message, "Liveness probe failed: dial tcp 127.0.0.1:1: connect: connection refused");
  EXPECT_EQ(v.kill_grace_seconds, 7);
  EXPECT_FALSE(s.ready()) << "a container being killed is not ready";
  EXPECT_TRUE(s.TakeDue(At(60)).empty()) << "nothing runs once it is killed";
}

TEST(ProbeStateTest, AStartupProbeGatesReadinessAndLiveness) {
  ProbeState s(ContainerProbes{.startup = TcpProbe(2, 1, 1), .readiness = TcpProbe(), .liveness = TcpProbe()}, T0);
  EXPECT_FALSE(s.started());
  EXPECT_EQ(s.TakeDue(At(0)), std::vector{ProbeKind::kStartup}) << "only the startup probe runs";
  EXPECT_FALSE(s.Record(ProbeKind::kStartup, Bad(), At(0)).kill);  // 1 failure of 2
  EXPECT_EQ(s.TakeDue(At(1)), std::vector{ProbeKind::kStartup});
  EXPECT_TRUE(s.Record(ProbeKind::kStartup, Ok(), At(1)).changed);
  EXPECT_TRUE(s.started());
  EXPECT_FALSE(s.ready()) << "readiness has not passed yet";
  EXPECT_EQ(s.TakeDue(At(1)), (std::vector{ProbeKind::kReadiness, ProbeKind::kLiveness}));
  EXPECT_TRUE(s.Record(ProbeKind::kReadiness, Ok(), At(1)).changed);
  EXPECT_TRUE(s.ready());
}

TEST(ProbeStateTest, AStartupProbeThatNeverPassesKills) {
  ProbeState s(ContainerProbes{.startup = TcpProbe(2, 1, 1)}, T0);
  (void)s.TakeDue(At(0));
  EXPECT_FALSE(s.Record(ProbeKind::kStartup, Bad("x"), At(0)).kill);
  (void)s.TakeDue(At(1));
  const auto v = s.Record(ProbeKind::kStartup, Bad("x"), At(1));
  EXPECT_TRUE(v.kill);
  EXPECT_EQ(v.kill_message, "Startup probe failed: x");
}

TEST(ParseProbesTest, DefaultsNamedPortsHeadersAndRefusals) {
  const json c = json::parse(R"({"name":"main","ports":[{"name":"http","containerPort":8080}],
      "readinessProbe":{"httpGet":{"path":"/healthz","port":"http","httpHeaders":[{"name":"X-A","value":"1"}]}},
      "livenessProbe":{"exec":{"command":["true"]},"periodSeconds":2,"failureThreshold":1,
                        "terminationGracePeriodSeconds":5}})");
  auto probes = ParseContainerProbes(c);
  ASSERT_TRUE(probes.has_value()) << probes.error().ToString();
  ASSERT_TRUE(probes->readiness && probes->liveness && !probes->startup);
  EXPECT_EQ(probes->readiness->action.port, 8080);
  EXPECT_EQ(probes->readiness->action.path, "/healthz");
  EXPECT_EQ(probes->readiness->action.headers.size(), 1u);
  EXPECT_EQ(probes->readiness->period.ms, 10'000) << "periodSeconds defaults to 10";
  EXPECT_EQ(probes->readiness->timeout.ms, 1'000) << "timeoutSeconds defaults to 1";
  EXPECT_EQ(probes->readiness->failure_threshold, 3);
  EXPECT_EQ(probes->liveness->period.ms, 2'000);
  EXPECT_EQ(probes->liveness->termination_grace_seconds, 5);
  json grpc = c;
  grpc["readinessProbe"] = {{"grpc", {{"port", 9000}}}};
  auto refused = ParseContainerProbes(grpc);
  ASSERT_FALSE(refused.has_value());
  EXPECT_NE(refused.error().message().find("readinessProbe.grpc"), std::string::npos) << refused.error().message();
  json unnamed = c;
  unnamed["readinessProbe"]["httpGet"]["port"] = "metrics";
  EXPECT_FALSE(ParseContainerProbes(unnamed).has_value());
}

// A socket listening on 127.0.0.1 (port 0: any), closed with the test.
struct Listener {
  int fd = -1;
  int port = 0;
  Listener() {
    fd = ::socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    ::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr));
    ::listen(fd, 16);
    socklen_t len = sizeof(addr);
    ::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len);
    port = ntohs(addr.sin_port);
  }
  ~Listener() { ::close(fd); }
};

int FreePort() {
  Listener l;
  return l.port;
}

TEST(RunProbeTest, TcpSocketSucceedsOnAListeningPortAndSaysWhyOtherwise) {
  Listener open;
  ProbeAction a{.type = ProbeAction::Type::kTcpSocket, .port = open.port};
  EXPECT_TRUE(RunProbe(a, Duration::Seconds(1), ProbeTarget{}).success);
  a.port = FreePort();
  const ProbeOutcome refused = RunProbe(a, Duration::Seconds(1), ProbeTarget{});
  EXPECT_FALSE(refused.success);
  EXPECT_EQ(refused.message, fmt::format("dial tcp 127.0.0.1:{}: connect: connection refused", a.port));
}

TEST(RunProbeTest, HttpGetThatNeverAnswersTimesOut) {
  Listener silent;  // accepts (the kernel's backlog) and never answers
  ProbeAction a{.type = ProbeAction::Type::kHttpGet, .port = silent.port, .path = "/healthz"};
  const ProbeOutcome out = RunProbe(a, Duration::Seconds(1), ProbeTarget{});
  EXPECT_FALSE(out.success);
  EXPECT_EQ(out.message, fmt::format("Get \"http://127.0.0.1:{}/healthz\": context deadline exceeded (Client.Timeout "
                                     "exceeded while awaiting headers)",
                                     silent.port));
}

TEST(RunProbeTest, ExecSucceedsOnExitZeroAndFailsWithItsOutputOrATimeout) {
  ProbeAction a{.type = ProbeAction::Type::kExec, .command = {"sh", "-c", "echo fine"}};
  EXPECT_TRUE(RunProbe(a, Duration::Seconds(2), ProbeTarget{}).success);
  a.command = {"sh", "-c", "echo not healthy >&2; exit 3"};
  ProbeOutcome failed = RunProbe(a, Duration::Seconds(2), ProbeTarget{});
  EXPECT_FALSE(failed.success);
  EXPECT_EQ(failed.message, "not healthy");
  a.command = {"sh", "-c", "exit 4"};
  EXPECT_EQ(RunProbe(a, Duration::Seconds(2), ProbeTarget{}).message, "command \"sh -c exit 4\" exited with code 4");
  a.command = {"sleep", "30"};
  failed = RunProbe(a, Duration::Seconds(1), ProbeTarget{});
  EXPECT_FALSE(failed.success);
  EXPECT_EQ(failed.message, "command \"sleep 30\" timed out");
}

// An HTTP server for the pods: /healthz answers 200 while the file argv[2] exists, else 503.
constexpr const char* kHealthServer = R"(import http.server, os, sys
port, marker = int(sys.argv[1]), sys.argv[2]
class Health(http.server.BaseHTTPRequestHandler):
    def do_GET(self):
        ok = self.path == "/healthz" and os.path.exists(marker) and self.headers.get("X-Probe") == "tessera"
        self.send_response(200 if ok else 503)
        self.send_header("Content-Length", "0")
        self.end_headers()
    def log_message(self, *args):
        pass
http.server.HTTPServer(("127.0.0.1", port), Health).serve_forever()
)";

class ProbesAgentTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = testing::FreshTestDir("tessera-probes");
    server_ = testing::StartLocalServer((dir_ / "server").string());
    ASSERT_NE(server_, nullptr);
    client_ = std::make_unique<ApiClient>(server_->url(), server_->admin_token());
    AgentOptions o = testing::TestAgentOptions(*server_, dir_, "node-1", "2xA100-80GB");
    o.restart_backoff = Duration::Millis(100);
    auto a = Agent::Start(o);
    ASSERT_TRUE(a.has_value()) << a.error().ToString();
    agent_ = std::move(*a);
    std::ofstream(dir_ / "health.py") << kHealthServer;
    fs::permissions(dir_, fs::perms::all, fs::perm_options::add);
    fs::permissions(dir_ / "health.py", fs::perms::all, fs::perm_options::add);
  }
  void TearDown() override {
    agent_.reset();
    testing::KillAgentPods(dir_ / "node-1");
    client_.reset();
    server_.reset();
    fs::remove_all(dir_);
  }
  void Create(const json& obj, const std::string& path) {
    auto r = client_->Request("POST", path, obj.dump());
    ASSERT_TRUE(r.has_value());
    ASSERT_EQ(r->status, 201) << r->body;
  }
  // A Job whose one pod runs `container` (labelled app=NAME).
  void SubmitJob(const std::string& name, json container, const std::string& restart_policy = "Never") {
    container["name"] = "main";
    const json job{{"apiVersion", "batch/v1"},
                   {"kind", "Job"},
                   {"metadata", {{"name", name}, {"namespace", "default"}}},
                   {"spec",
                    {{"backoffLimit", 10},
                     {"template",
                      {{"metadata", {{"labels", {{"app", name}}}}},
                       {"spec", {{"containers", {container}}, {"restartPolicy", restart_policy},
                                 {"terminationGracePeriodSeconds", 2}}}}}}}};
    Create(job, "/apis/batch/v1/namespaces/default/jobs");
  }
  json WaitForPod(const std::string& name, const std::function<bool(const json&)>& ready) {
    return WaitForObject(*client_, "/api/v1/namespaces/default/pods/" + name, ready);
  }
  static json ContainerStatus(const json& pod) {
    const json list = pod.value("status", json::object()).value("containerStatuses", json::array());
    return list.is_array() && !list.empty() ? list[0] : json::object();
  }
  static std::string Phase(const json& pod) { return pod.value("status", json::object()).value("phase", ""); }

  fs::path dir_;
  std::unique_ptr<Server> server_;
  std::unique_ptr<ApiClient> client_;
  std::unique_ptr<Agent> agent_;
};

TEST_F(ProbesAgentTest, ReadinessFollowsAnHttpProbeAndTheEndpointSliceFollowsReadiness) {
  // The pod serves /healthz with 200 only once `marker` exists (and the probe
  // sends its httpHeaders); the probe runs every second, failureThreshold 1.
  const int port = FreePort();
  const fs::path marker = dir_ / "web-ready";
  // (Through sh, whose PATH lookup skips directories the pod's user cannot enter.)
  SubmitJob("web", {{"command", {"sh", "-c", fmt::format("exec python3 {} {} {}", (dir_ / "health.py").string(), port,
                                                        marker.string())}},
                    {"ports", {{{"name", "http"}, {"containerPort", port}}}},
                    {"readinessProbe",
                     {{"httpGet", {{"path", "/healthz"}, {"port", "http"}, {"httpHeaders", {{{"name", "X-Probe"}, {"value", "tessera"}}}}}},
                      {"periodSeconds", 1},
                      {"failureThreshold", 1}}}});
  Create(json{{"apiVersion", "v1"},
              {"kind", "Service"},
              {"metadata", {{"name", "web"}, {"namespace", "default"}}},
              {"spec", {{"selector", {{"app", "web"}}}, {"ports", {{{"port", 80}, {"targetPort", "http"}}}}}}},
         "/api/v1/namespaces/default/services");
  const std::string pod = "job-web-main-0";
  const json running = WaitForPod(pod, [](const json& p) { return Phase(p) == "Running"; });
  EXPECT_EQ(ConditionField(running, "Ready", "status"), "False") << running.dump();
  EXPECT_EQ(ConditionField(running, "Ready", "reason"), "ContainersNotReady");
  EXPECT_EQ(ConditionField(running, "ContainersReady", "status"), "False");
  EXPECT_EQ(ContainerStatus(running).value("ready", true), false);
  EXPECT_EQ(ContainerStatus(running).value("started", false), true) << "no startup probe: started at once";

  const std::string slices = "/apis/discovery.k8s.io/v1/namespaces/default/endpointslices?labelSelector=kubernetes.io%2Fservice-name%3Dweb";
  auto endpoint_ready = [&](bool want) {
    for (int i = 0; i < 2000; ++i) {
      auto r = client_->Request("GET", slices);
      if (r && r->status == 200) {
        const json list = json::parse(r->body, nullptr, false);
        for (const json& s : list.value("items", json::array())) {
          for (const json& e : s.value("endpoints", json::array())) {
            if (e.value("conditions", json::object()).value("ready", !want) == want) return true;
          }
        }
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    return false;
  };
  EXPECT_TRUE(endpoint_ready(false)) << "a pod that is not ready is no ready endpoint";
  // The failures are the kubelet's Warning events: reason Unhealthy, one Event
  // per message whose count goes up as the probe keeps failing.
  json unhealthy = json::object();
  for (int i = 0; i < 1000 && unhealthy.value("count", 0) < 2; ++i) {
    auto r = client_->Request("GET", "/api/v1/namespaces/default/events");
    const json list = r && r->status == 200 ? json::parse(r->body, nullptr, false) : json::object();
    for (const json& e : list.value("items", json::array())) {
      if (e.value("reason", "") == "Unhealthy" && e["involvedObject"].value("name", "") == pod) unhealthy = e;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  EXPECT_EQ(unhealthy.value("type", ""), "Warning") << unhealthy.dump();
  EXPECT_TRUE(unhealthy.value("message", "").starts_with("Readiness probe failed: ")) << unhealthy.dump();
  EXPECT_GE(unhealthy.value("count", 0), 2) << unhealthy.dump();
  EXPECT_EQ(unhealthy["source"].value("component", ""), "kubelet");
  EXPECT_EQ(unhealthy["involvedObject"].value("kind", ""), "Pod");

  std::ofstream(marker) << "ok";
  const json ready = WaitForPod(pod, [](const json& p) { return ConditionField(p, "Ready", "status") == "True"; });
  EXPECT_EQ(ConditionField(ready, "ContainersReady", "status"), "True");
  EXPECT_EQ(ContainerStatus(ready).value("ready", false), true);
  EXPECT_TRUE(endpoint_ready(true)) << "the ready pod is a ready endpoint of its Service";

  fs::remove(marker);  // one failure (failureThreshold 1): not ready again, not restarted
  const json unready = WaitForPod(pod, [](const json& p) { return ConditionField(p, "Ready", "status") == "False"; });
  EXPECT_EQ(Phase(unready), "Running");
  EXPECT_EQ(ContainerStatus(unready).value("restartCount", -1), 0) << "readiness never restarts a container";
  EXPECT_TRUE(endpoint_ready(false));
}

TEST_F(ProbesAgentTest, AFailedLivenessProbeRestartsThePodAndSaysWhy) {
  // The exec probe runs in the pod's environment: it sees the pod's own
  // variables (TESSERA_POD_NAME) and fails, printing them, until the pod has
  // restarted once (its second run writes `second` in its checkpoint dir,
  // which is kept across restarts).
  SubmitJob("live",
            {{"command", {"sh", "-c", "if [ -f \"$TESSERA_CHECKPOINT_DIR/first\" ]; then touch \"$TESSERA_CHECKPOINT_DIR/second\"; "
                                      "else touch \"$TESSERA_CHECKPOINT_DIR/first\"; fi; exec sleep 600"}},
             {"livenessProbe",
              {{"exec", {{"command", {"sh", "-c", "if [ -f \"$TESSERA_CHECKPOINT_DIR/second\" ]; then exit 0; fi; "
                                                  "echo \"$TESSERA_POD_NAME is stuck\"; exit 1"}}}},
               {"periodSeconds", 1},
               {"failureThreshold", 2},
               {"terminationGracePeriodSeconds", 1}}}},
            "OnFailure");
  const json restarted = WaitForPod("job-live-main-0", [](const json& p) {
    return ContainerStatus(p).value("restartCount", 0) >= 1 && ContainerStatus(p).contains("state") &&
           ContainerStatus(p)["state"].contains("running");
  });
  const json status = ContainerStatus(restarted);
  EXPECT_EQ(status.value("restartCount", 0), 1) << status.dump();
  const json terminated = status.value("lastState", json::object()).value("terminated", json::object());
  EXPECT_EQ(terminated.value("message", "").rfind("Liveness probe failed: job-live-main-0 is stuck", 0), 0u) << status.dump();
  EXPECT_NE(terminated.value("exitCode", 0), 0);
  // Its second run passes the probe (the file is there): it stays, and is ready.
  std::this_thread::sleep_for(std::chrono::milliseconds(2500));
  const json later = WaitForPod("job-live-main-0", [](const json&) { return true; });
  EXPECT_EQ(ContainerStatus(later).value("restartCount", 0), 1) << ContainerStatus(later).dump();
  EXPECT_EQ(ConditionField(later, "Ready", "status"), "True");
}

TEST_F(ProbesAgentTest, AStartupTcpProbeGatesAnExecReadinessProbeRunAsThePodsUser) {
  // The pod listens only after a while; until then the startup probe
  // (tcpSocket) fails and the container is not started, and readiness (exec:
  // `test -O`, true only for the file's owner, i.e. run as the pod's uid in its
  // working directory) does not run.
  const int port = FreePort();
  SubmitJob("boot",
            {{"command", {"sh", "-c", fmt::format("sleep 1; touch ready-file; exec python3 -m http.server {} --bind 127.0.0.1", port)}},
             {"startupProbe", {{"tcpSocket", {{"port", port}}}, {"periodSeconds", 1}, {"failureThreshold", 30}}},
             {"readinessProbe", {{"exec", {{"command", {"sh", "-c", "test -O ready-file"}}}}, {"periodSeconds", 1}}}});
  const json running = WaitForPod("job-boot-main-0", [](const json& p) { return Phase(p) == "Running"; });
  EXPECT_EQ(ContainerStatus(running).value("started", true), false) << ContainerStatus(running).dump();
  EXPECT_EQ(ConditionField(running, "Ready", "status"), "False");
  const json ready = WaitForPod("job-boot-main-0", [](const json& p) { return ConditionField(p, "Ready", "status") == "True"; });
  EXPECT_EQ(ContainerStatus(ready).value("started", false), true);
  EXPECT_EQ(ContainerStatus(ready).value("restartCount", -1), 0);
}

TEST_F(ProbesAgentTest, TheApiRefusesProbesItCannotRunNamingTheField) {
  const json job = json::parse(R"({"apiVersion":"batch/v1","kind":"Job","metadata":{"name":"bad","namespace":"default"},
      "spec":{"template":{"spec":{"restartPolicy":"Never","containers":[{"name":"main","command":["true"],
      "readinessProbe":{"grpc":{"port":9000}},
      "livenessProbe":{"tcpSocket":{"port":8080},"successThreshold":2}}]}}}})");
  auto r = client_->Request("POST", "/apis/batch/v1/namespaces/default/jobs", job.dump());
  ASSERT_TRUE(r.has_value());
  EXPECT_EQ(r->status, 422) << r->body;
  EXPECT_NE(r->body.find("spec.template.spec.containers[0].readinessProbe.grpc"), std::string::npos) << r->body;
  EXPECT_NE(r->body.find("spec.template.spec.containers[0].livenessProbe.successThreshold: Invalid value: 2: must be 1"),
            std::string::npos)
      << r->body;
  auto missing = client_->Request("GET", "/apis/batch/v1/namespaces/default/jobs/bad");
  ASSERT_TRUE(missing.has_value());
  EXPECT_EQ(missing->status, 404) << "nothing half-stored";
}

}  // namespace
}  // namespace tessera
