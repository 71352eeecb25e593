// UpgradedStream: a connection HttpServer handed over (UpgradedConnection) as
// an Asio AsyncReadStream and AsyncWriteStream, so that Beast's websocket
// stream runs on it: `websocket::stream<UpgradedStream> ws(UpgradedStream(conn));`
// then `ws.async_accept(request, ...)` with the request the handler got.
//
// Thread-safety: as UpgradedConnection, on its executor only. One read and one
// write at a time (what Beast does).
#pragma once

#include <cstddef>
#include <memory>
#include <string>
#include <utility>

#include <boost/asio/async_result.hpp>
#include <boost/asio/buffer.hpp>
#include <boost/asio/error.hpp>
#include <boost/asio/post.hpp>
#include <boost/beast/core/error.hpp>
#include <boost/beast/core/role.hpp>

#include "http/http_server.h"

namespace tessera {

class UpgradedStream {
 public:
  using executor_type = boost::asio::any_io_executor;

  explicit UpgradedStream(std::shared_ptr<UpgradedConnection> connection)
      : connection_(std::move(connection)), pending_(std::make_shared<std::string>(connection_->TakeBuffered())) {}

  executor_type get_executor() { return connection_->executor(); }

  template <class MutableBufferSequence, class ReadHandler>
  auto async_read_some(const MutableBufferSequence& buffers, ReadHandler&& handler) {
    return boost::asio::async_initiate<ReadHandler, void(boost::beast::error_code, std::size_t)>(
        [this](auto h, const MutableBufferSequence& b) {
          auto shared = std::make_shared<decltype(h)>(std::move(h));
          if (!pending_->empty()) {
            const std::size_t n = boost::asio::buffer_copy(b, boost::asio::buffer(*pending_));
            pending_->erase(0, n);
            boost::asio::post(get_executor(), [shared, n] { std::move (*shared)(boost::beast::error_code{}, n); });
            return;
          }
          connection_->ReadSome([shared, b, pending = pending_](std::string_view data) {
            if (data.empty()) {
              std::move (*shared)(boost::beast::error_code(boost::asio::error::eof), 0);
              return;
            }
            const std::size_t n = boost::asio::buffer_copy(b, boost::asio::buffer(data.data(), data.size()));
            pending->append(data.substr(n));
            std::move (*shared)(boost::beast::error_code{}, n);
          });
        },
        handler, buffers);
  }

  template <class ConstBufferSequence, class WriteHandler>
  auto async_write_some(const ConstBufferSequence& buffers, WriteHandler&& handler) {
    return boost::asio::async_initiate<WriteHandler, void(boost::beast::error_code, std::size_t)>(
        [this](auto h, const ConstBufferSequence& b) {
          auto shared = std::make_shared<decltype(h)>(std::move(h));
          std::string data(boost::asio::buffer_size(b), '\0');
          boost::asio::buffer_copy(boost::asio::buffer(data), b);
          const std::size_t n = data.size();
          connection_->Write(std::move(data), [shared, n](bool ok) {
            if (!ok) {
              std::move (*shared)(boost::beast::error_code(boost::asio::error::connection_reset), 0);
              return;
            }
            std::move (*shared)(boost::beast::error_code{}, n);
          });
        },
        handler, buffers);
  }

  void Close() { connection_->Close(); }

 private:
  std::shared_ptr<UpgradedConnection> connection_;
  std::shared_ptr<std::string> pending_;  // read but not yet taken
};

// Beast's websocket stream ends its transport through these (found by ADL).
inline void beast_close_socket(UpgradedStream& stream) { stream.Close(); }

inline void teardown(boost::beast::role_type, UpgradedStream& stream, boost::beast::error_code& ec) {
  stream.Close();
  ec = {};
}

template <class TeardownHandler>
void async_teardown(boost::beast::role_type, UpgradedStream& stream, TeardownHandler&& handler) {
  stream.Close();
  boost::asio::post(stream.get_executor(),
                    [h = std::forward<TeardownHandler>(handler)]() mutable { std::move(h)(boost::beast::error_code{}); });
}

}  // namespace tessera
