#include "client/api_client.h"
#include "client/tls_client.h"

#include <sys/socket.h>

#include <atomic>

#include <boost/asio.hpp>
#include <boost/asio/ssl.hpp>
#include <boost/beast.hpp>
#include <boost/beast/ssl.hpp>
#include <fmt/format.h>
#include <openssl/ssl.h>
#include <openssl/x509v3.h>

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
  TlsClientOptions tls_options;
  std::string token;
  std::chrono::milliseconds request_timeout{0};
  net::io_context ioc;
  std::optional<ssl::context> ssl_ctx;
  std::optional<beast::tcp_stream> plain;
  std::optional<beast::ssl_stream<beast::tcp_stream>> secure;
  beast::flat_buffer buffer;
  // The connected socket, for Cancel from another thread (-1: none).
  std::atomic<int> socket_fd{-1};
  std::atomic<bool> cancelled{false};
  // How errors name the server and what they advise (DescribePeer).
  std::string peer = "the Tessera server";
  std::string unreachable_hint = " (is it running? `tessera up` starts one)";
  std::string ca_hint =
      "pass --certificate-authority FILE with the CA certificate that signed it, or --insecure-skip-tls-verify to "
      "skip the check (insecure)";

  Status Connect() {
    if (plain || secure) return Status::Ok();
    beast::error_code ec;
    tcp::resolver resolver(ioc);
    auto endpoints = resolver.resolve(host, port, ec);
    if (ec) return Status::Unavailable(fmt::format("cannot resolve {}: {}", host, ec.message()));
    if (tls) return ConnectTls(endpoints);
    plain.emplace(ioc);
    RunFor(*plain, kConnectTimeout, [&] {
      plain->async_connect(endpoints, [&](const beast::error_code& e, const tcp::endpoint&) { ec = e; });
    });
    if (ec) {
      Reset();
      return Unreachable(ec);
    }
    Blocking(plain->socket());
    socket_fd = plain->socket().native_handle();
    return Status::Ok();
  }

  Status ConnectTls(const tcp::resolver::results_type& endpoints) {
    if (!ssl_ctx) RETURN_IF_ERROR(MakeTlsContext());
    secure.emplace(ioc, *ssl_ctx);
    ExpectServerName(secure->native_handle());
    beast::error_code ec;
    RunFor(*secure, kConnectTimeout, [&] {
      beast::get_lowest_layer(*secure).async_connect(endpoints,
                                                     [&](const beast::error_code& e, const tcp::endpoint&) { ec = e; });
    });
    if (ec) {
      Reset();
      return Unreachable(ec);
    }
    RunFor(*secure, kConnectTimeout, [&] {
      secure->async_handshake(ssl::stream_base::client, [&](const beast::error_code& e) { ec = e; });
    });
    if (ec) {
      Status failure = HandshakeFailure(ec);
      Reset();
      return failure;
    }
    Blocking(beast::get_lowest_layer(*secure).socket());
    socket_fd = beast::get_lowest_layer(*secure).socket().native_handle();
    return Status::Ok();
  }

  Status MakeTlsContext() {
    ASSIGN_OR_RETURN(ssl::context context, MakeTlsClientContext(tls_options));
    ssl_ctx.emplace(std::move(context));
    return Status::Ok();
  }

  void ExpectServerName(SSL* ssl) const { tessera::ExpectServerName(ssl, host); }

  Status HandshakeFailure(const beast::error_code& ec) {
    const long verify = SSL_get_verify_result(secure->native_handle());
    if (verify == X509_V_ERR_HOSTNAME_MISMATCH || verify == X509_V_ERR_IP_ADDRESS_MISMATCH) {
      return Status::Unavailable(fmt::format(
          "the TLS certificate of {}:{} is not valid for {} ({}): use a server URL with a name or address the "
          "certificate lists in its subjectAltName",
          host, port, host, X509_verify_cert_error_string(verify)));
    }
    if (verify != X509_V_OK) {
      return Status::Unavailable(fmt::format(
          "the TLS certificate of {}:{} is not trusted ({}): {}", host, port, X509_verify_cert_error_string(verify),
          ca_hint));
    }
    return Status::Unavailable(fmt::format(
        "TLS handshake with {}:{} failed: {} (does the server serve HTTPS? an http:// URL reaches a plain-HTTP server)",
        host, port, ec.message()));
  }

  Status Unreachable(const beast::error_code& ec) const {
    return Status::Unavailable(
        fmt::format("cannot reach {} at {}:{}: {}{}", peer, host, port, ec.message(), unreachable_hint));
  }
  // An asynchronous operation leaves the socket non-blocking, and then each
  // blocking read first finds nothing and polls: two more system calls per
  // response. The timed paths (RunFor) make it non-blocking again.
  static void Blocking(tcp::socket& socket) {
    beast::error_code ignored;
    socket.native_non_blocking(false, ignored);
  }

  // Runs the asynchronous operations that `start` begins on `stream` until
  // they finish. After `timeout` (unless zero) the stream closes its socket and
  // they finish with beast::error::timeout; Cancel's shutdown ends them too.
  template <typename Stream, typename Start>
  void RunFor(Stream& stream, std::chrono::milliseconds timeout, Start&& start) {
    auto& socket = beast::get_lowest_layer(stream);
    if (timeout.count() > 0) {
      socket.expires_after(timeout);
    } else {
      socket.expires_never();
    }
    start();
    ioc.restart();
    ioc.run();
  }

  void Reset() {
    socket_fd = -1;
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
    // RFC 9110: the port too unless it is the scheme's default (servers build their own URLs from it).
    req.set(http::field::host, port == (tls ? "443" : "80") ? host : host + ":" + port);
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

ApiClient::ApiClient(std::string server, std::string token, TlsClientOptions tls,
                     std::chrono::milliseconds request_timeout)
    : impl_(std::make_unique<Impl>()), server_(std::move(server)) {
  impl_->request_timeout = request_timeout;
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
  impl_->tls_options = std::move(tls);
}

void ApiClient::Cancel() {
  impl_->cancelled = true;
  // shutdown(2) wakes a read blocked on the socket in another thread; the
  // descriptor itself stays open until that thread resets the connection.
  if (const int fd = impl_->socket_fd.load(); fd >= 0) ::shutdown(fd, SHUT_RDWR);
}

void ApiClient::DescribePeer(std::string peer, std::string ca_hint) {
  impl_->peer = std::move(peer);
  impl_->unreachable_hint.clear();
  impl_->ca_hint = std::move(ca_hint);
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
      if (impl_->request_timeout.count() == 0) {
        // Blocking calls when nothing is timed: the event loop costs more per
        // request (an epoll round, a speculative read that finds nothing yet).
        http::write(s, req, ec);
        if (!ec) http::read(s, impl_->buffer, res, ec);
        return 0;
      }
      impl_->RunFor(s, impl_->request_timeout, [&] {
        http::async_write(s, req, [&](const beast::error_code& written, size_t) {
          ec = written;
          if (!ec) http::async_read(s, impl_->buffer, res, [&](const beast::error_code& read, size_t) { ec = read; });
        });
      });
      return 0;
    });
    if (ec == beast::error::timeout) {
      impl_->Reset();
      return Err(Status::Unavailable(fmt::format(
          "no response from {} within {:g}s (--request-timeout): the server is overloaded or not answering; "
          "retry, or allow longer",
          server_, static_cast<double>(impl_->request_timeout.count()) / 1000.0)));
    }
    if (ec) {
      impl_->Reset();
      if (attempt == 0 && !impl_->cancelled) continue;
      return Err(Status::Unavailable(fmt::format("request to {} failed: {}", server_, ec.message())));
    }
    if (!res.keep_alive()) impl_->Reset();
    return ApiResponse{.status = static_cast<int>(res.result_int()),
                       .body = std::move(res.body()),
                       .content_type = std::string(res[http::field::content_type]),
                       .retry_after = std::string(res[http::field::retry_after])};
  }
  return Err(Status::Unavailable(fmt::format("request to {} failed", server_)));
}

Status ApiClient::Stream(const std::string& target, const std::function<bool(const std::string&)>& on_line) {
  RETURN_IF_ERROR(impl_->Connect());
  if (impl_->cancelled) {  // checked after the socket is published, so a racing Cancel is never missed
    impl_->Reset();
    return Status::Unavailable("the stream was cancelled");
  }
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
