// The what-if over the platform's own history (sim/history_trace.h,
// sim/what_if.h): stored UsageRecords and Workloads become a trace, which the
// production core replays on the current cluster and policy and on changed
// ones; bad specs are refused at the field.
#include "sim/what_if.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "common/time_format.h"
#include "sim/history_trace.h"

namespace tessera {
namespace {

using nlohmann::json;
using ::testing::HasSubstr;

const Timestamp kT0 = *ParseRfc3339("2026-12-01T08:00:00Z");

std::string At(int64_t seconds_after_t0) { return FormatRfc3339(Timestamp::FromMillis(kT0.ms + seconds_after_t0 * 1000)); }

json NodeJson(const std::string& name, int gpus) {
  json devices = json::array();
  for (int i = 0; i < gpus; ++i) {
    devices.push_back({{"index", i}, {"uuid", name + "-gpu" + std::to_string(i)}, {"model", "H100-80GB"},
                       {"memoryBytes", int64_t{80} << 30}, {"nvlinkDomain", 0}});
  }
  const json capacity{{"cpu", "64"}, {"memory", "512Gi"}, {"nvidia.com/gpu", std::to_string(gpus)}, {"pods", "110"}};
  return {{"apiVersion", "v1"},
          {"kind", "Node"},
          {"metadata",
           {{"name", name},
            {"labels", {{"nvidia.com/gpu.product", "H100-80GB"}}},
            {"annotations", {{"tessera.dev/gpus", devices.dump()}}}}},
          {"status", {{"capacity", capacity}, {"allocatable", capacity}}}};
}

// One flavor, one ClusterQueue with `nominal_gpus`, LocalQueue q in team-a and team-b.
std::vector<json> Policy(int nominal_gpus) {
  return {
      json{{"apiVersion", "kueue.x-k8s.io/v1beta1"},
           {"kind", "ResourceFlavor"},
           {"metadata", {{"name", "h100"}, {"resourceVersion", "7"}, {"uid", "rf-1"}}},
           {"spec", {{"nodeLabels", {{"nvidia.com/gpu.product", "H100-80GB"}}}}},
           {"status", json::object()}},
      json{{"apiVersion", "kueue.x-k8s.io/v1beta1"},
           {"kind", "ClusterQueue"},
           {"metadata", {{"name", "gpus"}}},
           {"spec",
            {{"namespaceSelector", json::object()},
             {"resourceGroups",
              {{{"coveredResources", {"cpu", "memory", "nvidia.com/gpu"}},
                {"flavors",
                 {{{"name", "h100"},
                   {"resources",
                    {{{"name", "cpu"}, {"nominalQuota", "1000"}},
                     {{"name", "memory"}, {"nominalQuota", "10Ti"}},
                     {{"name", "nvidia.com/gpu"}, {"nominalQuota", std::to_string(nominal_gpus)}}}}}}}}}}}},
           {"status", {{"pendingWorkloads", 3}}}},
      json{{"apiVersion", "kueue.x-k8s.io/v1beta1"},
           {"kind", "LocalQueue"},
           {"metadata", {{"name", "q"}, {"namespace", "team-a"}}},
           {"spec", {{"clusterQueue", "gpus"}}}},
      json{{"apiVersion", "kueue.x-k8s.io/v1beta1"},
           {"kind", "LocalQueue"},
           {"metadata", {{"name", "q"}, {"namespace", "team-b"}}},
           {"spec", {{"clusterQueue", "gpus"}}}},
  };
}

// A finished admission of `workload` (uid = its name) from `start` to `end`, seconds after kT0.
json Record(const std::string& ns, const std::string& workload, int64_t gpu_milli, int64_t start, int64_t end,
            int pods = 1) {
  json spec{{"workload", workload}, {"workloadUID", "uid-" + workload}, {"clusterQueue", "gpus"},
            {"gpuMilli", gpu_milli}, {"user", "alice"}, {"queue", "q"}, {"pods", pods}, {"start", At(start)}};
  if (end >= 0) spec["end"] = At(end);
  return {{"apiVersion", "tessera.dev/v1"},
          {"kind", "UsageRecord"},
          {"metadata", {{"name", workload + "-" + std::to_string(start)}, {"namespace", ns}}},
          {"spec", std::move(spec)}};
}

json WorkloadJson(const std::string& ns, const std::string& name, int64_t created, int count, const std::string& gpus) {
  const json container{{"name", "main"},
                       {"image", "busybox"},
                       {"resources", {{"requests", {{"cpu", "4"}, {"memory", "16Gi"}, {"nvidia.com/gpu", gpus}}}}}};
  return {{"apiVersion", "kueue.x-k8s.io/v1beta1"},
          {"kind", "Workload"},
          {"metadata", {{"name", name}, {"namespace", ns}, {"uid", "uid-" + name}, {"creationTimestamp", At(created)}}},
          {"spec",
           {{"queueName", "q"},
            {"podSets", {{{"name", "main"}, {"count", count}, {"template", {{"spec", {{"containers", {container}}}}}}}}}}}};
}

TEST(HistoryTraceTest, AWorkloadsAdmissionsBecomeOneJobSubmittedWhenItWasCreated) {
  const std::vector<json> records = {Record("team-a", "train", 16000, 100, 1900, 2),
                                     Record("team-a", "train", 16000, 2000, 5600, 2)};  // preempted once
  const std::vector<json> workloads = {WorkloadJson("team-a", "train", 40, 2, "8"),
                                       WorkloadJson("team-a", "waiting", 50, 1, "1")};
  const HistoryTrace t = TraceFromHistory(records, workloads, kT0, Timestamp::FromMillis(kT0.ms + 86400000),
                                          Timestamp::FromMillis(kT0.ms + 86400000));
  ASSERT_EQ(t.jobs.size(), 1u);
  const TraceJob& j = t.jobs[0];
  EXPECT_EQ(j.name, "team-a/train");
  EXPECT_EQ(j.team, "team-a");
  EXPECT_EQ(j.queue, "q");
  EXPECT_EQ(j.user, "alice");
  EXPECT_EQ(j.submit_s, 0);
  EXPECT_EQ(t.origin, Timestamp::FromMillis(kT0.ms + 40000));
  EXPECT_EQ(j.duration_s, 1800 + 3600);  // both admissions: the devices were held
  EXPECT_EQ(j.pods, 2);
  EXPECT_EQ(j.gpu_milli, 8000);
  EXPECT_EQ(j.cpu_milli, 4000);
  EXPECT_EQ(j.memory_bytes, int64_t{16} << 30);
  EXPECT_EQ(t.never_ran, 1);  // "waiting": no admission, so no run time
  ASSERT_EQ(t.observed.size(), 1u);
  EXPECT_EQ(t.observed[0].first_start, Timestamp::FromMillis(kT0.ms + 100000));
  EXPECT_EQ(t.observed[0].last_end, Timestamp::FromMillis(kT0.ms + 5600000));
}

TEST(HistoryTraceTest, RecordsOutliveTheirWorkloadsAndTheWindowSelectsBySubmission) {
  json gone = Record("team-b", "old", 250, 7200, 9000);
  gone["spec"]["submitted"] = At(7000);
  json running = Record("team-b", "live", 2000, 8000, -1);
  const std::vector<json> records = {Record("team-a", "before", 1000, 0, 100), gone, running};
  const Timestamp now = Timestamp::FromMillis(kT0.ms + 10000 * 1000);
  const HistoryTrace t = TraceFromHistory(records, {}, Timestamp::FromMillis(kT0.ms + 3600000), now, now);
  ASSERT_EQ(t.jobs.size(), 2u);
  EXPECT_EQ(t.jobs[0].name, "team-b/old");
  EXPECT_EQ(t.jobs[0].gpu_milli, 250);  // a fraction on one pod
  EXPECT_EQ(t.jobs[0].duration_s, 1800);
  EXPECT_EQ(t.origin, Timestamp::FromMillis(kT0.ms + 7000000));
  EXPECT_EQ(t.jobs[1].name, "team-b/live");
  EXPECT_EQ(t.jobs[1].submit_s, 1000);
  EXPECT_EQ(t.jobs[1].duration_s, 2000);  // so far
  EXPECT_EQ(t.still_running, 1);
  EXPECT_TRUE(t.observed[1].last_end.never());
}

TEST(HistoryTraceTest, AFractionOnEachOfSeveralPodsIsReplayedAsWholeGpus) {
  const std::vector<json> records = {Record("team-a", "w", 1500, 0, 60, 3)};
  const HistoryTrace t = TraceFromHistory(records, {}, kT0,
                                          Timestamp::FromMillis(kT0.ms + 3600000), Timestamp::FromMillis(kT0.ms + 3600000));
  ASSERT_EQ(t.jobs.size(), 1u);
  EXPECT_EQ(t.jobs[0].pods, 3);
  EXPECT_EQ(t.jobs[0].gpu_milli, 1000);
  EXPECT_EQ(t.reshaped, 1);
}

// Four 8-GPU jobs of an hour each, all at once, on one 8-GPU node with quota for 8.
WhatIfInputs Busy() {
  WhatIfInputs in;
  in.nodes = {NodeJson("gpu-1", 8)};
  in.policy = Policy(8);
  for (int i = 0; i < 4; ++i) {
    const std::string name = "job-" + std::to_string(i);
    in.workloads.push_back(WorkloadJson(i % 2 == 0 ? "team-a" : "team-b", name, 0, 1, "8"));
    in.usage_records.push_back(Record(i % 2 == 0 ? "team-a" : "team-b", name, 8000, i * 3600, (i + 1) * 3600));
  }
  in.now = Timestamp::FromMillis(kT0.ms + 5 * 3600 * 1000);
  return in;
}

TEST(WhatIfTest, MoreNodesAndQuotaEndTheWaitThatTheCurrentClusterReplays) {
  json more_quota = Policy(32)[1];
  const json spec{{"since", "1d"},
                  {"scenarios", {{{"name", "four-nodes"}, {"addNodes", "3x8xH100-80GB"}, {"policy", {more_quota}}}}}};
  auto st = RunWhatIf(spec, Busy());
  ASSERT_TRUE(st.has_value()) << st.error().ToString();
  EXPECT_EQ((*st)["jobs"], 4);
  EXPECT_EQ((*st)["origin"], At(0));
  const json& results = (*st)["results"];
  ASSERT_EQ(results.size(), 2u);
  EXPECT_EQ(results[0]["name"], "current");
  EXPECT_EQ(results[0]["nodes"], 1);
  EXPECT_EQ(results[0]["gpuMilli"], 8000);
  // One at a time: they wait 0, 1, 2 and 3 hours, as they really did.
  EXPECT_EQ(results[0]["summary"]["queueingSeconds"]["mean"], 5400.0);
  EXPECT_EQ(results[0]["summary"]["makespanSeconds"], 4 * 3600);
  EXPECT_EQ((*st)["observed"]["queueingSeconds"]["mean"], 5400.0);
  EXPECT_EQ(results[1]["name"], "four-nodes");
  EXPECT_EQ(results[1]["nodes"], 4);
  EXPECT_EQ(results[1]["gpuMilli"], 32000);
  EXPECT_EQ(results[1]["summary"]["queueingSeconds"]["mean"], 0.0);
  EXPECT_EQ(results[1]["summary"]["makespanSeconds"], 3600);
  // The series: 8 GPUs held for four hours, then none; 32 for one hour.
  const json& series = results[0]["series"];
  EXPECT_EQ(series["t"].front(), 0);
  EXPECT_EQ(series["allocatedGpuMilli"].front(), 8000);
  EXPECT_EQ(series["allocatedGpuMilli"].back(), 0);
  EXPECT_EQ(results[1]["series"]["allocatedGpuMilli"].front(), 32000);
  EXPECT_EQ((*st)["observed"]["series"]["allocatedGpuMilli"].front(), 8000);
  ASSERT_EQ(results[0]["teams"].size(), 2u);
  EXPECT_EQ(results[0]["teams"][0]["name"], "team-a");
}

TEST(WhatIfTest, QuotaAloneIsNotEnoughWithoutTheNodes) {
  const json spec{{"since", At(0)}, {"scenarios", {{{"name", "quota"}, {"policy", {Policy(32)[1]}}}}}};
  auto st = RunWhatIf(spec, Busy());
  ASSERT_TRUE(st.has_value()) << st.error().ToString();
  EXPECT_EQ((*st)["results"][1]["summary"]["queueingSeconds"]["mean"], 5400.0);
}

TEST(WhatIfTest, ReplacingTheFleetAndRemovingNodes) {
  WhatIfInputs in = Busy();
  in.nodes.push_back(NodeJson("gpu-2", 8));
  in.policy = Policy(16);
  const json spec{{"since", "1d"},
                  {"scenarios",
                   {{{"name", "one-less"}, {"removeNodes", {"gpu-2"}}},
                    {{"name", "small"}, {"cluster", "2x4xH100-80GB"}}}}};
  auto st = RunWhatIf(spec, in);
  ASSERT_TRUE(st.has_value()) << st.error().ToString();
  const json& results = (*st)["results"];
  ASSERT_EQ(results.size(), 3u);
  EXPECT_EQ(results[0]["summary"]["queueingSeconds"]["mean"], 1800.0);  // two at a time
  EXPECT_EQ(results[1]["nodes"], 1);
  EXPECT_EQ(results[1]["summary"]["queueingSeconds"]["mean"], 5400.0);
  EXPECT_EQ(results[2]["nodes"], 2);
  // An 8-GPU pod fits no 4-GPU node: nothing finishes.
  EXPECT_EQ(results[2]["summary"]["finished"], 0);
}

// A ClusterQueue that takes only labelled namespaces, as the quickstart's do: the
// Namespace objects' labels count, as on the server.
TEST(WhatIfTest, AQueuesNamespaceSelectorMatchesTheNamespacesLabels) {
  WhatIfInputs in = Busy();
  in.policy[1]["spec"]["namespaceSelector"] = {{"matchLabels", {{"tessera.dev/team", "research"}}}};
  for (const char* ns : {"team-a", "team-b"}) {
    in.policy.push_back({{"apiVersion", "v1"},
                         {"kind", "Namespace"},
                         {"metadata", {{"name", ns}, {"labels", {{"tessera.dev/team", "research"}}}, {"uid", ns}}},
                         {"status", {{"phase", "Active"}}}});
  }
  auto st = RunWhatIf(json{{"since", "1d"}}, in);
  ASSERT_TRUE(st.has_value()) << st.error().ToString();
  EXPECT_EQ((*st)["results"][0]["summary"]["finished"], 4) << (*st)["results"][0].dump();
  in.policy.pop_back();  // team-b's Namespace gone: its jobs match no queue's selector
  st = RunWhatIf(json{{"since", "1d"}}, in);
  ASSERT_TRUE(st.has_value()) << st.error().ToString();
  EXPECT_EQ((*st)["results"][0]["summary"]["finished"], 2);
}

// Each job goes to its own LocalQueue; one whose queue is gone, to its team's.
TEST(WhatIfTest, JobsGoToTheirNamedQueueElseTheirTeams) {
  WhatIfInputs in = Busy();
  json other = Policy(8)[1];
  other["metadata"]["name"] = "other";
  in.policy.push_back(other);
  in.policy.push_back({{"apiVersion", "kueue.x-k8s.io/v1beta1"},
                       {"kind", "LocalQueue"},
                       {"metadata", {{"name", "a"}, {"namespace", "team-a"}}},  // sorts before q
                       {"spec", {{"clusterQueue", "other"}}}});
  in.nodes.push_back(NodeJson("gpu-2", 8));
  auto st = RunWhatIf(json{{"since", "1d"}}, in);  // all name q, which team-a still has
  ASSERT_TRUE(st.has_value()) << st.error().ToString();
  EXPECT_EQ((*st)["results"][0]["summary"]["queueingSeconds"]["mean"], 5400.0);  // all four in ClusterQueue gpus
  for (json& w : in.workloads) w["spec"]["queueName"] = "gone";
  for (json& r : in.usage_records) r["spec"]["queue"] = "gone";
  st = RunWhatIf(json{{"since", "1d"}}, in);
  ASSERT_TRUE(st.has_value()) << st.error().ToString();
  // team-a's to its first queue (a: ClusterQueue other), team-b's to q: two at a time.
  EXPECT_EQ((*st)["results"][0]["summary"]["queueingSeconds"]["mean"], 1800.0);
}

TEST(WhatIfTest, AnEmptyPeriodIsAnEmptyAnswer) {
  WhatIfInputs in = Busy();
  in.usage_records.clear();
  in.workloads.clear();
  auto st = RunWhatIf(json{{"since", "1h"}}, in);
  ASSERT_TRUE(st.has_value()) << st.error().ToString();
  EXPECT_EQ((*st)["jobs"], 0);
  EXPECT_EQ((*st)["results"][0]["summary"]["jobs"], 0);
}

TEST(WhatIfTest, TheWarningsSayWhatWasLeftOutOrApproximated) {
  WhatIfInputs in = Busy();
  in.workloads.push_back(WorkloadJson("team-a", "never", 60, 1, "1"));
  in.usage_records.push_back(Record("team-a", "live", 1000, 100, -1));
  auto st = RunWhatIf(json{{"since", "1d"}}, in);
  ASSERT_TRUE(st.has_value()) << st.error().ToString();
  EXPECT_EQ((*st)["neverRan"], 1);
  EXPECT_EQ((*st)["stillRunning"], 1);
  const std::string w = (*st)["warnings"].dump();
  EXPECT_THAT(w, HasSubstr("1 workloads submitted in the period never ran"));
  EXPECT_THAT(w, HasSubstr("1 jobs still run"));
}

TEST(WhatIfTest, ALongPeriodIsThinnedToAFewHundredPointsKeepingPeaks) {
  WhatIfInputs in = Busy();
  in.usage_records.clear();
  in.workloads.clear();
  for (int i = 0; i < 3000; ++i) {  // a minute's job every two minutes, one of them on 8 GPUs
    in.usage_records.push_back(Record("team-a", "w" + std::to_string(i), i == 1234 ? 8000 : 1000, i * 120, i * 120 + 60));
  }
  in.now = Timestamp::FromMillis(kT0.ms + 3000 * 120 * 1000);
  auto st = RunWhatIf(json{{"since", "10d"}}, in);
  ASSERT_TRUE(st.has_value()) << st.error().ToString();
  const json& series = (*st)["results"][0]["series"];
  EXPECT_LE(series["t"].size(), kWhatIfSeriesPoints + 1);
  EXPECT_GE(series["t"].size(), kWhatIfSeriesPoints / 2);
  int64_t peak = 0;
  for (const json& v : series["allocatedGpuMilli"]) peak = std::max(peak, v.get<int64_t>());
  EXPECT_EQ(peak, 8000);
}

Status Refused(const json& spec, WhatIfInputs in = Busy()) {
  auto st = RunWhatIf(spec, in);
  EXPECT_FALSE(st.has_value()) << spec.dump();
  return st.has_value() ? Status::Ok() : st.error();
}

std::string FirstField(const Status& s) { return s.causes().empty() ? "" : s.causes()[0].field; }

TEST(WhatIfTest, BadSpecsAreRefusedAtTheField) {
  Status s = Refused(json{{"since", "last tuesday"}});
  EXPECT_EQ(FirstField(s), "spec.since");
  EXPECT_THAT(s.message(), HasSubstr("like 7d or 12h"));

  s = Refused(json{{"since", "1h"}, {"until", "2d"}});
  EXPECT_EQ(FirstField(s), "spec.since");
  EXPECT_THAT(s.message(), HasSubstr("must begin before it ends"));

  s = Refused(json{{"since", "1d"}, {"scenarios", {{{"name", "current"}}}}});
  EXPECT_EQ(FirstField(s), "spec.scenarios[0].name");

  s = Refused(json{{"since", "1d"}, {"scenarios", {{{"name", "a"}, {"addNodes", "two big ones"}}}}});
  EXPECT_EQ(FirstField(s), "spec.scenarios[0].addNodes");
  EXPECT_THAT(s.message(), HasSubstr("is not NODESxGPUSxMODEL"));

  s = Refused(json{{"since", "1d"}, {"scenarios", {{{"name", "a"}, {"removeNodes", {"gpu-9"}}}}}});
  EXPECT_EQ(FirstField(s), "spec.scenarios[0].removeNodes");
  EXPECT_THAT(s.message(), HasSubstr("\"gpu-9\": no such node"));

  s = Refused(json{{"since", "1d"}, {"scenarios", {{{"name", "a"}, {"removeNodes", {"gpu-1"}}}}}});
  EXPECT_EQ(FirstField(s), "spec.scenarios[0]");
  EXPECT_THAT(s.message(), HasSubstr("leaves no node"));

  const json pod{{"apiVersion", "v1"}, {"kind", "Pod"}, {"metadata", {{"name", "p"}}},
                 {"spec", {{"containers", {{{"name", "c"}, {"image", "busybox"}}}}}}};
  s = Refused(json{{"since", "1d"}, {"scenarios", {{{"name", "a"}, {"policy", {pod}}}}}});
  EXPECT_EQ(FirstField(s), "spec.scenarios[0].policy[0].kind");

  json bad_cq = Policy(8)[1];
  bad_cq["spec"]["resourceGroups"][0]["flavors"][0]["resources"][2]["nominalQuota"] = "lots";
  s = Refused(json{{"since", "1d"}, {"scenarios", {{{"name", "a"}, {"policy", {bad_cq}}}}}});
  EXPECT_THAT(FirstField(s), HasSubstr("spec.scenarios[0].policy[0].spec.resourceGroups[0]"));

  json orphan{{"apiVersion", "kueue.x-k8s.io/v1beta1"},
              {"kind", "LocalQueue"},
              {"metadata", {{"name", "q2"}, {"namespace", "team-a"}}},
              {"spec", {{"clusterQueue", "nowhere"}}}};
  s = Refused(json{{"since", "1d"}, {"scenarios", {{{"name", "a"}, {"policy", {orphan}}}}}});
  EXPECT_EQ(FirstField(s), "spec.scenarios[0].policy");
  EXPECT_THAT(s.message(), HasSubstr("ClusterQueue \"nowhere\" is not in the policy"));
}

}  // namespace
}  // namespace tessera
