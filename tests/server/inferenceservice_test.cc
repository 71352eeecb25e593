// The InferenceService controller through the API (tessera.dev/v1
// InferenceService), the test as the node's agent: it marks the replicas'
// pods Running and Ready at addresses of its choosing on the loopback network
// (127.0.0.1, 127.0.0.2, ...), where small HTTP servers answer with their own
// name, so that requests through services/NAME:http/proxy show which replica
// (and revision) served them.
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <condition_variable>
#include <map>
#include <mutex>
#include <optional>
#include <thread>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "client/api_client.h"
#include "http/http_server.h"
#include "server/api/service_traffic.h"
#include "server/api/traffic_split.h"
#include "server/controllers/inferenceservice_controller.h"
#include "tests/testing/api_polling.h"
#include "tests/testing/team_cluster.h"

namespace tessera {
namespace {

using nlohmann::json;

constexpr const char* kIsvcs = "/apis/tessera.dev/v1/namespaces/team/inferenceservices/";
constexpr const char* kWorkloads = "/apis/kueue.x-k8s.io/v1beta1/namespaces/team/workloads";
constexpr const char* kPods = "/api/v1/namespaces/team/pods";
constexpr const char* kServices = "/api/v1/namespaces/team/services/";

TEST(TrafficSplitTest, TheAnnotationsWeightsPickAServiceWithEndpointsInProportion) {
  const json svc{{"metadata", {{"annotations", {{"tessera.dev/traffic-split", R"({"llm-new":10,"llm-old":90})"}}}}}};
  const TrafficWeights w = TrafficSplitOf(svc);
  ASSERT_EQ(w, (TrafficWeights{{"llm-new", 10}, {"llm-old", 90}}));
  auto all = [](const std::string&) { return true; };
  // Rolls 0-9 of 100 go to llm-new, 10-99 to llm-old.
  EXPECT_EQ(PickByWeight(w, all, 0), "llm-new");
  EXPECT_EQ(PickByWeight(w, all, 9), "llm-new");
  EXPECT_EQ(PickByWeight(w, all, 10), "llm-old");
  EXPECT_EQ(PickByWeight(w, all, 199), "llm-old");  // 199 % 100 = 99
  // Without endpoints on one side, the other takes everything; with none, nothing.
  auto old_only = [](const std::string& s) { return s == "llm-old"; };
  EXPECT_EQ(PickByWeight(w, old_only, 3), "llm-old");
  EXPECT_EQ(PickByWeight(w, [](const std::string&) { return false; }, 3), std::nullopt);
  // A weight of 0 serves only when nothing weighted can.
  const TrafficWeights zero{{"a", 0}, {"b", 100}};
  EXPECT_EQ(PickByWeight(zero, all, 5), "b");
  EXPECT_EQ(PickByWeight(zero, [](const std::string& s) { return s == "a"; }, 5), "a");
  // Malformed: ignored.
  EXPECT_TRUE(TrafficSplitOf({{"metadata", {{"annotations", {{"tessera.dev/traffic-split", "{oops"}}}}}}).empty());
  EXPECT_TRUE(TrafficSplitOf({{"metadata", {{"annotations", {{"tessera.dev/traffic-split", R"({"a":-1})"}}}}}}).empty());
}

TEST(RolloutArithmeticTest, SurgeRoundsUpAndUnavailabilityDownAsKubernetes) {
  const json quarter = "25%", one = 1, bad = "x%";
  EXPECT_EQ(ResolveIntOrPercent(&quarter, 2, true, 9), 1);   // ceil(0.5)
  EXPECT_EQ(ResolveIntOrPercent(&quarter, 2, false, 9), 0);  // floor(0.5)
  EXPECT_EQ(ResolveIntOrPercent(&quarter, 10, true, 9), 3);  // ceil(2.5)
  EXPECT_EQ(ResolveIntOrPercent(&one, 10, true, 9), 1);
  EXPECT_EQ(ResolveIntOrPercent(&bad, 10, true, 9), 9);
  EXPECT_EQ(ResolveIntOrPercent(nullptr, 10, true, 9), 9);
}

TEST(RevisionTest, TheRevisionFollowsTheTemplateAndPortOnly) {
  const json a{{"replicas", 2}, {"template", {{"spec", {{"containers", {{{"name", "s"}, {"command", {"v1"}}}}}}}}}};
  json more = a;
  more["replicas"] = 5;
  more["canaryTrafficPercent"] = 10;
  json other = a;
  other["template"]["spec"]["containers"][0]["command"][0] = "v2";
  json port = a;
  port["port"] = 9000;
  EXPECT_EQ(InferenceRevision(a).size(), 10u);
  EXPECT_EQ(InferenceRevision(a), InferenceRevision(more));
  EXPECT_NE(InferenceRevision(a), InferenceRevision(other));
  EXPECT_NE(InferenceRevision(a), InferenceRevision(port));
}

TEST(ServiceTrafficTest, InFlightCountsAndAHeldRequestIsAnsweredWhenRetryFindsABackend) {
  int kicks = 0;
  ServiceTraffic traffic([&] { ++kicks; });
  traffic.Begin("team", "llm");
  traffic.Begin("team", "llm");
  traffic.End("team", "llm");
  EXPECT_EQ(traffic.InFlight("team", "llm"), 1);
  EXPECT_EQ(traffic.InFlight("team", "other"), 0);
  EXPECT_EQ(kicks, 1) << "rising load wakes the autoscaler, at most twice a second";
  std::mutex mu;
  std::condition_variable cv;
  bool ready = false;
  std::optional<int> answered;
  traffic.Hold(
      [&]() -> std::optional<HttpResponse> {
        std::lock_guard lock(mu);
        if (!ready) return std::nullopt;
        HttpResponse r;
        r.status = 200;
        return r;
      },
      [&](HttpResponse r) {
        std::lock_guard lock(mu);
        answered = r.status;
        cv.notify_all();
      },
      HttpResponse{.status = 503});
  EXPECT_EQ(kicks, 2) << "a held request wakes the loop";
  {
    std::lock_guard lock(mu);
    ready = true;
  }
  std::unique_lock lock(mu);
  cv.wait(lock, [&] { return answered.has_value(); });
  EXPECT_EQ(*answered, 200);
}

TEST(ServiceTrafficTest, AnsweredRequestsGiveTheMinutesRateErrorsAndLatencyPercentiles) {
  ServiceTraffic traffic;
  const auto now = std::chrono::steady_clock::now();
  // 98 fast answers (began 3 ms ago), one 503 and one that took 2 s.
  for (int i = 0; i < 98; ++i) {
    traffic.Begin("team", "llm");
    traffic.End("team", "llm", RequestEnd{.status = 200, .began = now - std::chrono::milliseconds(3)});
  }
  traffic.Begin("team", "llm");
  traffic.End("team", "llm", RequestEnd{.status = 503, .began = now});
  traffic.Begin("team", "llm");
  traffic.End("team", "llm", RequestEnd{.status = 200, .began = now - std::chrono::seconds(2)});
  // A request ended without an answer to count (the held one's bookkeeping) is not counted.
  traffic.Begin("team", "llm");
  traffic.End("team", "llm");
  EXPECT_EQ(traffic.InFlight("team", "llm"), 0);

  const RequestStats stats = traffic.Recent("team", "llm");
  EXPECT_EQ(stats.requests, 100);
  EXPECT_EQ(stats.errors, 1);
  EXPECT_EQ(stats.PerSecondMilli(), 1666);  // 100 in 60 s
  EXPECT_EQ(stats.p50_ms, 5);               // the bucket of 3 ms: up to 5 ms
  EXPECT_GE(stats.p99_ms, 5);
  EXPECT_LE(stats.p99_ms, 10);  // the 99th of 100 is still a fast one
  EXPECT_EQ(traffic.Recent("team", "other"), RequestStats{});
  // A minute on, the window has moved past them.
  EXPECT_EQ(traffic.Recent("team", "llm", std::chrono::steady_clock::now() + std::chrono::seconds(61)), RequestStats{});
}

TEST(ServiceTrafficTest, TheSlowestRequestBoundsTheTopPercentile) {
  ServiceTraffic traffic;
  traffic.Begin("team", "llm");
  traffic.End("team", "llm", RequestEnd{.status = 200, .began = std::chrono::steady_clock::now() - std::chrono::milliseconds(1200)});
  const RequestStats stats = traffic.Recent("team", "llm");
  // In the bucket up to 2.5 s, but no request took that long.
  EXPECT_GE(stats.p99_ms, 1200);
  EXPECT_LT(stats.p99_ms, 2500);
  EXPECT_EQ(stats.p50_ms, stats.p99_ms);
}

TEST(ServiceTrafficTest, StopAnswersWhatIsStillHeld) {
  ServiceTraffic traffic;
  std::optional<int> answered;
  traffic.Hold([]() -> std::optional<HttpResponse> { return std::nullopt; }, [&](HttpResponse r) { answered = r.status; },
               HttpResponse{.status = 503});
  traffic.Stop();
  EXPECT_EQ(answered, 503);
}

class InferenceServiceTest : public testing::TeamClusterTest {
 protected:
  InferenceServiceTest() : TeamClusterTest("tessera-isvc") {}

