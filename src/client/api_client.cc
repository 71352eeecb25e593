#include "client/api_client.h"

#include <boost/asio.hpp>
#include <boost/asio/ssl.hpp>
#include <boost/beast.hpp>
#include <boost/beast/ssl.hpp>
#include <fmt/format.h>

#include <optional>

namespace tessera {
namespace {

namespace beast = boost::beast;
namespace http = beast::http;
namespace net = boost::asio;
namespace ssl = net::ssl;
using tcp = net::ip::tcp;

}  // namespace

struct ApiClient::Impl {
  std::string host;
  std::string port;
  bool tls = false;
  bool insecure = false;
  std::string token;
  net::io_context ioc;
  std::optional<ssl::context> ssl_ctx;
  std::optional<beast::tcp_stream> plain;
  std::optional<beast::ssl_stream<beast::tcp_stream>> secure;
  beast::flat_buffer buffer;

  Status Connect() {
    if (plain || secure) return Status::Ok();
    beast::error_code ec;
    tcp::resolver resolver(ioc);
    auto endpoints = resolver.resolve(host, port, ec);
    if (ec) return Status::Unavailable(fmt::format("cannot resolve {}: {}", host, ec.message()));
    if (tls) {
      if (!ssl_ctx) {
        ssl_ctx.emplace(ssl::context::tls_client);
        ssl_ctx->set_default_verify_paths();
        ssl_ctx->set_verify_mode(insecure ? ssl::verify_none : ssl::verify_peer);
      }
      secure.emplace(ioc, *ssl_ctx);
      beast::get_lowest_layer(*secure).connect(endpoints, ec);
      if (!ec) secure->handshake(ssl::stream_base::client, ec);
    } else {
      plain.emplace(ioc);
      plain->connect(endpoints, ec);
    }
    if (ec) {
      Reset();
      return Status::Unavailable(fmt::format("cannot reach the Tessera server at {}:{}: {} (is it running? `tessera up` "
                                             "starts one)",
                                             host, port, ec.message()));
    }
    return Status::Ok();
  }
  void Reset() {
    plain.reset();
    secure.reset();
    buffer.clear();
  }
  template <typename F>
  auto WithStream(F&& f) {
    if (secure) return f(*secure);
    return f(*plain);
  }
  http::request<http::string_body> Make(const std::string& method, const std::string& target, const std::string& body,
                                        const std::string& content_type) {
    http::request<http::string_body> req{http::string_to_verb(method), target, 11};
    req.set(http::field::host, host);
    req.set(http::field::user_agent, "tessera-cli");
    req.set(http::field::accept, "application/json");
    if (!token.empty()) req.set(http::field::authorization, "Bearer " + token);
    if (!body.empty()) req.set(http::field::content_type, content_type);
    req.body() = body;
    req.keep_alive(true);
    req.prepare_payload();
    return req;
  }
};

ApiClient::ApiClient(std::string server, std::string token, bool insecure_skip_verify)
    : impl_(std::make_unique<Impl>()), server_(std::move(server)) {
  std::string rest = server_;
  if (rest.rfind("https://", 0) == 0) {
    impl_->tls = true;
    rest = rest.substr(8);
  } else if (rest.rfind("http://", 0) == 0) {
    rest = rest.substr(7);
  }
  while (!rest.empty() && rest.back() == '/') rest.pop_back();
  const auto colon = rest.rfind(':');
  impl_->host = colon == std::string::npos ? rest : rest.substr(0, colon);
  impl_->port = colon == std::string::npos ? (impl_->tls ? "443" : "80") : rest.substr(colon + 1);
  impl_->token = std::move(token);
  impl_->insecure = insecure_skip_verify;
}

ApiClient::~ApiClient() = default;

Result<ApiResponse> ApiClient::Request(const std::string& method, const std::string& target, const std::string& body,
                                       const std::string& content_type) {
  // One retry: a kept-alive connection may have been closed by the server meanwhile.
  for (int attempt = 0; attempt < 2; ++attempt) {
    RETURN_IF_ERROR(impl_->Connect());
    auto req = impl_->Make(method, target, body, content_type);
    beast::error_code ec;
    http::response<http::string_body> res;
    impl_->WithStream([&](auto& s) {
      http::write(s, req, ec);
      if (!ec) http::read(s, impl_->buffer, res, ec);
      return 0;
    });
    if (ec) {
      impl_->Reset();
      if (attempt == 0) continue;
      return Err(Status::Unavailable(fmt::format("request to {} failed: {}", server_, ec.message())));
    }
    if (!res.keep_alive()) impl_->Reset();
    return ApiResponse{.status = static_cast<int>(res.result_int()),
                       .body = std::move(res.body()),
                       .content_type = std::string(res[http::field::content_type])};
  }
  return Err(Status::Unavailable(fmt::format("request to {} failed", server_)));
}

Status ApiClient::Stream(const std::string& target, const std::function<bool(const std::string&)>& on_line) {
  RETURN_IF_ERROR(impl_->Connect());
  auto req = impl_->Make("GET", target, "", "");
  beast::error_code ec;
  http::response_parser<http::buffer_body> parser;
  parser.body_limit(boost::none);
  std::string pending;
  std::array<char, 8192> chunk{};
  Status result = Status::Ok();
  impl_->WithStream([&](auto& s) {
    http::write(s, req, ec);
    if (ec) return 0;
    http::read_header(s, impl_->buffer, parser, ec);
    if (ec) return 0;
    if (parser.get().result_int() != 200) {
      // A non-streamed error: read it whole and report it as a line.
      std::string body;
      while (!parser.is_done() && !ec) {
        parser.get().body().data = chunk.data();
        parser.get().body().size = chunk.size();
        http::read(s, impl_->buffer, parser, ec);
        if (ec == http::error::need_buffer) ec = {};
        body.append(chunk.data(), chunk.size() - parser.get().body().size);
      }
      on_line(body);
      result = Status::Unavailable(fmt::format("watch refused with HTTP {}", parser.get().result_int()));
      return 0;
    }
    while (!parser.is_done()) {
      parser.get().body().data = chunk.data();
      parser.get().body().size = chunk.size();
      // read_some: hand over each chunk as it arrives, without waiting for the buffer to fill.
      http::read_some(s, impl_->buffer, parser, ec);
      if (ec == http::error::need_buffer) ec = {};
      if (ec) break;
      pending.append(chunk.data(), chunk.size() - parser.get().body().size);
      size_t nl;
      while ((nl = pending.find('\n')) != std::string::npos) {
        if (!on_line(pending.substr(0, nl))) return 0;
        pending.erase(0, nl + 1);
      }
    }
    return 0;
  });
  impl_->Reset();  // a stream is not reused
  if (ec && ec != http::error::end_of_stream) {
    return Status::Unavailable(fmt::format("watch stream from {} ended: {}", server_, ec.message()));
  }
  return result;
}

}  // namespace tessera
