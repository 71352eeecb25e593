// The pod history controller against a real SQLite store: a Workload's Pods
// that were bound to a node and are deleted become records of its
// status.podHistory (newest last, capped), which go with the Workload.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "common/time_format.h"
#include "server/batched_writer.h"
#include "server/controllers/pod_history_controller.h"
#include "server/event_recorder.h"
#include "server/object_cache.h"
#include "server/object_json.h"
#include "server/pod_index.h"
#include "server/workload_subsets.h"
#include "tests/testing/fresh_store.h"

namespace tessera {
namespace {

using nlohmann::json;

json Record(const std::string& uid) { return json{{"name", "w-main-0"}, {"uid", uid}, {"nodeName", "n1"}}; }

std::vector<std::string> Uids(const json& history) {
  std::vector<std::string> out;
  for (const json& r : history) out.push_back(r.value("uid", ""));
  return out;
}

TEST(AppendPodHistoryTest, KeepsTheNewestCapRecordsNewestLast) {
  std::vector<json> records;
  for (int i = 0; i < 105; ++i) records.push_back(Record("u" + std::to_string(i)));
  const json history = AppendPodHistory(json::array(), records, 100);
  ASSERT_EQ(history.size(), 100u);
  EXPECT_EQ(history.front()["uid"], "u5");  // the 5 oldest are cut
  EXPECT_EQ(history.back()["uid"], "u104");
  // One more: the oldest goes, the new one is last.
  const json more = AppendPodHistory(history, {Record("u105")}, 100);
  ASSERT_EQ(more.size(), 100u);
  EXPECT_EQ(more.front()["uid"], "u6");
  EXPECT_EQ(more.back()["uid"], "u105");
}

TEST(AppendPodHistoryTest, AppendingTheSameRecordsAgainChangesNothing) {
  const json once = AppendPodHistory(json::array({Record("a"), Record("b")}), {Record("b"), Record("c")}, 3);
  EXPECT_EQ(Uids(once), (std::vector<std::string>{"a", "b", "c"}));
  EXPECT_EQ(AppendPodHistory(once, {Record("b"), Record("c")}, 3), once);  // what the controller's retry relies on
  // Not an array (a user's edit): a history of the new records alone.
  EXPECT_EQ(Uids(AppendPodHistory(json("x"), {Record("d")}, 3)), std::vector<std::string>{"d"});
  // More records than the cap in one go: the newest cap of them.
  EXPECT_EQ(Uids(AppendPodHistory(json::array(), {Record("a"), Record("b"), Record("c")}, 2)),
            (std::vector<std::string>{"b", "c"}));
}

class PodHistoryControllerTest : public testing::FreshStoreTest {
 protected:
  static ObjectKey PodKey(const std::string& name) { return ObjectKey{kPodKind, "default", name}; }
  static ObjectKey WorkloadKey(const std::string& name) { return ObjectKey{kWorkloadKind, "default", name}; }
  static json Workload(const std::string& name) {
    return json{{"apiVersion", "kueue.x-k8s.io/v1beta1"}, {"kind", "Workload"},
                {"metadata", {{"name", name}, {"namespace", "default"}}}, {"spec", json::object()}};
  }
  static json Pod(const std::string& name, const std::string& uid, const std::string& workload, const std::string& node) {
    json pod{{"apiVersion", "v1"}, {"kind", "Pod"},
             {"metadata", {{"name", name}, {"namespace", "default"}, {"uid", uid}}},
             {"spec", {{"containers", {{{"name", "main"}}}}}},
             {"status", {{"phase", "Running"}, {"startTime", "2026-12-01T10:00:00Z"}}}};
    if (!workload.empty()) pod["metadata"]["labels"] = {{"tessera.dev/workload", workload}};
    if (!node.empty()) pod["spec"]["nodeName"] = node;
    return pod;
  }
  // The loop's parts for the controller, observing one cache (declared first: it goes last).
  struct Loop {
    explicit Loop(Store& store) : cache(store, {kPodKind, kWorkloadKind}) { EXPECT_TRUE(cache.Sync().ok()); }
    ObjectCache cache;
    PodsByWorkload pods{cache};
    WorkloadSubsets subsets{cache};
    PodHistoryController controller{cache};
  };
  // One pass of the controller alone: catch up, reconcile, write.
  void Pass(Loop& loop, const std::string& now) {
    ASSERT_TRUE(loop.cache.Sync().ok());
    BatchedWriter writer(*store_, loop.cache);
    EventRecorder events("test");
    PassContext pass(loop.cache, loop.pods.index(), loop.subsets, *ParseRfc3339(now), writer, events);
    loop.controller.Reconcile(pass);
    writer.Flush();
  }
  json History(const std::string& workload) {
    auto w = store_->Get(WorkloadKey(workload));
    EXPECT_TRUE(w.has_value());
    return w ? ArrayAt(w->object, {"status", "podHistory"}) : json::array();
  }
};

TEST_F(PodHistoryControllerTest, ADeletedBoundPodOfAWorkloadIsRecordedOnItAndGoesWithIt) {
  ASSERT_TRUE(store_->Create(WorkloadKey("w"), Workload("w")).has_value());
  ASSERT_TRUE(store_->Create(PodKey("w-main-0"), Pod("w-main-0", "u1", "w", "n1")).has_value());
  ASSERT_TRUE(store_->Create(PodKey("w-main-1"), Pod("w-main-1", "u9", "w", "")).has_value());  // never bound
  ASSERT_TRUE(store_->Create(PodKey("bare"), Pod("bare", "u8", "", "n1")).has_value());        // no workload
  Loop loop(*store_);
  Pass(loop, "2026-12-01T10:00:01Z");
  EXPECT_TRUE(History("w").empty());

  json evicted = Pod("w-main-0", "u1", "w", "n1");
  evicted["status"]["reason"] = "Preempted";
  ASSERT_TRUE(store_->Update(PodKey("w-main-0"), evicted, 0).has_value());
  for (const char* name : {"w-main-0", "w-main-1", "bare"}) ASSERT_TRUE(store_->Delete(PodKey(name), 0).has_value());
  Pass(loop, "2026-12-01T10:05:00Z");
  const json history = History("w");
  ASSERT_EQ(history.size(), 1u) << history.dump();
  EXPECT_EQ(history[0], (json{{"name", "w-main-0"}, {"uid", "u1"}, {"nodeName", "n1"}, {"containerName", "main"},
                              {"phase", "Running"}, {"reason", "Preempted"}, {"startTime", "2026-12-01T10:00:00Z"},
                              {"deletedAt", "2026-12-01T10:05:00Z"}}));

  // Admitted again: a new pod of the same name, then deleted too; it comes last.
  ASSERT_TRUE(store_->Create(PodKey("w-main-0"), Pod("w-main-0", "u2", "w", "n2")).has_value());
  Pass(loop, "2026-12-01T10:06:00Z");
  ASSERT_TRUE(store_->Delete(PodKey("w-main-0"), 0).has_value());
  Pass(loop, "2026-12-01T10:07:00Z");
  EXPECT_EQ(Uids(History("w")), (std::vector<std::string>{"u1", "u2"}));
  Pass(loop, "2026-12-01T10:08:00Z");  // written: nothing more to do
  EXPECT_EQ(Uids(History("w")), (std::vector<std::string>{"u1", "u2"}));

  // A pod deleted together with its Workload leaves nothing behind.
  ASSERT_TRUE(store_->Create(PodKey("w-main-0"), Pod("w-main-0", "u3", "w", "n1")).has_value());
  Pass(loop, "2026-12-01T10:09:00Z");
  ASSERT_TRUE(store_->Delete(PodKey("w-main-0"), 0).has_value());
  ASSERT_TRUE(store_->Delete(WorkloadKey("w"), 0).has_value());
  Pass(loop, "2026-12-01T10:10:00Z");
  ASSERT_TRUE(store_->Create(WorkloadKey("w"), Workload("w")).has_value());  // a new Job of the same name
  Pass(loop, "2026-12-01T10:11:00Z");
  EXPECT_TRUE(History("w").empty()) << History("w").dump();
}

}  // namespace
}  // namespace tessera