  void TearDown() override {
    for (auto& b : backends_) b->Stop();
    backends_.clear();
    TeamClusterTest::TearDown();
  }

  // HTTP servers answering `body` on `host` at one port shared by all (the
  // replicas' port is one, spec.port): the first picks it, the others follow.
  void Backend(const std::string& host, const std::string& body) {
    HttpServerOptions o;
    o.host = host;
    o.port = port_;
    o.threads = 1;
    auto server = std::make_unique<HttpServer>(o, [body](const HttpRequest&) {
      HttpResponse r;
      r.content_type = "text/plain";
      r.body = body;
      return r;
    });
    ASSERT_TRUE(server->Start().ok()) << host << ":" << port_;
    port_ = server->port();
    backends_.push_back(std::move(server));
  }

  static json Isvc(const std::string& name, json spec) {
    return json{{"apiVersion", "tessera.dev/v1"}, {"kind", "InferenceService"},
                {"metadata", {{"name", name}, {"namespace", "team"}}}, {"spec", std::move(spec)}};
  }
  json Template(const std::string& version) const {
    return {{"spec",
             {{"containers",
               {{{"name", "server"},
                 {"command", {"serve", version}},
                 {"resources", {{"requests", {{"nvidia.com/gpu", "0.25"}, {"cpu", "1"}, {"memory", "1Gi"}}}}}}}}}}};
  }
  int Code(const std::string& method, const std::string& path, const json& body = json()) {
    auto r = client_->Request(method, path, body.is_null() ? "" : body.dump(),
                              method == "PATCH" ? "application/merge-patch+json" : "application/json");
    EXPECT_TRUE(r.has_value());
    return r ? r->status : 0;
  }
  json Get(const std::string& path) {
    auto r = client_->Request("GET", path);
    return r && r->status == 200 ? json::parse(r->body) : json();
  }
  // The live pods of `isvc`'s revision `revision` (any revision when empty), once there are `n`.
  std::vector<json> WaitForPods(const std::string& isvc, size_t n, const std::string& revision = "") {
    std::string selector = "tessera.dev/inferenceservice%3D" + isvc;
    if (!revision.empty()) selector += ",tessera.dev/revision%3D" + revision;
    std::vector<json> out;
    WaitFor(std::string(kPods) + "?labelSelector=" + selector, [&](const json& list) {
      out.clear();
      for (const json& p : list["items"]) {
        if (!p["metadata"].contains("deletionTimestamp")) out.push_back(p);
      }
      return out.size() == n;
    });
    return out;
  }
  // As the agent reports a started, ready pod at `ip`.
  void Serve(const json& pod, const std::string& ip) {
    json p = pod;
    p["status"]["phase"] = "Running";
    p["status"]["podIP"] = ip;
    p["status"]["podIPs"] = {{{"ip", ip}}};
    p["status"]["conditions"] = {{{"type", "Ready"}, {"status", "True"}}};
    const std::string name = p["metadata"]["name"];
    ASSERT_EQ(Code("PUT", std::string(kPods) + "/" + name + "/status", p), 200) << name;
  }
  bool Served(const json& pod) const {
    return pod.contains("status") && pod["status"].value("phase", "") == "Running";
  }
  // The bodies of `n` requests through the Service's proxy.
  std::map<std::string, int> Call(const std::string& isvc, int n) {
    std::map<std::string, int> seen;
    for (int i = 0; i < n; ++i) {
      auto r = client_->Request("GET", "/api/v1/namespaces/team/services/" + isvc + ":http/proxy/");
      if (!r) {
        ++seen["(no answer)"];
        continue;
      }
      ++seen[r->status == 200 ? r->body : "(" + std::to_string(r->status) + ")"];
    }
    return seen;
  }
  json WaitForIsvc(const std::string& name, const std::function<bool(const json&)>& ok) {
    return WaitFor(kIsvcs + name, [&](const json& o) { return o.contains("status") && ok(o["status"]); });
  }
  // `name` with 2 replicas of "v1", served at 127.0.0.1 and 127.0.0.2.
  json StartTwoReplicas(const std::string& name, json extra = json::object()) {
    Backend("127.0.0.1", "v1 at 127.0.0.1");
    Backend("127.0.0.2", "v1 at 127.0.0.2");
    json spec{{"replicas", 2}, {"port", port_}, {"template", Template("v1")}};
    spec.update(extra);
    Create(Isvc(name, spec));
    const std::vector<json> pods = WaitForPods(name, 2);
    Serve(pods[0], "127.0.0.1");
    Serve(pods[1], "127.0.0.2");
    return WaitForIsvc(name, [](const json& s) { return s.value("readyReplicas", 0) == 2; });
  }

