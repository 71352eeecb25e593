// HttpServer over real sockets on 127.0.0.1: how connections are spread over
// the I/O threads, each with an io_context of its own.
#include "http/http_server.h"

#include <gtest/gtest.h>

#include <array>
#include <atomic>
#include <chrono>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include <boost/asio.hpp>

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

// A raw connection to the server: what an idle or slow client looks like.
class RawConnection {
 public:
  explicit RawConnection(uint16_t port) : socket_(ioc_) {
    socket_.connect({boost::asio::ip::make_address("127.0.0.1"), port});
  }
  void Send(const std::string& text) { boost::asio::write(socket_, boost::asio::buffer(text)); }
  // Reads until the server closes the connection (or `limit` passes: then
  // false); what was read is in `got`.
  bool ReadUntilClosed(std::chrono::milliseconds limit, std::string& got) {
    socket_.non_blocking(true);
    const auto deadline = std::chrono::steady_clock::now() + limit;
    std::array<char, 4096> buf{};
    while (std::chrono::steady_clock::now() < deadline) {
      boost::system::error_code ec;
      const size_t n = socket_.read_some(boost::asio::buffer(buf), ec);
      if (ec == boost::asio::error::would_block) {
        std::this_thread::sleep_for(std::chrono::milliseconds(5));
        continue;
      }
      if (ec) return true;  // closed (EOF or reset)
      got.append(buf.data(), n);
    }
    return false;
  }

 private:
  boost::asio::io_context ioc_;
  boost::asio::ip::tcp::socket socket_;
};

constexpr auto kIdleTimeout = std::chrono::milliseconds(300);

HttpServerOptions ShortIdleTimeout() {
  HttpServerOptions options;
  options.port = 0;
  options.idle_timeout = kIdleTimeout;
  return options;
}

// A connection that sends nothing, or that was answered and then sends
// nothing more, is closed once it has waited the idle timeout (not before);
// one that keeps asking is not, however long it lives.
TEST(HttpServerTest, ConnectionsIdleForTheTimeoutAreClosed) {
  HttpServer server(ShortIdleTimeout(), [](const HttpRequest&) {
    HttpResponse r;
    r.body = "ok";
    return r;
  });
  ASSERT_TRUE(server.Start().ok());

  RawConnection silent(server.port());
  RawConnection answered(server.port());
  answered.Send("GET /x HTTP/1.1\r\nHost: a\r\n\r\n");
  std::string got;
  EXPECT_FALSE(silent.ReadUntilClosed(kIdleTimeout / 2, got)) << "closed before its idle timeout";
  const auto start = std::chrono::steady_clock::now();
  EXPECT_TRUE(silent.ReadUntilClosed(std::chrono::seconds(5), got)) << "never closed";
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(2));
  std::string answer;
  EXPECT_TRUE(answered.ReadUntilClosed(std::chrono::seconds(5), answer));
  EXPECT_NE(answer.find("200 OK"), std::string::npos) << answer;

  // Keeps asking for three idle timeouts, on one connection: every request is
  // answered there, and it stays open.
  RawConnection busy(server.port());
  const auto busy_until = std::chrono::steady_clock::now() + 3 * kIdleTimeout;
  int asked = 0;
  std::string answers;
  while (std::chrono::steady_clock::now() < busy_until) {
    busy.Send("GET /x HTTP/1.1\r\nHost: a\r\n\r\n");
    ++asked;
    ASSERT_FALSE(busy.ReadUntilClosed(kIdleTimeout / 5, answers)) << "a busy connection was closed";
  }
  EXPECT_GE(asked, 10);
  size_t ok = 0;
  for (size_t at = answers.find("200 OK"); at != std::string::npos; at = answers.find("200 OK", at + 1)) ++ok;
  EXPECT_EQ(ok, static_cast<size_t>(asked));
  server.Stop();
}

// A request whose answer waits (on the store) longer than the idle timeout is
// not idle: the connection waits for the server, not for its client.
TEST(HttpServerTest, AnAnswerThatTakesLongerThanTheIdleTimeoutStillComes) {
  HttpServer server(ShortIdleTimeout(), [](const HttpRequest&) {
    HttpResponse r;
    r.deferred = [](std::function<void(HttpResponse)> respond) {
      std::thread([respond] {
        std::this_thread::sleep_for(3 * kIdleTimeout);
        HttpResponse later;
        later.body = "late but here";
        respond(std::move(later));
      }).detach();
    };
    return r;
  });
  ASSERT_TRUE(server.Start().ok());
  ApiClient client("http://127.0.0.1:" + std::to_string(server.port()), "");
  auto r = client.Request("GET", "/slow", "");
  ASSERT_TRUE(r.has_value()) << r.error().ToString();
  EXPECT_EQ(r->body, "late but here");
  server.Stop();
}

