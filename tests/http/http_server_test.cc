// HttpServer over real sockets on 127.0.0.1: how connections are spread over
// the I/O threads, each with an io_context of its own.
#include "http/http_server.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "client/api_client.h"

namespace tessera {
namespace {

// Every connection is answered, whichever I/O thread it was dealt to, also
// those opened long after the start (an io_context with no connection yet
// must keep its thread), and deferred answers come back from another thread;
// handlers of different connections run on every I/O thread.
TEST(HttpServerTest, EveryIoThreadServesTheConnectionsDealtToIt) {
  std::mutex mu;
  std::set<std::thread::id> handler_threads;
  HttpServerOptions options;
  options.port = 0;
  options.threads = 3;
  HttpServer server(options, [&](const HttpRequest& req) {
    {
      std::lock_guard lock(mu);
      handler_threads.insert(std::this_thread::get_id());
    }
    HttpResponse r;
    if (req.path == "/later") {
      const std::string body = req.body;
      r.deferred = [body](std::function<void(HttpResponse)> respond) {
        std::thread([respond, body] {
          HttpResponse later;
          later.body = "later:" + body;
          respond(std::move(later));
        }).detach();
      };
      return r;
    }
    r.body = "now:" + req.body;
    return r;
  });
  ASSERT_TRUE(server.Start().ok());
  const std::string url = "http://127.0.0.1:" + std::to_string(server.port());
  std::this_thread::sleep_for(std::chrono::milliseconds(100));  // idle first: no thread may have left

  constexpr int kClients = 7;
  std::vector<std::thread> clients;
  std::atomic<int> answered{0};
  for (int c = 0; c < kClients; ++c) {
    clients.emplace_back([&, c] {
      ApiClient client(url, "");
      for (int i = 0; i < 5; ++i) {
        const std::string body = std::to_string(c) + "-" + std::to_string(i);
        auto now = client.Request("POST", "/now", body);
        auto later = client.Request("POST", "/later", body);
        if (now && now->body == "now:" + body && later && later->body == "later:" + body) ++answered;
      }
    });
  }
  for (std::thread& t : clients) t.join();
  EXPECT_EQ(answered.load(), kClients * 5);
  EXPECT_EQ(handler_threads.size(), 3u);
  server.Stop();
}

}  // namespace
}  // namespace tessera