  uint16_t port_ = 0;
  std::vector<std::unique_ptr<HttpServer>> backends_;
};

TEST_F(InferenceServiceTest, TwoReplicasEachTheirOwnWorkloadAnswerThroughTheServiceProxy) {
  const json isvc = StartTwoReplicas("llm");
  const std::string revision = isvc["status"]["revision"];
  EXPECT_EQ(revision.size(), 10u);
  EXPECT_EQ(isvc["status"]["url"], "/api/v1/namespaces/team/services/llm:http/proxy/");
  EXPECT_EQ(isvc["status"]["replicas"], 2);
  // Each replica is a Workload of one pod, labelled with the service and the
  // revision, at the production priority (the default class, non-preemptible).
  const json wls = Get(std::string(kWorkloads) + "?labelSelector=tessera.dev/inferenceservice%3Dllm");
  ASSERT_EQ(wls["items"].size(), 2u) << wls.dump();
  for (const json& wl : wls["items"]) {
    EXPECT_EQ(wl["metadata"]["labels"]["tessera.dev/revision"], revision);
    EXPECT_EQ(wl["spec"]["priorityClassName"], "production");
    EXPECT_EQ(wl["spec"]["queueName"], "default");
    const json& ps = wl["spec"]["podSets"][0];
    EXPECT_EQ(ps["count"], 1);
    const json& c = ps["template"]["spec"]["containers"][0];
    EXPECT_EQ(c["ports"][0]["name"], "http");
    EXPECT_EQ(c["ports"][0]["containerPort"], port_);
    EXPECT_EQ(c["env"][0]["name"], "PORT");
    EXPECT_EQ(ps["template"]["spec"]["restartPolicy"], "Never");
  }
  // The Service over the replicas, and the requests spread over both.
  const json svc = Get(std::string(kServices) + "llm");
  EXPECT_EQ(svc["spec"]["selector"]["tessera.dev/inferenceservice"], "llm");
  EXPECT_EQ(svc["spec"]["ports"][0]["name"], "http");
  std::map<std::string, int> seen;
  for (int round = 0; round < 20 && seen.size() < 2; ++round) {
    for (const auto& [body, n] : Call("llm", 10)) seen[body] += n;
  }
  EXPECT_EQ(seen.size(), 2u) << json(seen).dump();
  EXPECT_TRUE(seen.contains("v1 at 127.0.0.1") && seen.contains("v1 at 127.0.0.2")) << json(seen).dump();
  // The table's columns.
  const json ready = WaitForIsvc("llm", [](const json& s) { return ConditionField({{"status", s}}, "Ready", "status") == "True"; });
  EXPECT_EQ(ready["status"]["revisions"][0]["trafficPercent"], 100);

  // Deleted: its Workloads, pods and Services go.
  ASSERT_EQ(Code("DELETE", std::string(kIsvcs) + "llm"), 200);
  WaitFor(kWorkloads, [](const json& l) { return l["items"].empty(); });
  WaitFor("/api/v1/namespaces/team/services", [](const json& l) {
    for (const json& s : l["items"]) {
      if (s["metadata"].value("labels", json::object()).contains("tessera.dev/inferenceservice")) return false;
    }
    return true;
  });
}

TEST_F(InferenceServiceTest, RequestRateAndLatencyAreInTheStatusAndOnMetrics) {
  StartTwoReplicas("llm");
  EXPECT_EQ(Call("llm", 30)["(no answer)"], 0);
  const json isvc = WaitForIsvc("llm", [](const json& s) {
    return s.contains("requests") && s["requests"].value("count", 0) >= 30;
  });
  const json& requests = isvc["status"]["requests"];
  EXPECT_EQ(requests["count"], 30) << requests.dump();
  EXPECT_EQ(requests["errors"], 0);
  EXPECT_EQ(requests["window"], "60s");
  EXPECT_EQ(requests["perSecond"], "0.50");  // 30 in the minute
  EXPECT_GE(requests["latencyP99Ms"].get<int64_t>(), requests["latencyP50Ms"].get<int64_t>());
  EXPECT_GT(requests["latencyP50Ms"].get<int64_t>(), 0);

  auto metrics = client_->Request("GET", "/metrics");
  ASSERT_TRUE(metrics.has_value());
  const std::string& text = metrics->body;
  EXPECT_NE(text.find("# TYPE tessera_inferenceservice_requests_total counter"), std::string::npos);
  EXPECT_NE(text.find("tessera_inferenceservice_requests_total{namespace=\"team\",inferenceservice=\"llm\",code=\"200\"} 30"),
            std::string::npos)
      << text.substr(text.find("tessera_inferenceservice"), 600);
  EXPECT_NE(text.find("tessera_inferenceservice_request_duration_seconds_count{namespace=\"team\",inferenceservice=\"llm\"} 30"),
            std::string::npos);
}

TEST_F(InferenceServiceTest, AReplicaWhosePodFailedIsReplacedByANewWorkload) {
  StartTwoReplicas("llm");
  std::vector<json> pods = WaitForPods("llm", 2);
  json failed = pods[0];
  failed["status"]["phase"] = "Failed";
  failed["status"]["conditions"] = {{{"type", "Ready"}, {"status", "False"}}};
  const std::string failed_name = failed["metadata"]["name"];
  ASSERT_EQ(Code("PUT", std::string(kPods) + "/" + failed_name + "/status", failed), 200);
  // A new replica (another Workload, another pod) takes its place; the other stays.
  std::vector<json> now;
  WaitFor(std::string(kPods) + "?labelSelector=tessera.dev/inferenceservice%3Dllm", [&](const json& list) {
    now.clear();
    for (const json& p : list["items"]) now.push_back(p);
    return now.size() == 2 && now[0]["metadata"]["name"] != failed_name && now[1]["metadata"]["name"] != failed_name;
  });
  const json fresh = Served(now[0]) ? now[1] : now[0];
  Serve(fresh, "127.0.0.1");
  WaitForIsvc("llm", [](const json& s) { return s.value("readyReplicas", 0) == 2; });
}

// A replica that keeps failing before it is ready is replaced after a back-off
// (the kubelet's CrashLoopBackOff: at once, then 10 s, doubling), not in a hot loop.
TEST_F(InferenceServiceTest, AReplicaThatKeepsFailingIsReplacedAfterABackOff) {
  Backend("127.0.0.1", "v1 at 127.0.0.1");
  Create(Isvc("bad", {{"replicas", 1}, {"port", port_}, {"template", Template("v1")}}));
  auto fail = [&](const json& pod) {
    json failed = pod;
    failed["status"]["phase"] = "Failed";
    failed["status"]["message"] = "cannot run python3: Permission denied";
    const std::string name = failed["metadata"]["name"];
    ASSERT_EQ(Code("PUT", std::string(kPods) + "/" + name + "/status", failed), 200);
    WaitFor(std::string(kPods) + "?labelSelector=tessera.dev/inferenceservice%3Dbad", [&](const json& list) {
      for (const json& p : list["items"]) {
        if (p["metadata"]["name"] == name) return false;
      }
      return true;
    });
  };
  fail(WaitForPods("bad", 1)[0]);
  fail(WaitForPods("bad", 1)[0]);  // the first failure is replaced at once
  const json waiting = WaitForIsvc("bad", [](const json& s) {
    return s.value("message", "").find("back-off: 2 replicas in a row") != std::string::npos;
  });
  EXPECT_NE(waiting["status"]["message"].get<std::string>().find("Permission denied"), std::string::npos)
      << waiting["status"].dump();
  EXPECT_EQ(waiting["status"]["replicaFailures"]["count"], 2);
  EXPECT_EQ(Get(std::string(kWorkloads) + "?labelSelector=tessera.dev/inferenceservice%3Dbad")["items"].size(), 0u)
      << "no replica during the back-off";
  // After it (10 s), the next replica; once ready, the failures are forgotten.
  Serve(WaitForPods("bad", 1)[0], "127.0.0.1");
  const json ok = WaitForIsvc("bad", [](const json& s) { return s.value("readyReplicas", 0) == 1; });
  EXPECT_FALSE(ok["status"].contains("replicaFailures")) << ok["status"].dump();
}

TEST_F(InferenceServiceTest, ATemplateChangeRollsOutToTheNewRevisionKeepingReplicasReady) {
  const json v1 = StartTwoReplicas("llm");
  const std::string old_rev = v1["status"]["revision"];
  Backend("127.0.0.3", "v2 at 127.0.0.3");
  Backend("127.0.0.4", "v2 at 127.0.0.4");
  ASSERT_EQ(Code("PATCH", std::string(kIsvcs) + "llm", {{"spec", {{"template", Template("v2")}}}}), 200);
  // maxSurge 25% of 2 = 1 (rounded up), maxUnavailable 0 (rounded down): one
  // new replica beside the two old ones, none removed before it is ready.
  const json moving = WaitForIsvc("llm", [&](const json& s) { return s.value("revision", "") != old_rev; });
  const std::string new_rev = moving["status"]["revision"];
  std::vector<json> fresh = WaitForPods("llm", 1, new_rev);
  EXPECT_EQ(WaitForPods("llm", 2, old_rev).size(), 2u) << "the old replicas stay until a new one is ready";
  Serve(fresh[0], "127.0.0.3");
  // One old replica goes, a second new one comes.
  WaitForPods("llm", 1, old_rev);
  fresh = WaitForPods("llm", 2, new_rev);
  for (const json& p : fresh) {
    if (!Served(p)) Serve(p, "127.0.0.4");
  }
  WaitForPods("llm", 0, old_rev);
  const json done = WaitForIsvc("llm", [&](const json& s) {
    return s.value("stableRevision", "") == new_rev && s.value("readyReplicas", 0) == 2;
  });
  EXPECT_EQ(done["status"]["previousRevision"], old_rev);
  for (const auto& [body, n] : Call("llm", 20)) EXPECT_EQ(body.substr(0, 2), "v2") << body;
}

TEST_F(InferenceServiceTest, ACanaryOfTenPercentKeepsTheOldRevisionServingAndRollbackRestoresIt) {
  const json v1 = StartTwoReplicas("llm");
  const std::string old_rev = v1["status"]["revision"];
  Backend("127.0.0.3", "v2 at 127.0.0.3");
  ASSERT_EQ(Code("PATCH", std::string(kIsvcs) + "llm",
                 {{"spec", {{"template", Template("v2")}, {"canaryTrafficPercent", 10}}}}),
            200);
  const json moving = WaitForIsvc("llm", [&](const json& s) { return s.value("revision", "") != old_rev; });
  const std::string new_rev = moving["status"]["revision"];
  // ceil(2 * 10 / 100) = 1 canary replica next to the 2 old ones.
  Serve(WaitForPods("llm", 1, new_rev)[0], "127.0.0.3");
  const json split = WaitFor(std::string(kServices) + "llm", [&](const json& s) {
    const std::string a = s["metadata"].value("annotations", json::object()).value("tessera.dev/traffic-split", "");
    return a.find("\"llm-" + new_rev + "\":10") != std::string::npos;
  });
  EXPECT_EQ(json::parse(split["metadata"]["annotations"]["tessera.dev/traffic-split"].get<std::string>()),
            json({{"llm-" + new_rev, 10}, {"llm-" + old_rev, 90}}));
  EXPECT_EQ(WaitForPods("llm", 2, old_rev).size(), 2u);
  const json canary = WaitForIsvc("llm", [](const json& s) { return s.value("revisions", json::array()).size() == 2; });
  for (const json& r : canary["status"]["revisions"]) {
    EXPECT_EQ(r["trafficPercent"], r["name"] == new_rev ? 10 : 90) << r.dump();
  }
  // Over 300 requests, both revisions answer, the old one far more (90 %).
  // (The chance that the canary gets none of 300 at 10 % is 0.9^300, about 2e-14.)
  std::map<std::string, int> by_version;
  for (const auto& [body, n] : Call("llm", 300)) by_version[body.substr(0, 2)] += n;
  EXPECT_GT(by_version["v1"], by_version["v2"]) << json(by_version).dump();
  EXPECT_GT(by_version["v2"], 0) << json(by_version).dump();
  EXPECT_EQ(by_version["v1"] + by_version["v2"], 300) << json(by_version).dump();

  // Rollback: spec.template is v1's again, the canary's replica goes, the split too.
  ASSERT_EQ(Code("PATCH", std::string(kIsvcs) + "llm",
                 {{"metadata", {{"annotations", {{"tessera.dev/rollback", "now"}}}}}}),
            200);
  const json back = WaitForIsvc("llm", [&](const json& s) { return s.value("revision", "") == old_rev; });
  EXPECT_EQ(back["spec"]["template"]["spec"]["containers"][0]["command"][1], "v1");
  EXPECT_FALSE(back["metadata"].value("annotations", json::object()).contains("tessera.dev/rollback"));
  WaitForPods("llm", 0, new_rev);
  WaitFor(std::string(kServices) + "llm", [](const json& s) {
    return !s["metadata"].value("annotations", json::object()).contains("tessera.dev/traffic-split");
  });
  for (const auto& [body, n] : Call("llm", 20)) EXPECT_EQ(body.substr(0, 2), "v1") << body;
}

TEST_F(InferenceServiceTest, AReplicaThatCannotBeAdmittedSaysWhyInTheStatus) {
  // 8 GPUs in the queue: the first replica of 8 is admitted, the second waits.
  Create(Isvc("big", {{"replicas", 2},
                      {"template",
                       {{"spec",
                         {{"containers",
                           {{{"name", "server"},
                             {"command", {"serve"}},
                             {"resources", {{"requests", {{"nvidia.com/gpu", 8}}}}}}}}}}}}}));
  WaitForPods("big", 1);
  // The second one's Workload, not admitted, says why in the scheduler's words.
  const json waiting = WaitForIsvc("big", [](const json& s) {
    return s.value("message", "").find("waits: ") != std::string::npos &&
           s.value("message", "").find("nvidia.com/gpu") != std::string::npos;
  });
  EXPECT_EQ(waiting["status"]["readyReplicas"], 0);
  EXPECT_EQ(ConditionField(waiting, "Ready", "status"), "False");
}

TEST_F(InferenceServiceTest, FromZeroReplicasTheFirstRequestIsHeldUntilAReplicaIsReadyAndAnswered) {
  Backend("127.0.0.1", "woke up");
  Create(Isvc("lazy", {{"minReplicas", 0}, {"maxReplicas", 2}, {"port", port_}, {"template", Template("v1")}}));
  WaitFor(std::string(kServices) + "lazy", [](const json& s) { return s.contains("spec"); });
  const json idle = WaitForIsvc("lazy", [](const json& s) { return s.contains("replicas"); });
  EXPECT_EQ(idle["status"]["replicas"], 0);
  EXPECT_EQ(Get(std::string(kWorkloads))["items"].size(), 0u) << "nothing runs at zero";
  // The request waits in the proxy (in flight: the autoscaler wants 1) ...
  std::optional<ApiResponse> answer;
  std::thread caller([&] {
    ApiClient other(server_->url(), server_->admin_token());
    auto r = other.Request("GET", "/api/v1/namespaces/team/services/lazy:http/proxy/");
    if (r) answer = *r;
  });
  // ... while the replica is made, admitted and started (the test as its agent).
  const std::vector<json> pods = WaitForPods("lazy", 1);
  Serve(pods[0], "127.0.0.1");
  caller.join();
  ASSERT_TRUE(answer.has_value());
  EXPECT_EQ(answer->status, 200) << answer->body;
  EXPECT_EQ(answer->body, "woke up");
}

TEST_F(InferenceServiceTest, LoadRaisesTheReplicasAndNoLoadLowersThemAfterTheDelay) {
  // A backend that holds each request until released: 3 requests in flight at
  // a target concurrency of 1 want ceil(3 / 1) = 3 replicas (max 3).
  std::mutex mu;
  std::condition_variable cv;
  bool released = false;
  HttpServerOptions o;
  o.host = "127.0.0.1";
  o.port = 0;
  o.threads = 4;
  auto slow = std::make_unique<HttpServer>(o, [&](const HttpRequest&) {
    std::unique_lock lock(mu);
    cv.wait(lock, [&] { return released; });
    HttpResponse r;
    r.content_type = "text/plain";
    r.body = "done";
    return r;
  });
  ASSERT_TRUE(slow->Start().ok());
  port_ = slow->port();
  Create(Isvc("busy", {{"minReplicas", 1},
                       {"maxReplicas", 3},
                       {"port", port_},
                       {"autoscaling", {{"targetConcurrency", 1}, {"scaleDownDelay", "1s"}}},
                       {"template", Template("v1")}}));
  Serve(WaitForPods("busy", 1)[0], "127.0.0.1");
  WaitForIsvc("busy", [](const json& s) { return s.value("readyReplicas", 0) == 1; });
  std::vector<std::thread> callers;
  std::vector<int> codes(3, 0);
  for (int i = 0; i < 3; ++i) {
    callers.emplace_back([&, i] {
      ApiClient other(server_->url(), server_->admin_token());
      auto r = other.Request("GET", "/api/v1/namespaces/team/services/busy:http/proxy/");
      codes[i] = r ? r->status : -1;
    });
  }
  WaitForIsvc("busy", [](const json& s) { return s.value("replicas", 0) == 3; });
  WaitForPods("busy", 3);
  {
    std::lock_guard lock(mu);
    released = true;
  }
  cv.notify_all();
  for (std::thread& t : callers) t.join();
  EXPECT_EQ(codes, (std::vector<int>{200, 200, 200}));
  // No load: back to minReplicas once the second has passed.
  WaitForIsvc("busy", [](const json& s) { return s.value("replicas", 0) == 1; });
  WaitForPods("busy", 1);
  slow->Stop();
}

TEST_F(InferenceServiceTest, ValidationNamesTheField) {
  auto refused = [&](json spec, const std::string& field) {
    auto r = client_->Request("POST", "/apis/tessera.dev/v1/namespaces/team/inferenceservices",
                              Isvc("bad", std::move(spec)).dump());
    ASSERT_TRUE(r.has_value());
    EXPECT_EQ(r->status, 422) << r->body;
    EXPECT_NE(r->body.find(field), std::string::npos) << r->body;
  };
  refused({{"replicas", 2}, {"minReplicas", 1}, {"maxReplicas", 3}, {"template", Template("v1")}}, "spec.replicas");
  refused({{"minReplicas", 3}, {"maxReplicas", 2}, {"template", Template("v1")}}, "spec.minReplicas");
  refused({{"rollout", {{"maxSurge", "150%"}}}, {"template", Template("v1")}}, "spec.rollout.maxSurge");
  refused({{"rollout", {{"maxSurge", 0}, {"maxUnavailable", "0%"}}}, {"template", Template("v1")}},
          "spec.rollout.maxUnavailable");
  refused({{"canaryTrafficPercent", 101}, {"template", Template("v1")}}, "spec.canaryTrafficPercent");
  refused({{"autoscaling", {{"scaleDownDelay", "soon"}}}, {"template", Template("v1")}},
          "spec.autoscaling.scaleDownDelay");
  refused({{"replicas", 1}}, "spec.template");
  EXPECT_EQ(Code("GET", std::string(kIsvcs) + "bad"), 404) << "nothing half-stored";
}

}  // namespace
}  // namespace tessera
