// The watch dispatcher on a real SQLite store, without HTTP: what a watcher
// receives when it subscribes after writes that woke nobody (Notify is a no-op
// without watchers) and while another thread keeps writing.
#include "server/api/watch_hub.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <atomic>
#include <chrono>
#include <filesystem>
#include <mutex>
#include <thread>

#include "tests/testing/fresh_store.h"

namespace tessera {
namespace {

using nlohmann::json;

class RecordingSink : public StreamSink {
 public:
  bool Write(std::string chunk) override {
    std::lock_guard lock(mu_);
    lines_.push_back(json::parse(chunk));
    return true;
  }
  void Close() override { open_ = false; }
  bool open() const override { return open_; }
  std::vector<json> lines() const {
    std::lock_guard lock(mu_);
    return lines_;
  }

 private:
  mutable std::mutex mu_;
  std::vector<json> lines_;
  std::atomic<bool> open_{true};
};

json Namespace(const std::string& name) {
  return json{{"apiVersion", "v1"}, {"kind", "Namespace"}, {"metadata", {{"name", name}}}};
}

TEST(WatchHubTest, AWatcherAfterUnnotifiedWritesGetsEveryEventOnceInOrder) {
  const auto dir = testing::FreshTestDir("tessera-watch-hub");
  std::unique_ptr<Store> store = testing::OpenTestStore(dir);
  ASSERT_NE(store, nullptr);
  WatchHub hub(*store);
  auto create = [&](const std::string& name) {
    ASSERT_TRUE(store->Create(ObjectKey{"/Namespace", "", name}, Namespace(name)).has_value()) << name;
    hub.Notify();
  };
  // Written while nobody watches: the dispatcher is not woken for them.
  for (int i = 0; i < 50; ++i) create("before-" + std::to_string(i));

  // A watcher from revision 10 catches up on the rest, then follows writes
  // made by another thread as it subscribes.
  auto sink = std::make_shared<RecordingSink>();
  std::thread writer([&] {
    for (int i = 0; i < 200; ++i) create("during-" + std::to_string(i));
  });
  ASSERT_TRUE(hub.Subscribe(WatchFilter{.kind = "/Namespace"}, 10, sink).ok());
  writer.join();
  const int64_t last = store->Revision();
  ASSERT_EQ(last, 250);
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (sink->lines().size() < 240 && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  std::this_thread::sleep_for(std::chrono::milliseconds(100));  // nothing more may come
  const std::vector<json> lines = sink->lines();
  ASSERT_EQ(lines.size(), 240u);
  for (size_t i = 0; i < lines.size(); ++i) {
    EXPECT_EQ(lines[i]["type"], "ADDED");
    EXPECT_EQ(lines[i]["object"]["metadata"]["resourceVersion"], std::to_string(11 + i)) << "event " << i;
  }
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace tessera
