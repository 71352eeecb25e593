// The scheduler loop driven pass by pass (RunOnce) on a real SQLite store with
// a clock the test moves: how it keeps pending workloads' conditions current
// without rewriting, or even rendering, every waiting workload on every pass.
#include <fmt/format.h>
#include <gtest/gtest.h>
#include <gmock/gmock.h>
#include <nlohmann/json.hpp>

#include <filesystem>

#include "agent/node_registration.h"
#include "common/time_format.h"
#include "server/controllers/job_controller.h"
#include "server/object_json.h"
#include "server/scheduler_loop.h"
#include "tests/testing/fresh_store.h"

namespace tessera {
namespace {

using nlohmann::json;
using ::testing::HasSubstr;

json Workload(const std::string& name, int gpus) {
  json container{{"name", "main"}, {"image", "x"}, {"resources", {{"requests", {{"nvidia.com/gpu", std::to_string(gpus)}}}}}};
  return json{{"apiVersion", "kueue.x-k8s.io/v1beta1"},
              {"kind", "Workload"},
              {"metadata", {{"name", name}, {"namespace", "default"}, {"uid", "uid-" + name},
                            {"creationTimestamp", "2026-11-30T00:00:00Z"}}},
              {"spec", {{"queueName", "lq"},
                        {"podSets", {{{"name", "main"}, {"count", 1}, {"template", {{"spec", {{"containers", {container}}}}}}}}}}}};
}

class SchedulerLoopTest : public testing::FreshStoreTest {
 protected:
  void SetUp() override {
    FreshStoreTest::SetUp();
    if (HasFatalFailure()) return;
    Put(ObjectKey{"/Namespace", "", "default"}, json{{"apiVersion", "v1"}, {"kind", "Namespace"}, {"metadata", {{"name", "default"}}}});
    Put(ObjectKey{"kueue.x-k8s.io/ResourceFlavor", "", "f"},
        json{{"apiVersion", "kueue.x-k8s.io/v1beta1"}, {"kind", "ResourceFlavor"}, {"metadata", {{"name", "f"}}}, {"spec", json::object()}});
    Put(ObjectKey{"kueue.x-k8s.io/ClusterQueue", "", "cq"},
        json{{"apiVersion", "kueue.x-k8s.io/v1beta1"},
             {"kind", "ClusterQueue"},
             {"metadata", {{"name", "cq"}}},
             {"spec",
              {{"namespaceSelector", json::object()},
               {"resourceGroups",
                {{{"coveredResources", {"nvidia.com/gpu"}},
                  {"flavors", {{{"name", "f"}, {"resources", {{{"name", "nvidia.com/gpu"}, {"nominalQuota", "1"}}}}}}}}}}}}});
    Put(ObjectKey{"kueue.x-k8s.io/LocalQueue", "default", "lq"},
        json{{"apiVersion", "kueue.x-k8s.io/v1beta1"}, {"kind", "LocalQueue"},
             {"metadata", {{"name", "lq"}, {"namespace", "default"}}}, {"spec", {{"clusterQueue", "cq"}}}});
    Node n{.name = "n1", .cpu_milli = 64000, .memory_bytes = int64_t{512} << 30};
    for (int g = 0; g < 4; ++g) {
      n.gpus.push_back(GpuDevice{.index = g, .uuid = "gpu" + std::to_string(g), .model = "A100-80GB", .memory_bytes = int64_t{80} << 30});
    }
    Put(ObjectKey{"/Node", "", "n1"}, NodeObject(n, true, FormatRfc3339(now_)));
    loop_ = std::make_unique<SchedulerLoop>(*store_, SchedulerConfig{}, [this] { return now_; }, nullptr);
  }
  void TearDown() override {
    loop_.reset();
    FreshStoreTest::TearDown();
  }
  void Put(const ObjectKey& key, const json& object) { ASSERT_TRUE(store_->Create(key, object).has_value()) << key.name; }
  StoredObject Get(const std::string& workload) {
    auto got = store_->Get(ObjectKey{kWorkloadKind, "default", workload});
    EXPECT_TRUE(got.has_value()) << workload;
    return got ? *got : StoredObject{};
  }
  std::string Message(const std::string& workload) { return ConditionValue(Get(workload).object, "QuotaReserved", "message"); }
  void Pass(Duration later) {
    now_ = now_ + later;
    ASSERT_TRUE(loop_->RunOnce().ok());
  }
  // "a-running" takes the queue's one GPU; "b-first" then w000..w299 wait, at positions 1 to 301.
  void QueueOf300AfterAHead() {
    Put(ObjectKey{kWorkloadKind, "default", "a-running"}, Workload("a-running", 1));
    Put(ObjectKey{kWorkloadKind, "default", "b-first"}, Workload("b-first", 1));
    for (int i = 0; i < 300; ++i) Put(ObjectKey{kWorkloadKind, "default", fmt::format("w{:03}", i)}, Workload(fmt::format("w{:03}", i), 1));
    Pass(Duration::Seconds(1));
  }
  // How many of w000..w299 show their position once "b-first" has left.
  int PositionsMovedUp() {
    int n = 0;
    for (int i = 0; i < 300; ++i) {
      if (Message(fmt::format("w{:03}", i)).find(fmt::format("position {} in", i + 1)) != std::string::npos) ++n;
    }
    return n;
  }

