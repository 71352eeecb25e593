// The printer columns of the kinds (api/printer_columns.h) and the times they
// print (api/age.h), as kubectl prints them, without a server.
#include "api/printer_columns.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "api/age.h"
#include "api/kinds.h"

namespace tessera {
namespace {

using nlohmann::json;

constexpr int64_t kMinute = 60, kHour = 3600, kDay = 86400;

// AGE as kubectl prints it: exact seconds below 2 minutes, then two units at most.
TEST(HumanDurationTest, MatchesKubectl) {
  EXPECT_EQ(HumanDuration(0), "0s");
  EXPECT_EQ(HumanDuration(-1), "0s");  // a second of clock skew
  EXPECT_EQ(HumanDuration(-2), "<invalid>");
  EXPECT_EQ(HumanDuration(5), "5s");
  EXPECT_EQ(HumanDuration(119), "119s");
  EXPECT_EQ(HumanDuration(2 * kMinute), "2m");
  EXPECT_EQ(HumanDuration(2 * kMinute + 30), "2m30s");
  EXPECT_EQ(HumanDuration(10 * kMinute + 30), "10m");  // seconds dropped from 10 minutes
  EXPECT_EQ(HumanDuration(179 * kMinute), "179m");
  EXPECT_EQ(HumanDuration(3 * kHour), "3h");
  EXPECT_EQ(HumanDuration(3 * kHour + 20 * kMinute), "3h20m");
  EXPECT_EQ(HumanDuration(8 * kHour + 20 * kMinute), "8h");
  EXPECT_EQ(HumanDuration(47 * kHour), "47h");
  EXPECT_EQ(HumanDuration(2 * kDay), "2d");
  EXPECT_EQ(HumanDuration(4 * kDay + 5 * kHour), "4d5h");
  EXPECT_EQ(HumanDuration(30 * kDay + 5 * kHour), "30d");
  EXPECT_EQ(HumanDuration(730 * kDay), "2y");
  EXPECT_EQ(HumanDuration(3 * 365 * kDay + 120 * kDay), "3y120d");
  EXPECT_EQ(HumanDuration(9 * 365 * kDay + 100 * kDay), "9y");
}

// AGE from a creationTimestamp; a missing or malformed one is "<unknown>".
TEST(HumanDurationTest, AgeSinceTimestamp) {
  const int64_t t = *ParseTimeSeconds("2026-01-01T00:00:00Z");
  EXPECT_EQ(AgeSince("2026-01-01T00:00:00Z", t + 3 * kMinute), "3m");
  EXPECT_EQ(AgeSince("2026-01-01T01:00:00+01:00", t + 5), "5s");  // the same instant with an offset
  EXPECT_EQ(AgeSince("yesterday", t), "<unknown>");
  EXPECT_EQ(AgeSince(json(), t), "<unknown>");
}

// Why a workload waits: QuotaReserved's message first, nothing once admitted.
TEST(ColumnsTest, PendingMessage) {
  json wl = json::parse(R"({"status": {"conditions": [
      {"type": "QuotaReserved", "status": "False", "message": "needs 4 GPUs, 2 free"},
      {"type": "Admitted", "status": "False", "message": "waiting for quota"}]}})");
  EXPECT_EQ(PendingMessage(wl), "needs 4 GPUs, 2 free");
  wl["status"]["conditions"][0]["status"] = "True";
  EXPECT_EQ(PendingMessage(wl), "waiting for quota");
  wl["status"]["conditions"][1]["status"] = "True";
  EXPECT_EQ(PendingMessage(wl), "");
}

// Node rows: readiness, GPUs, model; pods: phase and node.
TEST(ColumnsTest, NodeAndPodRows) {
  const KindInfo* node_kind = FindKindByCliName("nodes");
  json node = json::parse(R"({"metadata": {"name": "n1", "labels": {"nvidia.com/gpu.product": "A100-80GB"}},
      "spec": {"unschedulable": true},
      "status": {"allocatable": {"nvidia.com/gpu": "8"}, "conditions": [{"type": "Ready", "status": "True"}]}})");
  EXPECT_EQ(TableHeaders(*node_kind, {}), (std::vector<std::string>{"NAME", "STATUS", "GPUS", "GPU MODEL", "AGE"}));
  EXPECT_EQ(TableRow(*node_kind, node, {}),
            (std::vector<std::string>{"n1", "Ready,SchedulingDisabled", "8", "A100-80GB", "<unknown>"}));
  const KindInfo* pod_kind = FindKindByCliName("po");
  json pod = json::parse(R"({"metadata": {"name": "p", "namespace": "ns"}, "spec": {"nodeName": "n1",
      "containers": [{"name": "c", "resources": {"requests": {"nvidia.com/gpu": "250m"}}}]},
      "status": {"phase": "Running", "podIP": "10.244.1.7"}})");
  EXPECT_EQ(TableRow(*pod_kind, pod, {.wide = true, .with_namespace = true}),
            (std::vector<std::string>{"ns", "p", "0/1", "Running", "0", "<unknown>", "10.244.1.7", "n1", "0.25",
                                      "<none>"}));
  EXPECT_EQ(TableRow(*pod_kind, pod, {}), (std::vector<std::string>{"p", "0/1", "Running", "0", "<unknown>", "n1"}))
      << "IP only with -o wide, as kubectl";
}

