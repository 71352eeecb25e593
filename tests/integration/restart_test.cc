// kill -9 the real `tessera server` binary mid-traffic and start it again on the
// same data directory: every acknowledged write is there, and a watch resumed
// from the last revision it saw neither misses nor repeats an event.
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <filesystem>
#include <set>
#include <thread>

#include "client/api_client.h"
#include "tests/integration/tessera_processes.h"
#include "tests/testing/test_dirs.h"

namespace tessera {
namespace {

using nlohmann::json;

constexpr const char* kPath = "/apis/scheduling.k8s.io/v1/priorityclasses";

json PriorityClass(const std::string& name, const std::string& load) {
  return json{{"apiVersion", "scheduling.k8s.io/v1"},
              {"kind", "PriorityClass"},
              {"metadata", {{"name", name}, {"labels", {{"load", load}}}}},
              {"value", 1}};
}

TEST(RestartTest, KillNineMidTrafficLosesNoAcknowledgedWriteAndWatchesResume) {
  const std::string dir = testing::FreshTestDir("tessera-restart").string();
  ServerProcess server = StartServer(dir);
  ASSERT_FALSE(server.url.empty());
  const std::string token = ReadToken(dir);

  // A watcher records what it sees; a writer creates PriorityClasses as fast as it can
  // (a kind no controller writes to, so that each creation is one event).
  std::vector<json> seen;
  std::mutex seen_mu;
  std::thread watcher([&] {
    ApiClient w(server.url, token);
    (void)w.Stream(std::string(kPath) + "?watch=true&labelSelector=load", [&](const std::string& line) {
      std::lock_guard lock(seen_mu);
      seen.push_back(json::parse(line));
      return true;
    });
  });
  std::vector<std::string> acknowledged;
  std::atomic<bool> stop{false};
  std::thread writer([&] {
    ApiClient c(server.url, token);
    for (int i = 0; !stop; ++i) {
      const std::string name = "load-" + std::to_string(i);
      auto r = c.Request("POST", kPath, PriorityClass(name, "yes").dump());
      if (!r || r->status != 201) break;  // the server died under us
      acknowledged.push_back(name);
    }
  });
  while (true) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    std::lock_guard lock(seen_mu);
    if (seen.size() >= 100) break;
  }
  KillProcess(server.pid, SIGKILL);
  waitpid(server.pid, nullptr, 0);
  stop = true;
  writer.join();
  watcher.join();
  ASSERT_GE(acknowledged.size(), 100u);

  server = StartServer(dir);
  ASSERT_FALSE(server.url.empty());
  ApiClient c(server.url, token);
  for (const std::string& name : acknowledged) {
    auto r = c.Request("GET", std::string(kPath) + "/" + name);
    ASSERT_TRUE(r.has_value());
    EXPECT_EQ(r->status, 200) << name << " was acknowledged before the kill but is gone";
  }

  // Resume the watch after the last event seen: the remaining creations arrive, once each.
  const std::string last_rv = seen.back()["object"]["metadata"]["resourceVersion"];
  std::set<std::string> names;
  for (const json& e : seen) names.insert(e["object"]["metadata"]["name"]);
  const size_t before = names.size();
  // The watcher may have seen a creation the writer never heard acknowledged (the
  // kill fell between commit and reply), so count what is still to come by name.
  size_t expected_rest = 0;
  for (const std::string& name : acknowledged) expected_rest += names.count(name) ? 0 : 1;
  std::thread late([&] {
    // After the resumed events, one more write marks the end of the stream.
    std::this_thread::sleep_for(std::chrono::milliseconds(300));
    ApiClient w(server.url, token);
    (void)w.Request("POST", kPath, PriorityClass("marker", "end").dump());
  });
  size_t repeats = 0;
  ApiClient w(server.url, token);
  (void)w.Stream(std::string(kPath) + "?watch=true&labelSelector=load&resourceVersion=" + last_rv, [&](const std::string& line) {
    const json e = json::parse(line);
    const std::string name = e["object"]["metadata"]["name"];
    if (name == "marker") return false;
    if (!names.insert(name).second) ++repeats;
    return true;
  });
  late.join();
  EXPECT_EQ(repeats, 0u);
  EXPECT_GE(names.size() - before, expected_rest);  // every acknowledged creation; maybe one unacknowledged more
  for (const std::string& name : acknowledged) EXPECT_TRUE(names.count(name)) << name << " never reached the watch";
  KillProcess(server.pid, SIGTERM);
  waitpid(server.pid, nullptr, 0);
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace tessera