  Timestamp now_ = *ParseRfc3339("2026-11-30T00:00:00Z");
  std::unique_ptr<SchedulerLoop> loop_;
};

json PriorityClass(const std::string& name, int value) {
  return json{{"apiVersion", "scheduling.k8s.io/v1"}, {"kind", "PriorityClass"}, {"metadata", {{"name", name}}},
              {"value", value}};
}

// A workload is converted from its JSON once per revision, not on every pass;
// and again when what its conversion reads besides it changes, here the value
// of its priority class (its queue position follows).
TEST_F(SchedulerLoopTest, WorkloadsAreConvertedOncePerRevisionAndAgainWhenTheirClassChanges) {
  Put(ObjectKey{"scheduling.k8s.io/PriorityClass", "", "low"}, PriorityClass("low", 10));
  Put(ObjectKey{"scheduling.k8s.io/PriorityClass", "", "high"}, PriorityClass("high", 20));
  json a = Workload("a", 1), b = Workload("b", 1), c = Workload("c", 1);
  a["spec"]["priority"] = 100;  // admitted first, into the queue's one GPU
  Put(ObjectKey{kWorkloadKind, "default", "a"}, a);
  b["spec"]["priorityClassName"] = "low";
  c["spec"]["priorityClassName"] = "high";
  Put(ObjectKey{kWorkloadKind, "default", "b"}, b);
  Put(ObjectKey{kWorkloadKind, "default", "c"}, c);
  Pass(Duration::Seconds(1));
  EXPECT_EQ(ConditionValue(Get("a").object, "Admitted", "status"), "True");
  EXPECT_THAT(Message("c"), HasSubstr("position 1 in ClusterQueue cq"));
  EXPECT_THAT(Message("b"), HasSubstr("position 2 in ClusterQueue cq"));

  // The pass's own writes (conditions) are new revisions: converted once more.
  Pass(Duration::Seconds(1));
  const int64_t converted = loop_->stats().workloads_converted;
  for (int i = 0; i < 3; ++i) Pass(Duration::Seconds(1));
  EXPECT_EQ(loop_->stats().workloads_converted, converted) << "unchanged workloads were converted again";

  // "low" now outranks "high": b and c are converted again and swap places
  // (a position alone is written at the 30 s refresh).
  const StoredObject low = *store_->Get(ObjectKey{"scheduling.k8s.io/PriorityClass", "", "low"});
  ASSERT_TRUE(store_->Update(low.key, PriorityClass("low", 30), low.revision).has_value());
  Pass(Duration::Seconds(31));
  EXPECT_GT(loop_->stats().workloads_converted, converted);
  EXPECT_THAT(Message("b"), HasSubstr("position 1 in ClusterQueue cq"));
  EXPECT_THAT(Message("c"), HasSubstr("position 2 in ClusterQueue cq"));
}

// A waiting workload's condition is written when its cause changes, at once;
// its queue position only every 30 s; and between the two, passes leave it be.
TEST_F(SchedulerLoopTest, PendingConditionsFollowTheCauseAtOnceAndTheProgressEvery30s) {
  Put(ObjectKey{kWorkloadKind, "default", "a"}, Workload("a", 1));
  Put(ObjectKey{kWorkloadKind, "default", "b"}, Workload("b", 1));
  Put(ObjectKey{kWorkloadKind, "default", "c"}, Workload("c", 1));
  Pass(Duration::Seconds(1));
  EXPECT_EQ(ConditionValue(Get("a").object, "Admitted", "status"), "True");
  EXPECT_THAT(Message("b"), HasSubstr("ClusterQueue cq: nvidia.com/gpu in flavor f 1/1 nominal used"));
  EXPECT_THAT(Message("b"), HasSubstr("position 1 in ClusterQueue cq"));
  EXPECT_THAT(Message("c"), HasSubstr("position 2 in ClusterQueue cq"));
  const int64_t b_written = Get("b").revision, c_written = Get("c").revision;

  // Nothing changed: nothing is written, nor even rendered (the memo took the
  // revisions of the pass's own writes).
  const int64_t rendered = loop_->stats().pending_rendered;
  Pass(Duration::Seconds(1));
  for (int i = 0; i < 3; ++i) Pass(Duration::Seconds(1));
  EXPECT_EQ(loop_->stats().pending_rendered, rendered);
  EXPECT_EQ(Get("b").revision, b_written);
  EXPECT_EQ(Get("c").revision, c_written);

  // b leaves: c moves up, but a position alone waits for the refresh.
  ASSERT_TRUE(store_->Delete(ObjectKey{kWorkloadKind, "default", "b"}, 0).has_value());
  Pass(Duration::Seconds(1));
  Pass(Duration::Seconds(10));
  EXPECT_EQ(Get("c").revision, c_written);
  EXPECT_THAT(Message("c"), HasSubstr("position 2"));
  Pass(Duration::Seconds(30));
  EXPECT_THAT(Message("c"), HasSubstr("position 1 in ClusterQueue cq"));
  const int64_t c_refreshed = Get("c").revision;
  EXPECT_GT(c_refreshed, c_written);

  // c asks for more: a new cause, written at the next pass.
  json bigger = Get("c").object;
  bigger["spec"]["podSets"][0]["template"]["spec"]["containers"][0]["resources"]["requests"]["nvidia.com/gpu"] = "2";
  ASSERT_TRUE(store_->Update(ObjectKey{kWorkloadKind, "default", "c"}, bigger, c_refreshed).has_value());
  Pass(Duration::Seconds(1));
  EXPECT_THAT(Message("c"), HasSubstr("the workload asks for 2"));

  // The queue's quota changes: the numbers quoted follow at once.
  auto cq = store_->Get(ObjectKey{"kueue.x-k8s.io/ClusterQueue", "", "cq"});
  ASSERT_TRUE(cq.has_value());
  json wider = cq->object;
  wider["spec"]["resourceGroups"][0]["flavors"][0]["resources"][0]["nominalQuota"] = "2";
  ASSERT_TRUE(store_->Update(cq->key, wider, cq->revision).has_value());
  Pass(Duration::Seconds(1));
  EXPECT_THAT(Message("c"), HasSubstr("1/2 nominal used"));
}

// Progress refreshes are paced, the heads of the queue first: with 300
// workloads waiting and every position moved, a pass 30 s on refreshes 100
// (the burst), the next one a second later 50 more, and none of the workloads
// further back until their turn.
TEST_F(SchedulerLoopTest, ProgressRefreshesArePacedHeadsFirst) {
  QueueOf300AfterAHead();
  EXPECT_THAT(Message("b-first"), HasSubstr("position 1 in ClusterQueue cq"));
  EXPECT_THAT(Message("w000"), HasSubstr("position 2 in ClusterQueue cq"));
  EXPECT_THAT(Message("w299"), HasSubstr("position 301 in ClusterQueue cq"));

  // The head leaves: every other position moves up by one.
  ASSERT_TRUE(store_->Delete(ObjectKey{kWorkloadKind, "default", "b-first"}, 0).has_value());
  Pass(Duration::Seconds(31));
  EXPECT_EQ(PositionsMovedUp(), 100);
  EXPECT_THAT(Message("w000"), HasSubstr("position 1 in ClusterQueue cq"));
  EXPECT_THAT(Message("w099"), HasSubstr("position 100 in ClusterQueue cq"));
  EXPECT_THAT(Message("w100"), HasSubstr("position 102 in ClusterQueue cq"));  // not yet
  Pass(Duration::Seconds(1));
  EXPECT_EQ(PositionsMovedUp(), 150);
  EXPECT_THAT(Message("w149"), HasSubstr("position 150 in ClusterQueue cq"));
  for (int i = 0; i < 4; ++i) Pass(Duration::Seconds(1));
  EXPECT_EQ(PositionsMovedUp(), 300);
}

// A restarted loop (no memo of what it rendered) paces the refreshes of
// positions that moved while it was away like any other: it does not rewrite
// every waiting workload in its first pass.
TEST_F(SchedulerLoopTest, ARestartedLoopPacesTheProgressItFindsStale) {
  QueueOf300AfterAHead();
  ASSERT_THAT(Message("w299"), HasSubstr("position 301 in ClusterQueue cq"));
  ASSERT_TRUE(store_->Delete(ObjectKey{kWorkloadKind, "default", "b-first"}, 0).has_value());
  loop_ = std::make_unique<SchedulerLoop>(*store_, SchedulerConfig{}, [this] { return now_; }, nullptr);
  const int64_t before = store_->Revision();
  Pass(Duration::Seconds(1));
  EXPECT_EQ(PositionsMovedUp(), 100);  // the burst, heads first
  EXPECT_THAT(Message("w000"), HasSubstr("position 1 in ClusterQueue cq"));
  EXPECT_LT(store_->Revision() - before, 150) << "the restarted loop rewrote the queue";
}

}  // namespace
}  // namespace tessera