// Services as kubectl prints them: TYPE, CLUSTER-IP, EXTERNAL-IP <none>, PORT(S)
// "port/protocol" joined by commas; -o wide adds SELECTOR.
TEST(ColumnsTest, ServiceRows) {
  const KindInfo* svc = FindKindByCliName("svc");
  ASSERT_NE(svc, nullptr);
  json web = json::parse(R"({"metadata": {"name": "web"}, "spec": {"type": "ClusterIP", "clusterIP": "10.96.1.1",
      "selector": {"app": "web"}, "ports": [{"port": 80, "protocol": "TCP"}, {"port": 53, "protocol": "UDP"}]}})");
  EXPECT_EQ(TableHeaders(*svc, {}),
            (std::vector<std::string>{"NAME", "TYPE", "CLUSTER-IP", "EXTERNAL-IP", "PORT(S)", "AGE"}));
  EXPECT_EQ(TableRow(*svc, web, {}),
            (std::vector<std::string>{"web", "ClusterIP", "10.96.1.1", "<none>", "80/TCP,53/UDP", "<unknown>"}));
  EXPECT_EQ(TableRow(*svc, web, {.wide = true}).back(), "app=web");
  json headless = json::parse(R"({"metadata": {"name": "peers"}, "spec": {"clusterIP": "None"}})");
  EXPECT_EQ(TableRow(*svc, headless, {.wide = true}),
            (std::vector<std::string>{"peers", "ClusterIP", "None", "<none>", "<none>", "<unknown>", "<none>"}));
}

// EndpointSlices as kubectl prints them: the first three ports and addresses, then "+ N more...".
TEST(ColumnsTest, EndpointSliceRows) {
  const KindInfo* slices = FindKindByCliName("endpointslices");
  ASSERT_NE(slices, nullptr);
  json slice = json::parse(R"({"metadata": {"name": "web-bcdfg"}, "addressType": "IPv4",
      "ports": [{"name": "http", "port": 8080, "protocol": "TCP"}],
      "endpoints": [{"addresses": ["10.244.0.5"]}, {"addresses": ["10.244.0.6"]}, {"addresses": ["10.244.1.2"]},
                    {"addresses": ["10.244.1.3"]}]})");
  EXPECT_EQ(TableHeaders(*slices, {}), (std::vector<std::string>{"NAME", "ADDRESSTYPE", "PORTS", "ENDPOINTS", "AGE"}));
  EXPECT_EQ(TableRow(*slices, slice, {}),
            (std::vector<std::string>{"web-bcdfg", "IPv4", "8080", "10.244.0.5,10.244.0.6,10.244.1.2 + 1 more...",
                                      "<unknown>"}));
  json empty = json::parse(R"({"metadata": {"name": "e"}, "addressType": "IPv4"})");
  EXPECT_EQ(TableRow(*slices, empty, {}), (std::vector<std::string>{"e", "IPv4", "<unset>", "<unset>", "<unknown>"}));
}

// STATUS of a pod, as kubectl shows it.
TEST(PodStatusColumnTest, ShowsTerminatingThenTheContainerReasonThenThePhase) {
  const KindInfo& pods = *FindKindByApiVersion("v1", "Pod");
  const auto status = [&](const nlohmann::json& pod) { return TableRow(pods, pod, ColumnOptions{})[2]; };
  nlohmann::json pod{{"metadata", {{"name", "p"}}}, {"status", {{"phase", "Succeeded"}}}};
  EXPECT_EQ(status(pod), "Succeeded");
  pod["status"]["containerStatuses"] = {{{"state", {{"terminated", {{"reason", "Completed"}, {"exitCode", 0}}}}}}};
  EXPECT_EQ(status(pod), "Completed");
  pod["status"]["containerStatuses"][0]["state"] = {{"waiting", {{"reason", "CrashLoopBackOff"}}}};
  EXPECT_EQ(status(pod), "CrashLoopBackOff");
  pod["metadata"]["deletionTimestamp"] = "2026-11-29T20:00:00Z";
  EXPECT_EQ(status(pod), "Terminating");
  EXPECT_EQ(status(nlohmann::json{{"metadata", {{"name", "q"}}}}), "Pending");
}

}  // namespace
}  // namespace tessera
