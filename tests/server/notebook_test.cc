// The Notebook controller through the API (tessera.dev/v1 Notebook), the test
// as the node's agent: it runs the pods, publishes GPU samples and the kernels'
// activity (the annotation the agent writes from Jupyter's /api/status).
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <string>

#include "common/time_format.h"
#include "tests/testing/api_polling.h"
#include "tests/testing/team_cluster.h"

namespace tessera {
namespace {

using nlohmann::json;

constexpr const char* kNotebooks = "/apis/tessera.dev/v1/namespaces/team/notebooks/";
constexpr const char* kWorkloads = "/apis/kueue.x-k8s.io/v1beta1/namespaces/team/workloads/";
constexpr const char* kPods = "/api/v1/namespaces/team/pods/";
constexpr const char* kClaims = "/api/v1/namespaces/team/persistentvolumeclaims/";
constexpr const char* kServices = "/api/v1/namespaces/team/services/";

std::string Phase(const json& nb) { return nb.value("status", json::object()).value("phase", ""); }

class NotebookTest : public testing::TeamClusterTest {
 protected:
  NotebookTest() : TeamClusterTest("tessera-notebook") {}

  static json Notebook(const std::string& name, json spec) {
    return json{{"apiVersion", "tessera.dev/v1"}, {"kind", "Notebook"},
                {"metadata", {{"name", name}, {"namespace", "team"}}}, {"spec", std::move(spec)}};
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
  json WaitForPod(const std::string& name) {
    return WaitFor(kPods + name, [](const json& p) { return !p["metadata"].contains("deletionTimestamp"); });
  }
  void RunPod(const std::string& name) {
    json pod = WaitForPod(name);
    pod["status"]["phase"] = "Running";
    pod["status"]["conditions"] = {{{"type", "Ready"}, {"status", "True"}}};
    ASSERT_EQ(Code("PUT", std::string(kPods) + name + "/status", pod), 200);
  }
  // As the agent does with a pod marked for deletion: it stops it, then deletes it.
  void StopPod(const std::string& name) {
    WaitFor(kPods + name, [](const json& p) { return p["metadata"].contains("deletionTimestamp"); });
    ASSERT_EQ(Code("DELETE", kPods + name), 200);
  }
  // The node's GPU sample: every device at `percent`.
  void SampleGpus(int percent) {
    json devices = json::array();
    for (int i = 0; i < 8; ++i) devices.push_back({{"index", i}, {"utilizationPercent", percent}, {"memoryUsedBytes", 0}});
    ASSERT_EQ(Code("PATCH", "/api/v1/nodes/node-1",
                     {{"metadata", {{"annotations", {{"tessera.dev/gpu-usage", devices.dump()}}}}}}),
              200);
  }
  void Annotate(const std::string& path, const std::string& key, const std::string& value) {
    ASSERT_EQ(Code("PATCH", path, {{"metadata", {{"annotations", {{key, value}}}}}}), 200) << path;
  }
};

TEST_F(NotebookTest, ANotebookGetsItsWorkloadHomeVolumeAndServiceAndRuns) {
  Create(Notebook("nb1", {{"gpu", "0.25"}, {"home", {{"size", "1Gi"}}}, {"idle", {{"timeout", "30m"}}}}));
  const std::string url = "/api/v1/namespaces/team/services/notebook-nb1:http/proxy/";
  // Its home claim, bound, labelled, owned by nobody (it outlives the notebook).
  const json claim = WaitFor(std::string(kClaims) + "nb1-home", [](const json& c) { return c.contains("status"); });
  EXPECT_EQ(claim["status"]["phase"], "Bound");
  EXPECT_EQ(claim["spec"]["resources"]["requests"]["storage"], "1Gi");
  EXPECT_FALSE(claim["metadata"].contains("ownerReferences"));
  // Its Workload: a notebook (so the idle reclaimer applies) with its idle timeout.
  const json wl = WaitFor(std::string(kWorkloads) + "notebook-nb1", [](const json& w) { return w.contains("spec"); });
  EXPECT_EQ(wl["metadata"]["annotations"]["tessera.dev/type"], "notebook");
  EXPECT_EQ(wl["metadata"]["annotations"]["tessera.dev/idle-timeout"], "30m");
  EXPECT_EQ(wl["spec"]["queueName"], "default");
  const json& tmpl = wl["spec"]["podSets"][0]["template"];
  EXPECT_EQ(tmpl["metadata"]["labels"]["tessera.dev/notebook"], "nb1");
  const json& c = tmpl["spec"]["containers"][0];
  EXPECT_EQ(c["ports"][0]["name"], "http");
  EXPECT_EQ(c["ports"][0]["containerPort"], 8888);
  EXPECT_EQ(c["resources"]["requests"]["nvidia.com/gpu"], "0.25");
  // Jupyter Lab where installed, else the classic Notebook: on the proxy's path, its own token off.
  ASSERT_EQ(c["command"].size(), 7u) << c["command"].dump();
  EXPECT_EQ(c["command"][0], "sh");
  const std::string script = c["command"][2];
  EXPECT_NE(script.find("exec jupyter-lab "), std::string::npos) << script;
  EXPECT_NE(script.find("--ServerApp.base_url=\"$1\" --ServerApp.password="), std::string::npos) << script;
  EXPECT_NE(script.find("exec jupyter-notebook "), std::string::npos) << script;
  EXPECT_NE(script.find("--NotebookApp.base_url=\"$1\" --NotebookApp.password="), std::string::npos) << script;
  EXPECT_EQ(script.find(".token="), std::string::npos) << "its token comes from JUPYTER_TOKEN: " << script;
  // Jupyter's token: a Secret of its own, which the pod reads and the proxy sends.
  bool token_env = false;
  for (const json& e : c["env"]) {
    token_env = token_env || (e["name"] == "JUPYTER_TOKEN" &&
                              e["valueFrom"]["secretKeyRef"] == json({{"name", "notebook-nb1-token"}, {"key", "token"}}));
  }
  EXPECT_TRUE(token_env) << c["env"].dump();
  const json token = Get("/api/v1/namespaces/team/secrets/notebook-nb1-token");
  ASSERT_TRUE(token.is_object());
  EXPECT_EQ(token["data"]["token"].get<std::string>().size(), 88u) << "64 hex characters, base64";
  EXPECT_EQ(c["command"][4], url);
  EXPECT_EQ(c["command"][5], "8888");
  EXPECT_EQ(c["volumeMounts"][0]["mountPath"], "/home/jovyan");
  EXPECT_EQ(tmpl["spec"]["volumes"][0]["persistentVolumeClaim"]["claimName"], "nb1-home");
  // Its Service, port http, selecting the pod.
  const json svc = WaitFor(std::string(kServices) + "notebook-nb1", [](const json& s) { return s.contains("spec"); });
  EXPECT_EQ(svc["spec"]["ports"][0]["name"], "http");
  EXPECT_EQ(svc["spec"]["ports"][0]["port"], 8888);
  EXPECT_EQ(svc["spec"]["selector"]["tessera.dev/notebook"], "nb1");
  EXPECT_EQ(svc["metadata"]["annotations"]["tessera.dev/proxy-keep-path"], "true") << "Jupyter serves under its base_url";
  EXPECT_EQ(svc["metadata"]["annotations"]["tessera.dev/proxy-token-secret"], "notebook-nb1-token");
  // Admitted: its pod, labelled for the Service; Running once the agent says so.
  const json pod = WaitForPod("notebook-nb1-notebook-0");
  EXPECT_EQ(pod["metadata"]["labels"]["tessera.dev/notebook"], "nb1");
  const json pending = Get(std::string(kNotebooks) + "nb1");
  EXPECT_EQ(pending["status"]["url"], url);
  RunPod("notebook-nb1-notebook-0");
  const json running = WaitFor(std::string(kNotebooks) + "nb1", [](const json& n) { return Phase(n) == "Running"; });
  EXPECT_EQ(running["status"]["pod"], "notebook-nb1-notebook-0");
  EXPECT_EQ(running["status"]["homeVolume"], "nb1-home");

  // Deleted: its Workload, pod and Service go; its home volume stays.
  ASSERT_EQ(Code("DELETE", std::string(kNotebooks) + "nb1"), 200);
  WaitFor(std::string(kWorkloads), [](const json& l) { return l["items"].empty(); });
  WaitFor("/api/v1/namespaces/team/services", [](const json& l) {
    for (const json& s : l["items"]) {
      if (s["metadata"]["name"] == "notebook-nb1") return false;
    }
    return true;
  });
  EXPECT_EQ(Code("GET", std::string(kClaims) + "nb1-home"), 200);
}

TEST_F(NotebookTest, SuspendFreesTheGpuKeepsTheHomeVolumeAndResumeBringsItBack) {
  Create(Notebook("nb", {{"gpu", 8}, {"home", {{"size", "1Gi"}}}}));
  RunPod("notebook-nb-notebook-0");
  WaitFor(std::string(kNotebooks) + "nb", [](const json& n) { return Phase(n) == "Running"; });
  ASSERT_EQ(Code("PATCH", std::string(kNotebooks) + "nb", {{"spec", {{"suspend", true}}}}), 200);
  StopPod("notebook-nb-notebook-0");
  const json wl = WaitFor(std::string(kWorkloads) + "notebook-nb",
                          [](const json& w) { return !w.value("status", json::object()).contains("admission"); });
  EXPECT_EQ(wl["spec"]["active"], false);
  const json suspended = WaitFor(std::string(kNotebooks) + "nb", [](const json& n) { return Phase(n) == "Suspended"; });
  EXPECT_NE(suspended["status"]["message"].get<std::string>().find("spec.suspend"), std::string::npos)
      << suspended["status"].dump();
  EXPECT_EQ(Code("GET", std::string(kClaims) + "nb-home"), 200) << "the home volume is kept";
  // Its 8 GPUs are free: another workload of 8 is admitted.
  Create(Notebook("other", {{"gpu", 8}}));
  WaitForPod("notebook-other-notebook-0");
  ASSERT_EQ(Code("DELETE", std::string(kNotebooks) + "other"), 200);
  WaitFor(std::string(kWorkloads), [](const json& l) { return l["items"].size() == 1; });

  ASSERT_EQ(Code("PATCH", std::string(kNotebooks) + "nb", {{"spec", {{"suspend", false}}}}), 200);
  WaitFor(std::string(kNotebooks) + "nb", [](const json& n) { return Phase(n) == "Resuming"; });
  RunPod("notebook-nb-notebook-0");
  WaitFor(std::string(kNotebooks) + "nb", [](const json& n) { return Phase(n) == "Running"; });
}

TEST_F(NotebookTest, ANotebookIsIdleOnlyWhenItsGpuAndItsKernelsAreBothQuiet) {
  // Both with a 30 minute idle policy, their GPUs idle for an hour; "quiet"'s
  // kernels last worked an hour ago, "busy"'s just now: only "quiet" is suspended.
  for (const char* name : {"busy", "quiet"}) {
    Create(Notebook(name, {{"gpu", "0.5"}, {"idle", {{"timeout", "30m"}}}}));
    RunPod(std::string("notebook-") + name + "-notebook-0");
  }
  SampleGpus(0);
  const std::string hour_ago = FormatRfc3339(SystemNow() + Duration::Seconds(-3600));
  const std::string just_now = FormatRfc3339(SystemNow());
  // "busy" first: a pass that sees quiet's annotations has seen busy's too.
  for (const auto& [name, activity] : {std::pair{"busy", just_now}, std::pair{"quiet", hour_ago}}) {
    const std::string wl = std::string(kWorkloads) + "notebook-" + name;
    WaitFor(wl, [](const json& w) { return w["metadata"].value("annotations", json::object()).contains("tessera.dev/idle-since"); });
    Annotate(std::string(kPods) + "notebook-" + name + "-notebook-0", "tessera.dev/last-activity", activity);
    Annotate(wl, "tessera.dev/idle-since", hour_ago);
  }
  const json quiet = WaitFor(std::string(kWorkloads) + "notebook-quiet",
                             [](const json& w) { return ConditionField(w, "Suspended", "status") == "True"; });
  EXPECT_EQ(quiet["spec"]["active"], false);
  const std::string message = ConditionField(quiet, "Suspended", "message");
  EXPECT_NE(message.find("and its kernels quiet (last activity " + hour_ago + ")"), std::string::npos) << message;
  EXPECT_NE(message.find("tessera notebook open quiet"), std::string::npos) << message;
  const json busy = Get(std::string(kWorkloads) + "notebook-busy");
  EXPECT_NE(ConditionField(busy, "Suspended", "status"), "True") << busy.dump();
  EXPECT_NE(ConditionField(busy, "Evicted", "status"), "True");
  // The busy one is idle since its kernels' last activity, as its status says.
  const json busy_nb = WaitFor(std::string(kNotebooks) + "busy", [&](const json& n) {
    return n.value("status", json::object()).value("idleSince", "") == just_now;
  });
  EXPECT_EQ(busy_nb["status"]["lastActivity"], just_now);

  // The quiet one: Suspended with the reclaimer's reason; opened (resume-from
  // its suspension) it is queued again.
  StopPod("notebook-quiet-notebook-0");
  const json suspended = WaitFor(std::string(kNotebooks) + "quiet", [](const json& n) {
    return Phase(n) == "Suspended" && n["status"].contains("suspendedAt");
  });
  EXPECT_NE(suspended["status"]["message"].get<std::string>().find("kernels quiet"), std::string::npos);
  ASSERT_EQ(Code("PATCH", std::string(kNotebooks) + "quiet",
                   {{"metadata", {{"annotations", {{"tessera.dev/resume-from", suspended["status"]["suspendedAt"]}}}}}}),
            200);
  WaitForPod("notebook-quiet-notebook-0");
  const json wl = WaitFor(std::string(kWorkloads) + "notebook-quiet",
                          [](const json& w) { return ConditionField(w, "Suspended", "reason") == "Resumed"; });
  EXPECT_NE(wl["spec"]["active"], false);
}

// Its status keeps its GPUs' use a minute at a time for the last hour (the
// portal's sparkline, `get notebooks -o wide`'s GPU-USE(1H)).
TEST_F(NotebookTest, ItsStatusKeepsItsGpuUseOverTheLastHour) {
  SampleGpus(40);
  Create(Notebook("nb", {{"gpu", 1}}));
  RunPod("notebook-nb-notebook-0");
  const json nb = WaitFor(std::string(kNotebooks) + "nb", [](const json& n) {
    const json history = n.value("status", json::object()).value("gpuUtilization", json::object()).value("history", json::array());
    return !history.empty() && history.back().value("percent", -1) == 40;
  });
  const json& use = nb["status"]["gpuUtilization"];
  EXPECT_EQ(use["window"], "1h");
  EXPECT_EQ(use["averagePercent"], 40) << use.dump();
  ASSERT_EQ(use["history"].size(), 1u) << use.dump();
  // Its sample is of this minute, and this minute has one.
  auto at = ParseRfc3339(use["history"][0].value("time", ""));
  ASSERT_TRUE(at.has_value()) << use.dump();
  EXPECT_EQ(at->ms % 60000, 0);
  EXPECT_LT((SystemNow() - *at).ms, 120000);
}

TEST_F(NotebookTest, AHomeVolumeBeyondTheNamespaceQuotaWaitsWithKubernetesWords) {
  Create({{"apiVersion", "v1"}, {"kind", "ResourceQuota"}, {"metadata", {{"name", "storage"}, {"namespace", "team"}}},
          {"spec", {{"hard", {{"requests.storage", "2Gi"}}}}}});
  Create(Notebook("big", {{"home", {{"size", "5Gi"}}}}));
  const json nb = WaitFor(std::string(kNotebooks) + "big", [](const json& n) { return n.contains("status"); });
  EXPECT_EQ(Phase(nb), "Pending");
  EXPECT_NE(nb["status"]["message"].get<std::string>().find(
                "its home volume big-home cannot be made: exceeded quota: storage, requested: requests.storage=5Gi"),
            std::string::npos)
      << nb["status"].dump();
  EXPECT_EQ(Code("GET", std::string(kClaims) + "big-home"), 404);
  EXPECT_EQ(Code("GET", std::string(kWorkloads) + "notebook-big"), 404);
}

TEST_F(NotebookTest, ABadNotebookIsRefusedWithItsFieldPathAndNothingIsStored) {
  const std::string collection = "/apis/tessera.dev/v1/namespaces/team/notebooks";
  struct Case {
    json spec;
    std::string error;
  };
  const Case cases[] = {
      {{{"gpus", "0.25"}}, R"(spec.gpus: unknown field; did you mean \"gpu\"?)"},
      {{{"gpu", "0.3x"}}, "spec.gpu"},
      {{{"gpu", "0.25"}, {"gpuMemory", "20Gi"}}, "spec.gpuMemory: set gpu"},
      {{{"idle", {{"timeout", "soon"}}}}, R"(spec.idle.timeout: \"soon\" is not a duration)"},
      {{{"home", {{"mountPath", "/home/me"}}}}, "spec.home.size"},
      {{{"home", {{"size", "10Gi"}, {"mountPath", "home"}}}}, "spec.home.mountPath"},
  };
  for (const Case& c : cases) {
    auto r = client_->Request("POST", collection, Notebook("bad", c.spec).dump());
    ASSERT_TRUE(r.has_value());
    EXPECT_EQ(r->status, 422) << c.spec.dump() << " " << r->body;
    EXPECT_NE(r->body.find(c.error), std::string::npos) << c.error << "\n" << r->body;
  }
  EXPECT_EQ(Code("GET", std::string(kNotebooks) + "bad"), 404);
  EXPECT_EQ(Code("GET", std::string(kClaims) + "bad-home"), 404);
}

}  // namespace
}  // namespace tessera
