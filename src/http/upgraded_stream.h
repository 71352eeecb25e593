// UpgradedStream: a connection the server handed over (UpgradedConnection,
// http_server.h) as an Asio AsyncStream, so that Beast's websocket::stream
// speaks WebSocket on it (websocket::stream<UpgradedStream>): the handshake
// answer, framing, masking, ping and close are Beast's, not ours.
//
// Bytes the client sent past its request (TakeBuffered) are read first.
// Completions are always posted to the connection's executor, never run
// inside the call that starts the operation. One read and one write at a
// time, as for a socket.
//
// Thread-safety: use it on the connection's I/O thread only (executor()).
#pragma once

#include <boost/asio.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/websocket/teardown.hpp>

#include <memory>
#include <string>
#include <utility>

#include "http/http_server.h"

namespace tessera {

class UpgradedStream {
 public:
  using executor_type = boost::asio::any_io_executor;

  explicit UpgradedStream(std::shared_ptr<UpgradedConnection> connection)
      : connection_(std::move(connection)), pending_(connection_->TakeBuffered()) {}

  executor_type get_executor() { return connection_->executor(); }
  void Close() { connection_->Close(); }

  template <class MutableBuffers, class Token>
  auto async_read_some(const MutableBuffers& buffers, Token&& token) {
    return boost::asio::async_initiate<Token, void(boost::beast::error_code, std::size_t)>(
        [this](auto handler, const MutableBuffers& into) {
          auto done = std::make_shared<decltype(handler)>(std::move(handler));
          const executor_type ex = get_executor();
          if (!pending_.empty()) {
            const std::size_t n = boost::asio::buffer_copy(into, boost::asio::buffer(pending_));
            pending_.erase(0, n);
            boost::asio::post(ex, [done, n] { std::move (*done)(boost::beast::error_code(), n); });
            return;
          }
          connection_->ReadSome([this, done, into, ex](std::string_view data) {
            if (data.empty()) {
              boost::asio::post(ex, [done] { std::move (*done)(boost::asio::error::eof, 0); });
              return;
            }
            const std::size_t n = boost::asio::buffer_copy(into, boost::asio::buffer(data.data(), data.size()));
            pending_.append(data.substr(n));
            boost::asio::post(ex, [done, n] { std::move (*done)(boost::beast::error_code(), n); });
          });
        },
        token, buffers);
  }

  template <class ConstBuffers, class Token>
  auto async_write_some(const ConstBuffers& buffers, Token&& token) {
    return boost::asio::async_initiate<Token, void(boost::beast::error_code, std::size_t)>(
        [this](auto handler, const ConstBuffers& from) {
          auto done = std::make_shared<decltype(handler)>(std::move(handler));
          const executor_type ex = get_executor();
          std::string data(boost::asio::buffer_size(from), '\0');
          boost::asio::buffer_copy(boost::asio::buffer(data), from);
          const std::size_t n = data.size();
          connection_->Write(std::move(data), [done, n, ex](bool ok) {
            boost::asio::post(ex, [done, n, ok] {
              std::move (*done)(ok ? boost::beast::error_code() : boost::beast::error_code(boost::asio::error::broken_pipe),
                                ok ? n : 0);
            });
          });
        },
        token, buffers);
  }

 private:
  std::shared_ptr<UpgradedConnection> connection_;
  std::string pending_;  // read from the connection, not yet taken
};

// Beast's close of the lowest layer (beast::close_socket): the connection closes.
inline void beast_close_socket(UpgradedStream& stream) { stream.Close(); }

// Beast's WebSocket close: the connection closes.
inline void teardown(boost::beast::role_type, UpgradedStream& stream, boost::beast::error_code& ec) {
  stream.Close();
  ec = {};
}

template <class TeardownHandler>
void async_teardown(boost::beast::role_type, UpgradedStream& stream, TeardownHandler&& handler) {
  stream.Close();
  boost::asio::post(stream.get_executor(),
                    [h = std::forward<TeardownHandler>(handler)]() mutable { std::move(h)(boost::beast::error_code()); });
}

}  // namespace tessera