TEST(HttpServerTest, AnIdleTimeoutTooShortToSweepIsRefused) {
  HttpServerOptions options = ShortIdleTimeout();
  options.idle_timeout = std::chrono::milliseconds(0);
  HttpServer server(options, [](const HttpRequest&) { return HttpResponse{}; });
  const Status started = server.Start();
  EXPECT_EQ(started.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(started.message().find("idle timeout"), std::string::npos) << started.message();
}

// A stream (a watch) may be quiet far longer than the idle timeout: it stays
// open, and what is written to it later still arrives.
TEST(HttpServerTest, AQuietStreamIsNotIdle) {
  std::mutex mu;
  std::shared_ptr<StreamSink> sink;
  HttpServer server(ShortIdleTimeout(), [&](const HttpRequest&) {
    HttpResponse r;
    r.stream = [&](std::shared_ptr<StreamSink> s) {
      std::lock_guard lock(mu);
      sink = std::move(s);
    };
    return r;
  });
  ASSERT_TRUE(server.Start().ok());
  RawConnection watcher(server.port());
  watcher.Send("GET /watch HTTP/1.1\r\nHost: a\r\n\r\n");
  std::string got;
  EXPECT_FALSE(watcher.ReadUntilClosed(4 * kIdleTimeout, got)) << "a quiet stream was closed";
  {
    std::lock_guard lock(mu);
    ASSERT_NE(sink, nullptr);
    EXPECT_TRUE(sink->Write("late"));
    sink->Close();
  }
  EXPECT_TRUE(watcher.ReadUntilClosed(std::chrono::seconds(5), got));
  EXPECT_NE(got.find("late"), std::string::npos) << got;
  server.Stop();
}

// Upper-cases what the client sends on a connection handed over, until "bye".
class Shouter : public std::enable_shared_from_this<Shouter> {
 public:
  explicit Shouter(std::shared_ptr<UpgradedConnection> conn) : conn_(std::move(conn)) {}
  void Start() {
    conn_->Write("HTTP/1.1 101 Switching Protocols\r\nUpgrade: shout\r\nConnection: Upgrade\r\n\r\n" +
                     Upper(conn_->TakeBuffered()),
                 [self = shared_from_this()](bool ok) {
                   if (ok) self->Next();
                 });
  }

 private:
  static std::string Upper(std::string_view s) {
    std::string out(s);
    for (char& c : out) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
    return out;
  }
  void Next() {
    conn_->ReadSome([self = shared_from_this()](std::string_view data) {
      if (data.empty() || data == "bye") return self->conn_->Close();
      self->conn_->Write(Upper(data), [self](bool ok) {
        if (ok) self->Next();
      });
    });
  }
  std::shared_ptr<UpgradedConnection> conn_;
};

// A handler takes a connection over (HttpResponse::upgrade): the server writes
// nothing of its own, the bytes the client sent past the request come first
// (TakeBuffered), then the handler reads and writes the connection until it
// closes it; the idle timeout no longer applies to it.
TEST(HttpServerTest, AHandlerTakesAConnectionOver) {
  HttpServerOptions options;
  options.port = 0;
  options.idle_timeout = std::chrono::milliseconds(50);
  HttpServer server(options, [](const HttpRequest& req) {
    HttpResponse r;
    if (req.path == "/upgrade") {
      r.upgrade = [](std::shared_ptr<UpgradedConnection> conn) { std::make_shared<Shouter>(std::move(conn))->Start(); };
    }
    return r;
  });
  ASSERT_TRUE(server.Start().ok());
  boost::asio::io_context ioc;
  boost::asio::ip::tcp::socket socket(ioc);
  socket.connect({boost::asio::ip::make_address("127.0.0.1"), server.port()});
  auto read_exactly = [&](size_t n) {
    std::string got(n, '\0');
    boost::system::error_code ec;
    boost::asio::read(socket, boost::asio::buffer(got), ec);
    EXPECT_FALSE(ec) << ec.message();
    return got;
  };
  boost::asio::write(socket, boost::asio::buffer(std::string(
                                 "GET /upgrade HTTP/1.1\r\nHost: x\r\nConnection: Upgrade\r\nUpgrade: shout\r\n\r\nearly")));
  const std::string head = "HTTP/1.1 101 Switching Protocols\r\nUpgrade: shout\r\nConnection: Upgrade\r\n\r\nEARLY";
  EXPECT_EQ(read_exactly(head.size()), head);
  // Past the idle timeout (and its sweep, a tenth of it) a few times over: still served.
  for (int i = 0; i < 3; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(60));
    boost::asio::write(socket, boost::asio::buffer(std::string("more")));
    EXPECT_EQ(read_exactly(4), "MORE");
  }
  boost::asio::write(socket, boost::asio::buffer(std::string("bye")));
  std::array<char, 16> rest{};
  boost::system::error_code ec;
  const size_t n = socket.read_some(boost::asio::buffer(rest), ec);
  EXPECT_EQ(n, 0u);
  EXPECT_EQ(ec, boost::asio::error::eof);  // the handler closed it
  server.Stop();
}

}  // namespace
}  // namespace tessera
