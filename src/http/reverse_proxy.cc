#include "http/reverse_proxy.h"

#include <boost/asio.hpp>
#include <boost/beast.hpp>
#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <array>
#include <cctype>
#include <memory>
#include <optional>

namespace tessera {
namespace {

namespace beast = boost::beast;
namespace http = beast::http;
namespace net = boost::asio;
using tcp = net::ip::tcp;

// As Kubernetes' proxy dialer (and Go's default transport).
constexpr auto kDialTimeout = std::chrono::seconds(30);
constexpr size_t kRelayBytes = 64 * 1024;  // per direction: what is in flight at most

std::string Lower(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

bool HopByHop(std::string_view lower_name) {
  static constexpr std::array<std::string_view, 9> kNames = {
      "connection", "proxy-connection", "keep-alive", "proxy-authenticate", "proxy-authorization",
      "te",         "trailer",          "transfer-encoding", "upgrade"};
  return std::find(kNames.begin(), kNames.end(), lower_name) != kNames.end();
}

// The lower-case tokens of a Connection header ("keep-alive, Upgrade").
std::vector<std::string> ConnectionTokens(std::string_view value) {
  std::vector<std::string> out;
  while (!value.empty()) {
    const auto comma = value.find(',');
    std::string_view token = value.substr(0, comma);
    while (!token.empty() && std::isspace(static_cast<unsigned char>(token.front()))) token.remove_prefix(1);
    while (!token.empty() && std::isspace(static_cast<unsigned char>(token.back()))) token.remove_suffix(1);
    if (!token.empty()) out.push_back(Lower(token));
    if (comma == std::string_view::npos) break;
    value.remove_prefix(comma + 1);
  }
  return out;
}

bool Contains(const std::vector<std::string>& names, std::string_view name) {
  return std::find(names.begin(), names.end(), name) != names.end();
}

std::string HostPort(const ProxyBackend& b) {
  return b.host.find(':') != std::string::npos ? fmt::format("[{}]:{}", b.host, b.port)
                                                : fmt::format("{}:{}", b.host, b.port);
}

// One proxied exchange, on the client connection's I/O thread: the client
// connection, the backend socket, and the bytes between them.
class Exchange : public std::enable_shared_from_this<Exchange> {
 public:
  Exchange(std::shared_ptr<UpgradedConnection> client, ProxyBackend backend, std::string request, bool upgrade,
           bool head, ProxyAnswered answered)
      : client_(std::move(client)),
        backend_(std::move(backend)),
        request_(std::move(request)),
        upgrade_(upgrade),
        head_(head),
        answered_(std::move(answered)),
        socket_(client_->executor()),
        timer_(client_->executor()) {}

  void Start() {
    beast::error_code ec;
    const auto address = net::ip::make_address(backend_.host, ec);
    if (ec) return Fail(fmt::format("error trying to reach service: \"{}\" is not an IP address", backend_.host));
    timer_.expires_after(kDialTimeout);
    timer_.async_wait([self = shared_from_this()](beast::error_code wait_ec) {
      if (wait_ec) return;
      self->dial_timed_out_ = true;
      beast::error_code ignored;
      self->socket_.close(ignored);
    });
    socket_.async_connect(tcp::endpoint(address, backend_.port), [self = shared_from_this()](beast::error_code c_ec) {
      self->timer_.cancel();
      if (c_ec) {
        return self->Fail(fmt::format("error trying to reach service: dial tcp {}: connect: {}", HostPort(self->backend_),
                                      self->dial_timed_out_ ? "i/o timeout" : Lower(c_ec.message())));
      }
      beast::error_code ignored;
      self->socket_.set_option(tcp::no_delay(true), ignored);
      net::async_write(self->socket_, net::buffer(self->request_), [self](beast::error_code w_ec, size_t) {
        if (w_ec) {
          return self->Fail(fmt::format("error trying to reach service: write tcp {}: {}", HostPort(self->backend_),
                                        Lower(w_ec.message())));
        }
        self->request_.clear();
        self->ReadHead();
      });
    });
  }

 private:
  void ReadHead() {
    parser_.emplace();
    parser_->header_limit(64 * 1024);
    if (head_) parser_->skip(true);  // a HEAD's answer has no body, whatever its Content-Length says
    http::async_read_header(socket_, buffer_, *parser_, [self = shared_from_this()](beast::error_code ec, size_t) {
      if (ec) {
        return self->Fail(fmt::format("error trying to reach service: {} answered no HTTP response ({})",
                                      HostPort(self->backend_), Lower(ec.message())));
      }
      self->OnHead();
    });
  }

  void OnHead() {
    const auto& res = parser_->get();
    const int code = static_cast<int>(res.result_int());
    const bool upgraded = upgrade_ && code == 101;
    std::string reason(res.reason());
    if (reason.empty()) reason = std::string(http::obsolete_reason(res.result()));
    std::string head = fmt::format("HTTP/1.1 {} {}\r\n", code, reason);
    const std::vector<std::string> named = ConnectionTokens(res[http::field::connection]);
    for (const auto& field : res) {
      const std::string name = Lower(field.name_string());
      // The body is relayed in the backend's own framing: its Transfer-Encoding
      // and Content-Length still describe it.
      if ((HopByHop(name) && name != "transfer-encoding") || Contains(named, name)) continue;
      head += fmt::format("{}: {}\r\n", std::string_view(field.name_string()), std::string_view(field.value()));
    }
    if (upgraded) {
      head += fmt::format("Connection: Upgrade\r\nUpgrade: {}\r\n", std::string_view(res[http::field::upgrade]));
    } else {
      head += "Connection: close\r\n";
    }
    head += "\r\n";
    std::string body_start = beast::buffers_to_string(buffer_.data());
    buffer_.consume(buffer_.size());
    if (!upgraded) {
      if (parser_->is_done()) {
        remaining_ = 0;  // HEAD, 1xx, 204, 304, Content-Length: 0
      } else if (const auto length = parser_->content_length()) {
        remaining_ = *length;
      }
      if (remaining_ && body_start.size() > *remaining_) body_start.resize(*remaining_);
      if (remaining_) *remaining_ -= body_start.size();
    }
    Answered(code, "");
    client_->Write(head + body_start, [self = shared_from_this(), upgraded](bool ok) {
      if (!ok) return self->Finish();
      if (upgraded) return self->StartTunnel();
      if (self->remaining_ == 0u) return self->Finish();
      self->RelayBody();
    });
  }

  // Backend to client until the body's end (its length, or the backend closing).
  void RelayBody() {
    if (!from_backend_) from_backend_ = std::make_unique<std::array<char, kRelayBytes>>();
    const size_t want = remaining_ ? std::min<uint64_t>(*remaining_, kRelayBytes) : kRelayBytes;
    socket_.async_read_some(net::buffer(from_backend_->data(), want),
                            [self = shared_from_this()](beast::error_code ec, size_t n) {
                              if (ec || n == 0) return self->Finish();
                              if (self->remaining_) *self->remaining_ -= n;
                              self->client_->Write(std::string(self->from_backend_->data(), n), [self](bool ok) {
                                if (!ok || self->remaining_ == 0u) return self->Finish();
                                self->RelayBody();
                              });
                            });
  }

  // After a 101: what the client sent already, then both ways until either side closes.
  void StartTunnel() {
    to_backend_ = client_->TakeBuffered();
    if (to_backend_.empty()) {
      ClientToBackend();
    } else {
      net::async_write(socket_, net::buffer(to_backend_), [self = shared_from_this()](beast::error_code ec, size_t) {
        if (ec) return self->Finish();
        self->ClientToBackend();
      });
    }
    BackendToClient();
  }

  void ClientToBackend() {
    client_->ReadSome([self = shared_from_this()](std::string_view data) {
      if (data.empty()) return self->Finish();
      self->to_backend_.assign(data);
      net::async_write(self->socket_, net::buffer(self->to_backend_), [self](beast::error_code ec, size_t) {
        if (ec) return self->Finish();
        self->ClientToBackend();
      });
    });
  }

  void BackendToClient() {
    if (!from_backend_) from_backend_ = std::make_unique<std::array<char, kRelayBytes>>();
    socket_.async_read_some(net::buffer(*from_backend_), [self = shared_from_this()](beast::error_code ec, size_t n) {
      if (ec || n == 0) return self->Finish();
      self->client_->Write(std::string(self->from_backend_->data(), n), [self](bool ok) {
        if (!ok) return self->Finish();
        self->BackendToClient();
      });
    });
  }

  void Answered(int code, const std::string& error) {
    if (answered_) std::exchange(answered_, nullptr)(code, error);
  }

  // The backend was not reached: a 503 Status, then the connection closes.
  void Fail(std::string message) {
    Answered(503, message);
    const std::string body = ProxyStatusJson(503, "ServiceUnavailable", message);
    client_->Write(fmt::format("HTTP/1.1 503 Service Unavailable\r\nServer: tessera\r\nContent-Type: application/json\r\n"
                               "Content-Length: {}\r\nConnection: close\r\n\r\n{}",
                               body.size(), body),
                   [self = shared_from_this()](bool) { self->Finish(); });
  }

  void Finish() {
    if (finished_) return;
    finished_ = true;
    beast::error_code ignored;
    timer_.cancel();
    socket_.shutdown(tcp::socket::shutdown_both, ignored);
    socket_.close(ignored);
    client_->Close();
  }

  std::shared_ptr<UpgradedConnection> client_;
  ProxyBackend backend_;
  std::string request_;
  const bool upgrade_;
  const bool head_;
  ProxyAnswered answered_;
  tcp::socket socket_;
  net::steady_timer timer_;
  bool dial_timed_out_ = false;
  bool finished_ = false;
  beast::flat_buffer buffer_;
  std::optional<http::response_parser<http::empty_body>> parser_;
  std::optional<uint64_t> remaining_;  // of the body, when its length is known
  std::unique_ptr<std::array<char, kRelayBytes>> from_backend_;
  std::string to_backend_;
};

}  // namespace

std::string ProxyStatusJson(int code, std::string_view reason, std::string_view message) {
  const nlohmann::json status = {{"kind", "Status"},       {"apiVersion", "v1"}, {"metadata", nlohmann::json::object()},
                                 {"status", "Failure"},    {"message", message}, {"reason", reason},
                                 {"code", code}};
  return status.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

HttpResponse ReverseProxy(const HttpRequest& request, ProxyBackend backend, std::string target,
                          const std::vector<std::string>& drop_headers, ProxyAnswered answered) {
  const std::vector<std::string> named = ConnectionTokens(request.Header("connection"));
  const std::string upgrade_to = request.Header("upgrade");
  const bool upgrade = Contains(named, "upgrade") && !upgrade_to.empty();
  if (target.empty() || target.front() != '/') target.insert(target.begin(), '/');
  std::string text = fmt::format("{} {} HTTP/1.1\r\nHost: {}\r\n", request.method, target, HostPort(backend));
  std::string forwarded_for;
  for (const auto& [name, value] : request.headers) {
    if (HopByHop(name) || Contains(named, name) || Contains(drop_headers, name)) continue;
    if (name == "host" || name == "content-length" || name == "expect") continue;  // the server read the body already
    if (name == "x-forwarded-for") {
      forwarded_for = value;
      continue;
    }
    text += fmt::format("{}: {}\r\n", name, value);
  }
  if (const auto colon = request.remote.rfind(':'); colon != std::string::npos) {
    const std::string ip = request.remote.substr(0, colon);
    forwarded_for = forwarded_for.empty() ? ip : forwarded_for + ", " + ip;
  }
  if (!forwarded_for.empty()) text += fmt::format("X-Forwarded-For: {}\r\n", forwarded_for);
  if (upgrade) {
    text += fmt::format("Connection: Upgrade\r\nUpgrade: {}\r\n", upgrade_to);
  } else {
    text += "Connection: close\r\n";
  }
  if (!request.body.empty() || request.method == "POST" || request.method == "PUT" || request.method == "PATCH") {
    text += fmt::format("Content-Length: {}\r\n", request.body.size());
  }
  text += "\r\n";
  text += request.body;
  HttpResponse r;
  r.upgrade = [backend = std::move(backend), text = std::move(text), upgrade, head = request.method == "HEAD",
               answered = std::move(answered)](std::shared_ptr<UpgradedConnection> client) mutable {
    std::make_shared<Exchange>(std::move(client), std::move(backend), std::move(text), upgrade, head,
                               std::move(answered))
        ->Start();
  };
  return r;
}

}  // namespace tessera
