// The controllers' building blocks against a real SQLite store: the ObjectCache
// (an informer over the event log), the BatchedWriter and the EventRecorder.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>

#include "server/batched_writer.h"
#include "server/event_recorder.h"
#include "server/job_controller.h"
#include "server/object_cache.h"
#include "store/sqlite_store.h"
#include "tests/testing/test_dirs.h"

namespace tessera {
namespace {

using nlohmann::json;

json Pod(const std::string& name, const std::string& note = "") {
  return json{{"apiVersion", "v1"}, {"kind", "Pod"}, {"metadata", {{"name", name}, {"namespace", "default"}, {"annotations", {{"note", note}}}}}};
}
ObjectKey PodKey(const std::string& name) { return ObjectKey{"/Pod", "default", name}; }

class ControllerPartsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = testing::FreshTestDir("tessera-ctl");
    auto s = OpenSqliteStore((dir_ / "t.db").string());
    ASSERT_TRUE(s.has_value()) << s.error().ToString();
    store_ = std::move(*s);
  }
  void TearDown() override {
    store_.reset();
    std::filesystem::remove_all(dir_);
  }
  std::filesystem::path dir_;
  std::unique_ptr<Store> store_;
};

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

// The Pod index is rebuilt only after the cache's Pods changed: not by a Sync
// that brought nothing new, nor by a stale Put, but by each event, write and relist.
TEST_F(ControllerPartsTest, PodIndexIsRebuiltOnlyWhenThePodsChanged) {
  json pod = Pod("a");
  pod["metadata"]["labels"] = {{"tessera.dev/workload", "w"}};
  ASSERT_TRUE(store_->Create(PodKey("a"), pod).has_value());
  ObjectCache cache(*store_, {"/Pod"});
  ASSERT_TRUE(cache.Sync().ok());
  PodsByWorkload pods;
  const uint64_t listed = cache.changes("/Pod");
  ASSERT_EQ(pods.Of(cache).at({"default", "w"}).size(), 1u);

  ASSERT_TRUE(cache.Sync().ok());
  EXPECT_EQ(cache.changes("/Pod"), listed);
  const PodIndex* first = &pods.Of(cache);

  json second = Pod("b");
  second["metadata"]["labels"] = {{"tessera.dev/workload", "w"}};
  auto b = store_->Create(PodKey("b"), second);
  ASSERT_TRUE(b.has_value());
  cache.Put(*b);
  EXPECT_GT(cache.changes("/Pod"), listed);
  EXPECT_EQ(&pods.Of(cache), first);  // the same object, rebuilt in place
  EXPECT_EQ(pods.Of(cache).at({"default", "w"}).size(), 2u);

  const uint64_t after_put = cache.changes("/Pod");
  ASSERT_TRUE(cache.Sync().ok());  // b's event: already held, so no change
  cache.Put(*b);                   // stale
  EXPECT_EQ(cache.changes("/Pod"), after_put);

  ASSERT_TRUE(store_->Delete(PodKey("a"), 0).has_value());
  ASSERT_TRUE(cache.Sync().ok());
  EXPECT_GT(cache.changes("/Pod"), after_put);
  EXPECT_EQ(pods.Of(cache).at({"default", "w"}).size(), 1u);
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

}  // namespace
}  // namespace tessera
