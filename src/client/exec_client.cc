#include "client/exec_client.h"

#include <fmt/format.h>
#include <openssl/ssl.h>
#include <unistd.h>

#include <deque>
#include <istream>
#include <memory>
#include <ostream>
#include <thread>

#include <boost/asio/connect.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/ssl.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <boost/beast/ssl.hpp>
#include <boost/beast/websocket.hpp>
#include <boost/beast/websocket/ssl.hpp>
#include <iostream>
#include <nlohmann/json.hpp>

namespace tessera {
namespace {

using nlohmann::json;
namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
namespace websocket = beast::websocket;
namespace ssl = asio::ssl;
using tcp = asio::ip::tcp;

struct Url {
  bool tls = false;
  std::string host, port;
};

Result<Url> ParseServer(const std::string& server) {
  Url u;
  std::string rest;
  if (server.starts_with("https://")) {
    u.tls = true;
    rest = server.substr(8);
  } else if (server.starts_with("http://")) {
    rest = server.substr(7);
  } else {
    return Err(Status::InvalidArgument(fmt::format("server {} is not an http:// or https:// URL", server)));
  }
  rest = rest.substr(0, rest.find('/'));
  const size_t colon = rest.rfind(':');
  if (colon != std::string::npos && (rest.find(']') == std::string::npos || rest.find(']') < colon)) {
    u.host = rest.substr(0, colon);
    u.port = rest.substr(colon + 1);
  } else {
    u.host = rest;
    u.port = u.tls ? "443" : "80";
  }
  if (u.host.size() > 2 && u.host.front() == '[') u.host = u.host.substr(1, u.host.size() - 2);
  return u;
}

// The exit code the final Status says, as kubectl reads it.
Result<int> ExitCodeOf(const std::string& status_text) {
  const json s = json::parse(status_text, nullptr, false);
  if (!s.is_object()) return Err(Status::Internal(fmt::format("the server's exec status is not JSON: {}", status_text)));
  if (s.value("status", "") == "Success") return 0;
  if (s.value("reason", "") == "NonZeroExitCode") {
    const json details = s.value("details", json::object());
    for (const json& c : details.is_object() ? details.value("causes", json::array()) : json::array()) {
      if (c.is_object() && c.value("reason", "") == "ExitCode") return std::atoi(c.value("message", "1").c_str());
    }
  }
  return Err(Status::Internal(s.value("message", status_text)));
}

template <class Stream>
class Session {
 public:
  Session(asio::io_context& ioc, Stream& ws, const ExecStreams& streams, bool v5)
      : ioc_(ioc), ws_(ws), streams_(streams), v5_(v5) {}

  Result<int> Run() {
    std::thread reader;
    if (streams_.in) {
      // Stdin is read off the I/O thread; each chunk is posted to it.
      reader = std::thread([this] {
        char buf[16 * 1024];
        for (;;) {
          std::streamsize n = 0;
          if (streams_.in == &std::cin) {
            const ssize_t r = ::read(STDIN_FILENO, buf, sizeof buf);
            n = r > 0 ? r : 0;
          } else {
            streams_.in->read(buf, sizeof buf);
            n = streams_.in->gcount();
          }
          if (n <= 0) break;
          asio::post(ioc_, [this, data = std::string(1, '\0') + std::string(buf, static_cast<size_t>(n))]() mutable {
            Send(std::move(data));
          });
        }
        asio::post(ioc_, [this] {
          if (v5_) Send(std::string("\xff\x00", 2));  // close stdin
        });
      });
    }
    Read();
    ioc_.run();
    // A terminal's read may never return: that thread ends with the program.
    if (reader.joinable()) streams_.in == &std::cin ? reader.detach() : reader.join();
    if (!error_.empty()) return Err(Status::Unavailable(error_));
    if (!status_) return Err(Status::Unavailable("the exec stream ended without the command's status"));
    return ExitCodeOf(*status_);
  }

 private:
  void Read() {
    ws_.async_read(in_, [this](beast::error_code ec, std::size_t) {
      if (ec) {
        if (ec != websocket::error::closed && ec != asio::error::eof && !status_) error_ = "exec: " + ec.message();
        done_ = true;
        ioc_.stop();
        return;
      }
      std::string data = beast::buffers_to_string(in_.data());
      in_.consume(in_.size());
      if (!data.empty()) {
        const std::string payload = data.substr(1);
        switch (data[0]) {
          case 1:
            if (streams_.out) streams_.out->write(payload.data(), static_cast<std::streamsize>(payload.size())).flush();
            break;
          case 2:
            if (streams_.err) streams_.err->write(payload.data(), static_cast<std::streamsize>(payload.size())).flush();
            break;
          case 3: status_ = payload; break;
          default: break;
        }
      }
      Read();
    });
  }

