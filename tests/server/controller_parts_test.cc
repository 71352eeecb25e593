// The controllers' building blocks against a real SQLite store: the ObjectCache
// (an informer over the event log), the BatchedWriter and the EventRecorder.
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>

#include "server/batched_writer.h"
#include "server/controllers/claim_reclaimer.h"
#include "server/event_recorder.h"
#include "server/controllers/job_controller.h"
#include "server/object_cache.h"
#include "server/object_json.h"
#include "server/workload_subsets.h"
#include "tests/testing/fresh_store.h"

namespace tessera {
namespace {

using nlohmann::json;

json Pod(const std::string& name, const std::string& note = "") {
  return json{{"apiVersion", "v1"}, {"kind", "Pod"}, {"metadata", {{"name", name}, {"namespace", "default"}, {"annotations", {{"note", note}}}}}};
}
ObjectKey PodKey(const std::string& name) { return ObjectKey{"/Pod", "default", name}; }

using ControllerPartsTest = testing::FreshStoreTest;

TEST_F(ControllerPartsTest, CacheHoldsOnlyItsKindsAndFollowsEveryWrite) {
  ASSERT_TRUE(store_->Create(PodKey("a"), Pod("a")).has_value());
  ASSERT_TRUE(store_->Create(ObjectKey{"/Namespace", "", "team"}, json{{"metadata", {{"name", "team"}}}}).has_value());
  ObjectCache cache(*store_, {"/Pod"});
  ASSERT_TRUE(cache.Sync().ok());
  EXPECT_EQ(cache.Of("/Pod").size(), 1u);
  EXPECT_EQ(cache.Find(ObjectKey{"/Namespace", "", "team"}), nullptr);

  ASSERT_TRUE(store_->Create(PodKey("b"), Pod("b")).has_value());
  ASSERT_TRUE(store_->Update(PodKey("a"), Pod("a", "changed"), 0).has_value());
  ASSERT_TRUE(store_->Delete(PodKey("b"), 0).has_value());
  ASSERT_TRUE(store_->Create(PodKey("c"), Pod("c")).has_value());
  ASSERT_TRUE(cache.Sync().ok());
  EXPECT_EQ(cache.revision(), store_->Revision());
  ASSERT_EQ(cache.Of("/Pod").size(), 2u);
  EXPECT_EQ(cache.Find(PodKey("a"))->object["metadata"]["annotations"]["note"], "changed");
  EXPECT_EQ(cache.Find(PodKey("b")), nullptr);
  EXPECT_NE(cache.Find(PodKey("c")), nullptr);
  EXPECT_EQ(cache.relists(), 1);  // the first Sync only; the rest came from the event log
}

TEST_F(ControllerPartsTest, CacheListsAgainWhenTheEventsItNeedsWereCompacted) {
  ObjectCache cache(*store_, {"/Pod"});
  ASSERT_TRUE(store_->Create(PodKey("old"), Pod("old")).has_value());
  ASSERT_TRUE(cache.Sync().ok());
  ASSERT_TRUE(store_->Delete(PodKey("old"), 0).has_value());
  for (int i = 0; i < 20; ++i) ASSERT_TRUE(store_->Create(PodKey("p" + std::to_string(i)), Pod("x")).has_value());
  ASSERT_TRUE(store_->Compact(5).ok());
  ASSERT_TRUE(cache.Sync().ok());
  EXPECT_EQ(cache.relists(), 2);
  EXPECT_EQ(cache.Of("/Pod").size(), 20u);
  EXPECT_EQ(cache.Find(PodKey("old")), nullptr);
}

TEST_F(ControllerPartsTest, OwnWritesShowAtOnceAndLaterEventsStillWin) {
  ObjectCache cache(*store_, {"/Pod"});
  ASSERT_TRUE(cache.Sync().ok());
  auto mine = store_->Create(PodKey("a"), Pod("a", "mine"));
  ASSERT_TRUE(mine.has_value());
  cache.Put(*mine);
  ASSERT_NE(cache.Find(PodKey("a")), nullptr);
  ASSERT_TRUE(store_->Update(PodKey("a"), Pod("a", "theirs"), 0).has_value());
  ASSERT_TRUE(cache.Sync().ok());
  EXPECT_EQ(cache.Find(PodKey("a"))->object["metadata"]["annotations"]["note"], "theirs");
  cache.Put(*mine);  // stale: already covered by the event log
  EXPECT_EQ(cache.Find(PodKey("a"))->object["metadata"]["annotations"]["note"], "theirs");
}

// The Pod index as built from scratch: the cache's Pods by their workload label, in name order.
PodIndex PodIndexFromScratch(const ObjectCache& cache) {
  PodIndex index;
  for (const auto& [key, pod] : cache.Of("/Pod")) {
    index[{key.first, pod.object["metadata"]["labels"].value("tessera.dev/workload", "")}].push_back(&pod);
  }
  return index;
}

// The Pod index follows the cache's Pods as they change: events, the owner's
// own writes and relists; stale Puts and Syncs that bring nothing leave it be.
TEST_F(ControllerPartsTest, PodIndexFollowsEveryChangeOfThePods) {
  auto labelled = [](const std::string& name, const std::string& workload) {
    json pod = Pod(name);
    pod["metadata"]["labels"] = {{"tessera.dev/workload", workload}};
    return pod;
  };
  auto names = [](const PodIndex& index, const std::string& workload) {
    std::vector<std::string> out;
    auto it = index.find({"default", workload});
    if (it != index.end()) {
      for (const StoredObject* p : it->second) out.push_back(p->key.name);
    }
    return out;
  };
  ASSERT_TRUE(store_->Create(PodKey("b"), labelled("b", "w")).has_value());
  ObjectCache cache(*store_, {"/Pod"});
  ASSERT_TRUE(cache.Sync().ok());
  PodsByWorkload pods(cache);  // indexes what the cache holds already
  EXPECT_EQ(names(pods.index(), "w"), std::vector<std::string>{"b"});

  auto a = store_->Create(PodKey("a"), labelled("a", "w"));
  ASSERT_TRUE(a.has_value());
  cache.Put(*a);
  EXPECT_EQ(names(pods.index(), "w"), (std::vector<std::string>{"a", "b"}));  // in name order
  ASSERT_TRUE(cache.Sync().ok());  // a's event: already held
  cache.Put(*a);                   // stale
  EXPECT_EQ(names(pods.index(), "w"), (std::vector<std::string>{"a", "b"}));

  ASSERT_TRUE(store_->Update(PodKey("b"), labelled("b", "v"), 0).has_value());  // moved to another workload
  ASSERT_TRUE(store_->Delete(PodKey("a"), 0).has_value());
  ASSERT_TRUE(cache.Sync().ok());
  EXPECT_EQ(pods.index().count({"default", "w"}), 0u);
  EXPECT_EQ(names(pods.index(), "v"), std::vector<std::string>{"b"});
  EXPECT_EQ(pods.index().at({"default", "v"}).front(), cache.Find(PodKey("b")));

  for (int i = 0; i < 10; ++i) ASSERT_TRUE(store_->Create(PodKey("c" + std::to_string(i)), labelled("c", "u")).has_value());
  ASSERT_TRUE(store_->Delete(PodKey("b"), 0).has_value());
  ASSERT_TRUE(store_->Compact(3).ok());
  ASSERT_TRUE(cache.Sync().ok());  // lists again
  EXPECT_EQ(cache.relists(), 2);
  EXPECT_EQ(pods.index().size(), 1u);
  EXPECT_EQ(names(pods.index(), "u").size(), 10u);
  EXPECT_EQ(PodIndexFromScratch(cache), pods.index());
}

// A kind with a settled test keeps its unsettled objects apart: a pod leaves
// ActiveOf when it is marked done, comes back when it is marked otherwise, and
// a deletion or a relist keeps the set and the removals count right.
TEST_F(ControllerPartsTest, ActiveSetFollowsTheSettledTestThroughEveryChange) {
  auto done = [](const json& o) { return o["metadata"]["annotations"].value("note", "") == "done"; };
  ASSERT_TRUE(store_->Create(PodKey("a"), Pod("a")).has_value());
  ASSERT_TRUE(store_->Create(PodKey("b"), Pod("b", "done")).has_value());
  ObjectCache cache(*store_, {"/Pod", "/Namespace"}, {{"/Pod", done}});
  ASSERT_TRUE(cache.Sync().ok());
  auto active_names = [&] {
    std::vector<std::string> names;
    for (const auto& [key, object] : cache.ActiveOf("/Pod")) {
      EXPECT_EQ(object, cache.Find(PodKey(key.second)));  // points into the cache itself
      names.push_back(key.second);
    }
    return names;
  };
  EXPECT_EQ(active_names(), std::vector<std::string>{"a"});
  EXPECT_EQ(cache.Of("/Pod").size(), 2u);
  const uint64_t listed_removals = cache.removals("/Pod");

  ASSERT_TRUE(store_->Update(PodKey("a"), Pod("a", "done"), 0).has_value());
  ASSERT_TRUE(store_->Update(PodKey("b"), Pod("b", "again"), 0).has_value());
  ASSERT_TRUE(store_->Create(PodKey("c"), Pod("c")).has_value());
  ASSERT_TRUE(cache.Sync().ok());
  EXPECT_EQ(active_names(), (std::vector<std::string>{"b", "c"}));
  EXPECT_EQ(cache.removals("/Pod"), listed_removals);  // updates remove nothing

  auto mine = store_->Update(PodKey("c"), Pod("c", "done"), 0);  // the owner's own write, Put at once
  ASSERT_TRUE(mine.has_value());
  cache.Put(*mine);
  EXPECT_EQ(active_names(), std::vector<std::string>{"b"});

  ASSERT_TRUE(store_->Delete(PodKey("b"), 0).has_value());
  ASSERT_TRUE(cache.Sync().ok());
  EXPECT_TRUE(active_names().empty());
  EXPECT_EQ(cache.removals("/Pod"), listed_removals + 1);

  ASSERT_TRUE(store_->Create(PodKey("d"), Pod("d")).has_value());
  for (int i = 0; i < 10; ++i) ASSERT_TRUE(store_->Update(PodKey("a"), Pod("a", "done"), 0).has_value());
  ASSERT_TRUE(store_->Compact(3).ok());
  ASSERT_TRUE(cache.Sync().ok());  // lists again
  EXPECT_EQ(cache.relists(), 2);
  EXPECT_EQ(active_names(), std::vector<std::string>{"d"});
  EXPECT_GT(cache.removals("/Pod"), listed_removals + 1);
}

// A Job's Workload (finished or not) is deleted with its Pods once the Job is;
// the Workloads are looked through again only after a Job was removed.
TEST_F(ControllerPartsTest, WorkloadsOfADeletedJobAreDeletedWithTheirPods) {
  const json job{{"apiVersion", "batch/v1"}, {"kind", "Job"}, {"metadata", {{"name", "train"}, {"namespace", "default"}}}};
  ASSERT_TRUE(store_->Create(ObjectKey{kJobKind, "default", "train"}, job).has_value());
  auto workload = [](const std::string& name, const std::string& job_name) {
    return json{{"apiVersion", "kueue.x-k8s.io/v1beta1"},
                {"kind", "Workload"},
                {"metadata", {{"name", name}, {"namespace", "default"}, {"labels", {{"tessera.dev/job-name", job_name}}}}},
                {"status", {{"conditions", {{{"type", "Finished"}, {"status", "True"}}}}}}};
  };
  ASSERT_TRUE(store_->Create(ObjectKey{kWorkloadKind, "default", "job-train"}, workload("job-train", "train")).has_value());
  json pod = Pod("job-train-main-0");
  pod["metadata"]["labels"] = {{"tessera.dev/workload", "job-train"}};
  ASSERT_TRUE(store_->Create(PodKey("job-train-main-0"), pod).has_value());
  auto finished = [](const json& o) {
    const json& conds = o.contains("status") ? o["status"].value("conditions", json::array()) : json::array();
    return std::any_of(conds.begin(), conds.end(), [](const json& c) { return c.value("status", "") == "True"; });
  };
  ObjectCache cache(*store_, {kJobKind, kVolcanoJobKind, kWorkloadKind, kPodKind, "kueue.x-k8s.io/LocalQueue"},
                    {{kJobKind, finished}, {kVolcanoJobKind, finished}, {kWorkloadKind, finished}});
  PodsByWorkload pods(cache);
  JobController jobs;
  auto pass = [&] {
    EXPECT_TRUE(cache.Sync().ok());
    BatchedWriter writer(*store_, cache);
    jobs.Reconcile(cache, pods.index(), "2026-11-30T00:00:00Z", writer);
    return writer.Flush();
  };
  EXPECT_EQ(pass(), 0u);  // the Job has its Workload
  // A hand-made Workload naming a Job that does not exist is left alone until a
  // Job is removed: no pass looks through every Workload for nothing.
  ASSERT_TRUE(store_->Create(ObjectKey{kWorkloadKind, "default", "stray"}, workload("stray", "none")).has_value());
  EXPECT_EQ(pass(), 0u);
  EXPECT_NE(cache.Find(ObjectKey{kWorkloadKind, "default", "stray"}), nullptr);

  ASSERT_TRUE(store_->Delete(ObjectKey{kJobKind, "default", "train"}, 0).has_value());
  EXPECT_EQ(pass(), 2u);  // job-train with its Pod, and the stray one
  EXPECT_EQ(cache.Find(ObjectKey{kWorkloadKind, "default", "job-train"}), nullptr);
  EXPECT_EQ(cache.Find(PodKey("job-train-main-0")), nullptr);
  EXPECT_EQ(cache.Find(ObjectKey{kWorkloadKind, "default", "stray"}), nullptr);
  EXPECT_EQ(pass(), 0u);
}

TEST_F(ControllerPartsTest, OneConflictingUnitDoesNotHoldBackTheOthers) {
  auto a = store_->Create(PodKey("a"), Pod("a"));
  ASSERT_TRUE(a.has_value());
  ASSERT_TRUE(store_->Update(PodKey("a"), Pod("a", "newer"), 0).has_value());  // `a` is now stale
  ObjectCache cache(*store_, {"/Pod"});
  ASSERT_TRUE(cache.Sync().ok());
  BatchedWriter writer(*store_, cache);
  writer.Add(WriteOp{.op = WriteOp::Kind::kUpdate, .key = PodKey("a"), .object = Pod("a", "lost"), .expected_revision = a->revision},
             "stale update");
  for (int i = 0; i < 3; ++i) {
    writer.Add(WriteOp{.op = WriteOp::Kind::kCreate, .key = PodKey("n" + std::to_string(i)), .object = Pod("n")}, "create");
  }
  EXPECT_EQ(writer.Flush(), 3u);
  EXPECT_TRUE(writer.wrote());
  EXPECT_EQ((*store_->Get(PodKey("a"))).object["metadata"]["annotations"]["note"], "newer");
  EXPECT_EQ(cache.Of("/Pod").size(), 4u);  // the creates are in the cache before any Sync
}

TEST_F(ControllerPartsTest, RepeatedEventsAreCountedOnOneObjectAndExpire) {
  auto pod = store_->Create(PodKey("a"), Pod("a"));
  ASSERT_TRUE(pod.has_value());
  ObjectCache cache(*store_, {"/Event"});
  ASSERT_TRUE(cache.Sync().ok());
  EventRecorder recorder("tessera-scheduler");
  const Timestamp t0 = Timestamp::FromMillis(1'700'000'000'000);
  for (int i = 0; i < 3; ++i) {
    BatchedWriter writer(*store_, cache);
    recorder.Record(writer, *pod, EventRecorder::Type::kWarning, "Pending", "waiting for quota", t0 + Duration::Seconds(i));
    writer.Flush();
  }
  ASSERT_TRUE(cache.Sync().ok());
  ASSERT_EQ(cache.Of("/Event").size(), 1u);
  const json& event = cache.Of("/Event").begin()->second.object;
  EXPECT_EQ(event["count"], 3);
  EXPECT_EQ(event["type"], "Warning");
  EXPECT_EQ(event["involvedObject"]["name"], "a");
  EXPECT_EQ(event["involvedObject"]["uid"], pod->object["metadata"]["uid"]);
  EXPECT_NE(event["firstTimestamp"], event["lastTimestamp"]);

  BatchedWriter writer(*store_, cache);
  recorder.Expire(writer, t0 + Duration::Seconds(2 + 3599));
  writer.Flush();
  EXPECT_EQ(cache.Of("/Event").size(), 1u);  // not an hour old yet
  recorder.Expire(writer, t0 + Duration::Seconds(2 + 3601));
  writer.Flush();
  EXPECT_EQ(cache.Of("/Event").size(), 0u);
}

// A storm of events (a new Pending workload each) is cut to the budget: the
// burst at once, then the rate as time passes; the rest are dropped, counted;
// another reason's events are not.
TEST_F(ControllerPartsTest, EventsOverTheBudgetAreDroppedAndCounted) {
  auto pod = store_->Create(PodKey("a"), Pod("a"));
  ASSERT_TRUE(pod.has_value());
  ObjectCache cache(*store_, {"/Event"});
  EventRecorder recorder("tessera-scheduler");
  const Timestamp t0 = Timestamp::FromMillis(1'700'000'000'000);
  constexpr int64_t kStorm = EventRecorder::kEventBurst + 500;
  BatchedWriter writer(*store_, cache);
  for (int64_t i = 0; i < kStorm; ++i) {
    recorder.Record(writer, *pod, EventRecorder::Type::kWarning, "Pending", "cause " + std::to_string(i), t0);
  }
  EXPECT_EQ(writer.Flush(), static_cast<size_t>(EventRecorder::kEventBurst));
  EXPECT_EQ(recorder.dropped(), 500);
  // Two seconds later: the rate's worth again.
  for (int64_t i = 0; i < kStorm; ++i) {
    recorder.Record(writer, *pod, EventRecorder::Type::kWarning, "Pending", "later " + std::to_string(i),
                    t0 + Duration::Seconds(2));
  }
  EXPECT_EQ(writer.Flush(), static_cast<size_t>(2 * EventRecorder::kEventsPerSecond));
  EXPECT_EQ(recorder.dropped(), 500 + kStorm - 2 * EventRecorder::kEventsPerSecond);
  // Each reason has its own budget: the Pending storm leaves Admitted its own.
  recorder.Record(writer, *pod, EventRecorder::Type::kNormal, "Admitted", "admitted", t0 + Duration::Seconds(2));
  EXPECT_EQ(writer.Flush(), 1u);
  ASSERT_TRUE(cache.Sync().ok());
  EXPECT_EQ(cache.Of("/Event").size(),
            static_cast<size_t>(EventRecorder::kEventBurst + 2 * EventRecorder::kEventsPerSecond + 1));
}

// The controllers' subsets of Workloads follow each change: admitted while it
// has an admission, suspended while its Suspended condition is True, neither
// once Finished or deleted, and the pointers are the cache's.
TEST_F(ControllerPartsTest, WorkloadSubsetsFollowAdmissionSuspensionAndTheEnd) {
  auto key = [](const std::string& name) { return ObjectKey{kWorkloadKind, "default", name}; };
  auto workload = [](const std::string& name) {
    return json{{"apiVersion", "kueue.x-k8s.io/v1beta1"}, {"kind", "Workload"},
                {"metadata", {{"name", name}, {"namespace", "default"}}}, {"spec", json::object()}};
  };
  ASSERT_TRUE(store_->Create(key("waits"), workload("waits")).has_value());
  json admitted = workload("runs");
  admitted["status"]["admission"] = {{"clusterQueue", "cq"}};
  ASSERT_TRUE(store_->Create(key("runs"), admitted).has_value());
  ObjectCache cache(*store_, {kWorkloadKind}, {{kWorkloadKind, [](const json& o) { return ConditionTrue(o, "Finished"); }}});
  ASSERT_TRUE(cache.Sync().ok());
  WorkloadSubsets subsets(cache);  // takes in what the cache holds already
  auto names = [](const ObjectCache::Active& subset) {
    std::vector<std::string> out;
    for (const auto& [k, object] : subset) out.push_back(k.second);
    return out;
  };
  EXPECT_EQ(names(subsets.admitted()), std::vector<std::string>{"runs"});
  EXPECT_EQ(subsets.admitted().at({"default", "runs"}), cache.Find(key("runs")));
  EXPECT_TRUE(subsets.suspended().empty());

  json suspended = workload("waits");
  SetCondition(suspended, "Suspended", true, "Idle", "idle", "2026-11-30T00:00:00Z");
  ASSERT_TRUE(store_->Update(key("waits"), suspended, 0).has_value());
  json finished = admitted;
  SetCondition(finished, "Finished", true, "Succeeded", "done", "2026-11-30T00:00:00Z");
  ASSERT_TRUE(store_->Update(key("runs"), finished, 0).has_value());
  ASSERT_TRUE(cache.Sync().ok());
  EXPECT_TRUE(subsets.admitted().empty());
  EXPECT_EQ(names(subsets.suspended()), std::vector<std::string>{"waits"});

  ASSERT_TRUE(store_->Delete(key("waits"), 0).has_value());
  ASSERT_TRUE(cache.Sync().ok());
  EXPECT_TRUE(subsets.suspended().empty());
}

// A deleted claim's directory goes after two looks without it, not while a pod mounts it.
TEST_F(ControllerPartsTest, ClaimReclaimerDeletesOnlyDirectoriesOfGoneClaimsNoPodMounts) {
  const std::filesystem::path root =
      std::filesystem::temp_directory_path() / ("tessera-reclaim-" + std::to_string(::getpid()));
  const std::string kept = "11111111-2222-3333-4444-555555555555", gone = "aaaaaaaa-bbbb-cccc-dddd-eeeeeeeeeeee",
                    used = "99999999-8888-7777-6666-555555555555";
  for (const std::string& dir : {"default-keep-" + kept, "default-old-" + gone, "default-busy-" + used, std::string("not-a-claim")}) {
    std::filesystem::create_directories(root / dir);
  }
  ASSERT_TRUE(store_->Create(ObjectKey{"/PersistentVolumeClaim", "default", "keep"},
                             json{{"metadata", {{"name", "keep"}, {"namespace", "default"}, {"uid", kept}}}})
                  .has_value());
  json pod = Pod("user");
  pod["spec"]["volumes"] = {{{"name", "d"}, {"persistentVolumeClaim", {{"claimName", "busy"}}}}};
  ASSERT_TRUE(store_->Create(PodKey("user"), pod).has_value());
  ObjectCache cache(*store_, {"/Pod", "/PersistentVolumeClaim"});
  ASSERT_TRUE(cache.Sync().ok());
  ClaimReclaimer reclaimer(root.string());
  EXPECT_EQ(reclaimer.Reconcile(cache, Timestamp::FromSeconds(1000)), 0) << "the first look only notes it";
  EXPECT_EQ(reclaimer.Reconcile(cache, Timestamp::FromSeconds(1002)), 0) << "looks are 5 s apart";
  EXPECT_EQ(reclaimer.Reconcile(cache, Timestamp::FromSeconds(1006)), 1);
  EXPECT_FALSE(std::filesystem::exists(root / ("default-old-" + gone)));
  EXPECT_TRUE(std::filesystem::exists(root / ("default-keep-" + kept)));
  EXPECT_TRUE(std::filesystem::exists(root / ("default-busy-" + used))) << "a pod still mounts it";
  EXPECT_TRUE(std::filesystem::exists(root / "not-a-claim"));
  pod["status"]["phase"] = "Succeeded";
  ASSERT_TRUE(store_->Update(PodKey("user"), pod, 0).has_value());
  ASSERT_TRUE(cache.Sync().ok());
  EXPECT_EQ(reclaimer.Reconcile(cache, Timestamp::FromSeconds(1012)), 0) << "its pod ended: noted first";
  EXPECT_EQ(reclaimer.Reconcile(cache, Timestamp::FromSeconds(1018)), 1);
  EXPECT_FALSE(std::filesystem::exists(root / ("default-busy-" + used)));
  std::error_code ec;
  std::filesystem::remove_all(root, ec);
}

}  // namespace
}  // namespace tessera
