// HttpBackend: a notebook's (or an inference server's) stand-in on 127.0.0.1
// for tests of the server's proxy: every HTTP request is answered 200 with
// what it was (JSON: method, target, body, authorization, cookie, host,
// x_forwarded_for, x_team_header, connection), /chunked in two chunks,
// /missing 404, and a WebSocket upgrade is accepted and echoes each message.
// A thread per connection; the destructor closes them all.
#pragma once

#include <boost/asio.hpp>
#include <boost/beast.hpp>
#include <boost/beast/websocket.hpp>
#include <nlohmann/json.hpp>

#include <atomic>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace tessera::testing {
namespace http_backend_detail {

namespace beast = boost::beast;
namespace http = beast::http;
namespace websocket = beast::websocket;
namespace net = boost::asio;
using tcp = net::ip::tcp;
using nlohmann::json;

class HttpBackend {
 public:
  HttpBackend() : acceptor_(ioc_, tcp::endpoint(net::ip::make_address("127.0.0.1"), 0)) {
    port_ = acceptor_.local_endpoint().port();
    accept_thread_ = std::thread([this] { AcceptLoop(); });
  }
  ~HttpBackend() {
    stopping_ = true;
    beast::error_code ec;
    {
      // Wakes the blocking accept (closing the acceptor from here would not).
      tcp::socket wake(ioc_);
      wake.connect(tcp::endpoint(net::ip::make_address("127.0.0.1"), port_), ec);
    }
    if (accept_thread_.joinable()) accept_thread_.join();
    acceptor_.close(ec);
    {
      std::lock_guard lock(mu_);
      for (auto& s : sockets_) s->shutdown(tcp::socket::shutdown_both, ec);
    }
    for (auto& t : threads_) t.join();
  }
  uint16_t port() const { return port_; }

 private:
  void AcceptLoop() {
    while (!stopping_) {
      auto socket = std::make_shared<tcp::socket>(ioc_);
      beast::error_code ec;
      acceptor_.accept(*socket, ec);
      if (ec || stopping_) return;
      std::lock_guard lock(mu_);
      sockets_.push_back(socket);
      threads_.emplace_back([this, socket] { Serve(*socket); });
    }
  }

  static void Serve(tcp::socket& socket) {
    beast::error_code ec;
    beast::flat_buffer buffer;
    http::request<http::string_body> req;
    http::read(socket, buffer, req, ec);
    if (ec) return;
    if (websocket::is_upgrade(req)) {
      websocket::stream<tcp::socket&> ws(socket);
      ws.accept(req, ec);
      while (!ec) {
        beast::flat_buffer message;
        ws.read(message, ec);
        if (ec) break;
        ws.text(ws.got_text());
        ws.write(message.data(), ec);
      }
      return;
    }
    auto header = [&](http::field f) { return std::string(req[f]); };
    const json seen = {{"method", std::string(req.method_string())},
                       {"target", std::string(req.target())},
                       {"body", req.body()},
                       {"authorization", header(http::field::authorization)},
                       {"cookie", header(http::field::cookie)},
                       {"host", header(http::field::host)},
                       {"x_forwarded_for", std::string(req["X-Forwarded-For"])},
                       {"x_team_header", std::string(req["X-Team-Header"])},
                       {"connection", header(http::field::connection)}};
    http::response<http::string_body> res(http::status::ok, 11);
    res.set(http::field::content_type, "application/json");
    res.set("X-Backend", "notebook");
    if (req.target() == "/chunked") {
      // Two chunks, written as they come: the proxy relays the framing.
      res.chunked(true);
      http::response_serializer<http::string_body> head(res);
      http::write_header(socket, head, ec);
      for (std::string part : {"part one, ", "part two"}) {
        net::write(socket, http::make_chunk(net::buffer(part)), ec);
      }
      net::write(socket, http::make_chunk_last(), ec);
    } else if (req.target() == "/missing") {
      res.result(http::status::not_found);
      res.body() = R"({"error":"no such page"})";
      res.prepare_payload();
      http::write(socket, res, ec);
    } else {
      res.body() = seen.dump();
      res.prepare_payload();
      http::write(socket, res, ec);
    }
    socket.shutdown(tcp::socket::shutdown_send, ec);
  }

  net::io_context ioc_;
  tcp::acceptor acceptor_;
  uint16_t port_ = 0;
  std::atomic<bool> stopping_{false};
  std::mutex mu_;
  std::vector<std::shared_ptr<tcp::socket>> sockets_;
  std::vector<std::thread> threads_;
  std::thread accept_thread_;
};

}  // namespace http_backend_detail

using http_backend_detail::HttpBackend;

}  // namespace tessera::testing