  void Send(std::string frame) {
    if (done_) return;
    out_.push_back(std::move(frame));
    if (out_.size() == 1) WriteNext();
  }
  void WriteNext() {
    ws_.async_write(asio::buffer(out_.front()), [this](beast::error_code ec, std::size_t) {
      out_.pop_front();
      if (ec) {
        out_.clear();
        return;
      }
      if (!out_.empty()) WriteNext();
    });
  }

  asio::io_context& ioc_;
  Stream& ws_;
  ExecStreams streams_;
  bool v5_;
  beast::flat_buffer in_;
  std::deque<std::string> out_;
  std::optional<std::string> status_;
  std::string error_;
  bool done_ = false;
};

constexpr const char* kProtocols = "v5.channel.k8s.io, v4.channel.k8s.io";

// The handshake's refusal in the server's words (its Status message), with
// the code its HTTP status says.
Status Refusal(const http::response<http::string_body>& res) {
  const json s = json::parse(res.body(), nullptr, false);
  const std::string message = s.is_object() && s.value("message", json()).is_string()
                                  ? s["message"].get<std::string>()
                                  : fmt::format("the server answered {}: {}", res.result_int(), res.body());
  switch (res.result_int()) {
    case 400: return Status::InvalidArgument(message);
    case 401: return Status::Unauthenticated(message);
    case 403: return Status::PermissionDenied(message);
    case 404: return Status::NotFound(message);
    default: return Status::Unavailable(message);
  }
}

template <class Stream>
Result<int> Handshake(asio::io_context& ioc, Stream& ws, const Url& url, const ClientConfig& config,
                      const std::string& target, const ExecStreams& streams) {
  ws.set_option(websocket::stream_base::decorator([&config](websocket::request_type& req) {
    req.set(http::field::sec_websocket_protocol, kProtocols);
    if (!config.token.empty()) req.set(http::field::authorization, "Bearer " + config.token);
    req.set(http::field::user_agent, "tessera-exec");
  }));
  websocket::response_type res;
  beast::error_code ec;
  ws.handshake(res, url.host + ":" + url.port, target, ec);
  if (ec) {
    if (ec == websocket::error::upgrade_declined) return Err(Refusal(res));
    return Err(Status::Unavailable(fmt::format("exec: the WebSocket handshake with {} failed: {}", url.host, ec.message())));
  }
  const bool v5 = res[http::field::sec_websocket_protocol] == "v5.channel.k8s.io";
  ws.binary(true);
  Session<Stream> session(ioc, ws, streams, v5);
  return session.Run();
}

}  // namespace

Result<int> ExecInPod(const ClientConfig& config, const std::string& target, const ExecStreams& streams) {
  ASSIGN_OR_RETURN(Url url, ParseServer(config.server));
  asio::io_context ioc;
  tcp::resolver resolver(ioc);
  beast::error_code ec;
  auto endpoints = resolver.resolve(url.host, url.port, ec);
  if (ec) return Err(Status::Unavailable(fmt::format("cannot resolve {}: {}", url.host, ec.message())));
  if (!url.tls) {
    websocket::stream<tcp::socket> ws(ioc);
    asio::connect(ws.next_layer(), endpoints, ec);
    if (ec) return Err(Status::Unavailable(fmt::format("cannot reach the Tessera server at {}:{}: {}", url.host, url.port, ec.message())));
    return Handshake(ioc, ws, url, config, target, streams);
  }
  if (!config.tls.certificate_authority.empty() && config.tls.insecure_skip_tls_verify) {
    return Err(Status::InvalidArgument(
        "specifying a root certificates file with the insecure flag is not allowed: drop --insecure-skip-tls-verify or "
        "--certificate-authority"));
  }
  ssl::context context(ssl::context::tls_client);
  if (config.tls.insecure_skip_tls_verify) {
    context.set_verify_mode(ssl::verify_none);
  } else {
    context.set_verify_mode(ssl::verify_peer);
    if (config.tls.certificate_authority.empty()) {
      context.set_default_verify_paths(ec);
    } else {
      context.load_verify_file(config.tls.certificate_authority, ec);
      X509_STORE_set_flags(SSL_CTX_get_cert_store(context.native_handle()), X509_V_FLAG_PARTIAL_CHAIN);
    }
    if (ec) return Err(Status::InvalidArgument(fmt::format("cannot load the CA certificates: {}", ec.message())));
    context.set_verify_callback(ssl::host_name_verification(url.host));
  }
  websocket::stream<ssl::stream<tcp::socket>> ws(ioc, context);
  asio::connect(beast::get_lowest_layer(ws), endpoints, ec);
  if (ec) return Err(Status::Unavailable(fmt::format("cannot reach the Tessera server at {}:{}: {}", url.host, url.port, ec.message())));
  SSL_set_tlsext_host_name(ws.next_layer().native_handle(), url.host.c_str());
  ws.next_layer().handshake(ssl::stream_base::client, ec);
  if (ec) return Err(Status::Unavailable(fmt::format("TLS handshake with {} failed: {}", url.host, ec.message())));
  return Handshake(ioc, ws, url, config, target, streams);
}

}  // namespace tessera
