#include "cli/commands/port_forward_command.h"

#include <boost/asio.hpp>
#include <boost/asio/ssl.hpp>
#include <boost/beast.hpp>
#include <boost/beast/ssl.hpp>
#include <boost/beast/websocket.hpp>
#include <boost/beast/websocket/ssl.hpp>
#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <array>
#include <cctype>
#include <charconv>
#include <chrono>
#include <optional>
#include <type_traits>
#include <csignal>
#include <memory>

#include "cli/commands/exit_codes.h"
#include "cli/commands/server_errors.h"
#include "client/tls_client.h"

namespace tessera {
namespace {

namespace beast = boost::beast;
namespace http = beast::http;
namespace websocket = beast::websocket;
namespace net = boost::asio;
using tcp = net::ip::tcp;
using nlohmann::json;

constexpr std::string_view kProtocol = "v4.channel.k8s.io";
constexpr size_t kRelayBytes = 32 * 1024;

std::optional<uint16_t> PortNumber(std::string_view text, bool zero_ok) {
  int n = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), n);
  if (text.empty() || ec != std::errc() || end != text.data() + text.size() || n < (zero_ok ? 0 : 1) || n > 65535) {
    return std::nullopt;
  }
  return static_cast<uint16_t>(n);
}

struct Server {
  std::string host;
  std::string port;
  bool tls = false;
};

Result<Server> ParseServer(const std::string& url) {
  std::string_view rest = url;
  const bool tls = rest.starts_with("https://");
  if (tls) rest.remove_prefix(8);
  if (rest.starts_with("http://")) rest.remove_prefix(7);
  rest = rest.substr(0, rest.find('/'));
  const auto colon = rest.rfind(':');
  if (rest.empty()) return Err(Status::InvalidArgument(fmt::format("server \"{}\" names no host", url)));
  if (colon == std::string_view::npos || rest.back() == ']') return Server{std::string(rest), tls ? "443" : "80", tls};
  std::string host(rest.substr(0, colon));
  if (host.starts_with('[') && host.ends_with(']')) host = host.substr(1, host.size() - 2);
  return Server{host, std::string(rest.substr(colon + 1)), tls};
}

// The message of a Status body, or the body.
std::string StatusMessage(const std::string& body) {
  const json status = json::parse(body, nullptr, false);
  if (status.is_object() && status.contains("message") && status["message"].is_string()) {
    return status["message"].get<std::string>();
  }
  return body;
}

struct Shared {
  const CommandContext& ctx;
  Server server;
  std::string token;
  std::string target;  // /api/v1/namespaces/NS/pods/NAME/portforward?ports=
  net::ssl::context* tls = nullptr;  // an https:// server's
};

using PlainStream = beast::tcp_stream;
using TlsStream = beast::ssl_stream<beast::tcp_stream>;

// One local connection and its WebSocket to the server, over `Stream` (TCP, or
// TLS to an https:// server).
template <class Stream>
class Link : public std::enable_shared_from_this<Link<Stream>> {
 public:
  Link(net::io_context& ioc, tcp::socket local, const Shared& shared, uint16_t remote)
      : local_(std::move(local)), ws_(MakeWs(ioc, shared)), shared_(shared), remote_(remote), resolver_(ioc) {}

  static websocket::stream<Stream> MakeWs(net::io_context& ioc, const Shared& shared) {
    if constexpr (std::is_same_v<Stream, TlsStream>) {
      return websocket::stream<Stream>(ioc, *shared.tls);
    } else {
      return websocket::stream<Stream>(ioc);
    }
  }

  void Start() {
    *shared_.ctx.out << fmt::format("Handling connection for {}\n", remote_) << std::flush;
    resolver_.async_resolve(shared_.server.host, shared_.server.port,
                            [self = this->shared_from_this()](beast::error_code ec, tcp::resolver::results_type results) {
                              if (ec) return self->Fail(fmt::format("cannot resolve the server: {}", ec.message()));
                              beast::get_lowest_layer(self->ws_).async_connect(
                                  results, [self](beast::error_code c_ec, const tcp::endpoint&) {
                                    if (c_ec) return self->Fail(fmt::format("cannot reach the server: {}", c_ec.message()));
                                    self->SecureThenHandshake();
                                  });
                            });
  }

 private:
  // TLS first to an https:// server, checking its certificate's name.
  void SecureThenHandshake() {
    if constexpr (std::is_same_v<Stream, TlsStream>) {
      ExpectServerName(ws_.next_layer().native_handle(), shared_.server.host);
      ws_.next_layer().async_handshake(net::ssl::stream_base::client,
                                       [self = this->shared_from_this()](beast::error_code ec) {
                                         if (ec) return self->Fail(fmt::format("TLS with the server: {}", ec.message()));
                                         self->Handshake();
                                       });
    } else {
      Handshake();
    }
  }

  void Handshake() {
    beast::get_lowest_layer(ws_).expires_never();
    const std::string token = shared_.token;
    ws_.set_option(websocket::stream_base::decorator([token](websocket::request_type& req) {
      if (!token.empty()) req.set(http::field::authorization, "Bearer " + token);
      req.set(http::field::sec_websocket_protocol, kProtocol);
      req.set(http::field::user_agent, "tessera port-forward");
    }));
    ws_.async_handshake(answer_, shared_.server.host, fmt::format("{}{}", shared_.target, remote_),
                        [self = this->shared_from_this()](beast::error_code ec) {
                          if (ec) {
                            // The server's refusal (403, 404, 503) says why in its Status.
                            const std::string why = ec == websocket::error::upgrade_declined
                                                        ? StatusMessage(self->answer_.body())
                                                        : ec.message();
                            return self->Fail(fmt::format("error upgrading connection: {}", why));
                          }
                          self->ws_.binary(true);
                          self->ReadServer();
                        });
  }

  // Server to local: channel 0 is the data, 1 the errors; the first message
  // of each is the port.
  void ReadServer() {
    ws_.async_read(in_, [self = this->shared_from_this()](beast::error_code ec, size_t) {
      if (ec) return self->Finish();
      std::string data = beast::buffers_to_string(self->in_.data());
      self->in_.consume(self->in_.size());
      if (data.empty()) return self->ReadServer();
      const int channel = static_cast<unsigned char>(data[0]);
      if (channel == 0 && !self->data_port_seen_) {
        self->data_port_seen_ = true;
        // Both ways once the server said which port this is.
        self->ReadLocal();
        return self->ReadServer();
      }
      if (channel == 1) {
        if (!self->error_port_seen_) {
          self->error_port_seen_ = true;
        } else if (data.size() > 1) {
          *self->shared_.ctx.err << "error: " << data.substr(1) << "\n";
        }
        return self->ReadServer();
      }
      if (channel != 0 || data.size() == 1) return self->ReadServer();
      self->to_local_ = data.substr(1);
      net::async_write(self->local_, net::buffer(self->to_local_), [self](beast::error_code w_ec, size_t) {
        if (w_ec) return self->Finish();
        self->ReadServer();
      });
    });
  }

  // Local to server, on channel 0.
  void ReadLocal() {
    local_.async_read_some(net::buffer(from_local_), [self = this->shared_from_this()](beast::error_code ec, size_t n) {
      if (ec || n == 0) {
        // The local client closed: so does the stream.
        return self->ws_.async_close(websocket::close_code::normal,
                                     [self](beast::error_code) { self->Finish(); });
      }
      self->to_server_.assign(1, '\0');
      self->to_server_.append(self->from_local_.data(), n);
      self->ws_.async_write(net::buffer(self->to_server_), [self](beast::error_code w_ec, size_t) {
        if (w_ec) return self->Finish();
        self->ReadLocal();
      });
    });
  }

  void Fail(const std::string& why) {
    *shared_.ctx.err << "error: " << why << "\n";
    Finish();
  }

  void Finish() {
    if (finished_) return;
    finished_ = true;
    beast::error_code ignored;
    local_.shutdown(tcp::socket::shutdown_both, ignored);
    local_.close(ignored);
    beast::get_lowest_layer(ws_).close();
  }

  tcp::socket local_;
  websocket::stream<Stream> ws_;
  const Shared& shared_;
  uint16_t remote_;
  tcp::resolver resolver_;
  websocket::response_type answer_;
  beast::flat_buffer in_;
  std::array<char, kRelayBytes> from_local_{};
  std::string to_local_;
  std::string to_server_;
  bool data_port_seen_ = false;
  bool error_port_seen_ = false;
  bool finished_ = false;
};

void Accept(net::io_context& ioc, tcp::acceptor& acceptor, const Shared& shared, uint16_t remote) {
  acceptor.async_accept([&ioc, &acceptor, &shared, remote](beast::error_code ec, tcp::socket socket) {
    if (ec) return;  // closed: the forward ends
    if (shared.tls != nullptr) {
      std::make_shared<Link<TlsStream>>(ioc, std::move(socket), shared, remote)->Start();
    } else {
      std::make_shared<Link<PlainStream>>(ioc, std::move(socket), shared, remote)->Start();
    }
    Accept(ioc, acceptor, shared, remote);
  });
}

// GET path as JSON; the exit code after saying why when not 200.
std::optional<json> GetJson(const CommandContext& ctx, ApiClient& client, const std::string& path, int& rc) {
  auto r = client.Request("GET", path);
  if (!r) {
    *ctx.err << LocalError(r.error()) << "\n";
    rc = kExitFailure;
    return std::nullopt;
  }
  if (r->status != 200) {
    *ctx.err << ServerError(*r, ctx.config) << "\n";
    rc = kExitFailure;
    return std::nullopt;
  }
  return json::parse(r->body, nullptr, false);
}

bool Running(const json& pod) {
  return pod.value("status", json::object()).value("phase", "") == "Running" &&
         !pod.value("status", json::object()).value("podIP", "").empty();
}

// A Service's port (by number or name) as its pod's port: targetPort, a
// number, or a container port's name in `pod`.
std::optional<uint16_t> ServiceTargetPort(const json& svc, const json& pod, const PortPair& pair) {
  for (const json& p : svc.value("spec", json::object()).value("ports", json::array())) {
    const bool match = pair.remote_name.empty() ? p.value("port", 0) == pair.remote
                                                : p.value("name", "") == pair.remote_name;
    if (!match) continue;
    const json target = p.value("targetPort", json(p.value("port", 0)));
    if (target.is_number_integer()) return static_cast<uint16_t>(target.get<int>());
    if (!target.is_string()) return std::nullopt;
    if (auto n = PortNumber(target.get<std::string>(), false)) return n;
    for (const json& c : pod.value("spec", json::object()).value("containers", json::array())) {
      for (const json& cp : c.value("ports", json::array())) {
        if (cp.value("name", "") == target.get<std::string>()) return static_cast<uint16_t>(cp.value("containerPort", 0));
      }
    }
    return std::nullopt;
  }
  return std::nullopt;
}

}  // namespace

Result<PortPair> ParsePortPair(const std::string& text) {
  const auto colon = text.find(':');
  const std::string local = colon == std::string::npos ? "" : text.substr(0, colon);
  const std::string remote = colon == std::string::npos ? text : text.substr(colon + 1);
  PortPair pair;
  if (auto n = PortNumber(remote, false)) {
    pair.remote = *n;
  } else if (!remote.empty() && colon != std::string::npos && std::isalpha(static_cast<unsigned char>(remote[0]))) {
    pair.remote_name = remote;  // a Service's named port
  } else {
    return Err(Status::InvalidArgument(
        fmt::format("invalid port \"{}\": give [LOCAL:]REMOTE with ports 1-65535, 8888 or 9999:8888", text)));
  }
  if (colon == std::string::npos) {
    pair.local = pair.remote;
  } else if (local.empty()) {
    pair.local = 0;
  } else if (auto n = PortNumber(local, true)) {
    pair.local = *n;
  } else {
    return Err(Status::InvalidArgument(
        fmt::format("invalid local port \"{}\" in \"{}\": give 0-65535 (0 or nothing: any free port)", local, text)));
  }
  return pair;
}

int RunPortForward(const CommandContext& ctx, const PortForwardOptions& options) {
  // 1. What to forward: the pod, and each port pair.
  const auto slash = options.target.find('/');
  const std::string type = slash == std::string::npos ? "pod" : options.target.substr(0, slash);
  const std::string name = slash == std::string::npos ? options.target : options.target.substr(slash + 1);
  const bool service = type == "svc" || type == "service" || type == "services";
  if (name.empty() || (!service && type != "pod" && type != "pods" && type != "po")) {
    *ctx.err << fmt::format("error: \"{}\": forward to pod/NAME or svc/NAME\n", options.target);
    return kExitUsage;
  }
  if (options.ports.empty()) {
    *ctx.err << "error: give at least one port: [LOCAL:]REMOTE, 8888 or 9999:8888\n";
    return kExitUsage;
  }
  std::vector<PortPair> pairs;
  for (const std::string& p : options.ports) {
    auto pair = ParsePortPair(p);
    if (!pair) {
      *ctx.err << LocalError(pair.error()) << "\n";
      return kExitUsage;
    }
    if (!service && !pair->remote_name.empty()) {
      *ctx.err << fmt::format("error: \"{}\": a pod's port is a number\n", p);
      return kExitUsage;
    }
    pairs.push_back(*pair);
  }
  auto server = ParseServer(ctx.config.server);
  if (!server) {
    *ctx.err << LocalError(server.error()) << "\n";
    return kExitUsage;
  }
  auto client = ctx.Client();
  int rc = kExitOk;
  std::string pod_name = name;
  std::optional<json> pod;
  if (service) {
    auto svc = GetJson(ctx, *client, fmt::format("/api/v1/namespaces/{}/services/{}", ctx.ns, name), rc);
    if (!svc) return rc;
    std::string selector;
    const json selector_labels = svc->value("spec", json::object()).value("selector", json::object());
    for (const auto& [k, v] : selector_labels.items()) {
      if (!v.is_string()) continue;
      selector += (selector.empty() ? "" : ",") + k + "=" + v.get<std::string>();
    }
    if (selector.empty()) {
      *ctx.err << fmt::format("error: service \"{}\" has no selector: forward to one of its pods (pod/NAME)\n", name);
      return kExitFailure;
    }
    auto pods = GetJson(ctx, *client, fmt::format("/api/v1/namespaces/{}/pods?labelSelector={}", ctx.ns, selector), rc);
    if (!pods) return rc;
    for (const json& p : pods->value("items", json::array())) {
      if (Running(p)) {
        pod = p;
        break;
      }
    }
    if (!pod) {
      *ctx.err << fmt::format("error: no running pod of service \"{}\" to forward to\n", name);
      return kExitFailure;
    }
    pod_name = pod->value("metadata", json::object()).value("name", "");
    for (PortPair& pair : pairs) {
      auto target = ServiceTargetPort(*svc, *pod, pair);
      if (!target || *target == 0) {
        *ctx.err << fmt::format("error: service \"{}\" has no port {}\n", name,
                                pair.remote_name.empty() ? std::to_string(pair.remote) : pair.remote_name);
        return kExitFailure;
      }
      pair.remote = *target;
    }
  } else {
    pod = GetJson(ctx, *client, fmt::format("/api/v1/namespaces/{}/pods/{}", ctx.ns, name), rc);
    if (!pod) return rc;
    if (!Running(*pod)) {
      *ctx.err << fmt::format("error: unable to forward port because pod is not running. Current status={}\n",
                              pod->value("status", json::object()).value("phase", "Pending"));
      return kExitFailure;
    }
  }

  // 2. Listen on each local port, then accept and relay until stopped.
  net::io_context ioc;
  std::optional<net::ssl::context> tls;
  if (server->tls) {
    auto context = MakeTlsClientContext(ctx.config.tls);
    if (!context) {
      *ctx.err << LocalError(context.error()) << "\n";
      return kExitUsage;
    }
    tls.emplace(std::move(*context));
  }
  const Shared shared{.ctx = ctx,
                      .server = *server,
                      .token = ctx.config.token,
                      .target = fmt::format("/api/v1/namespaces/{}/pods/{}/portforward?ports=", ctx.ns, pod_name),
                      .tls = tls ? &*tls : nullptr};
  std::vector<std::unique_ptr<tcp::acceptor>> acceptors;
  std::vector<uint16_t> locals;
  for (const PortPair& pair : pairs) {
    auto acceptor = std::make_unique<tcp::acceptor>(ioc);
    beast::error_code ec;
    const tcp::endpoint at(net::ip::make_address("127.0.0.1"), pair.local);
    acceptor->open(at.protocol(), ec);
    if (!ec) acceptor->set_option(net::socket_base::reuse_address(true), ec);
    if (!ec) acceptor->bind(at, ec);
    if (!ec) acceptor->listen(net::socket_base::max_listen_connections, ec);
    if (ec) {
      *ctx.err << fmt::format("error: unable to listen on 127.0.0.1:{}: {}\n", pair.local, ec.message());
      return kExitFailure;
    }
    const uint16_t local = acceptor->local_endpoint().port();
    locals.push_back(local);
    *ctx.out << fmt::format("Forwarding from 127.0.0.1:{} -> {}\n", local, pair.remote) << std::flush;
    Accept(ioc, *acceptor, shared, pair.remote);
    acceptors.push_back(std::move(acceptor));
  }
  auto stop_all = [&] {
    beast::error_code ignored;
    for (auto& a : acceptors) a->close(ignored);
    ioc.stop();
  };
  std::optional<net::signal_set> signals;
  net::steady_timer poll(ioc);
  std::function<void()> check;
  if (options.stop != nullptr) {
    check = [&] {
      poll.expires_after(std::chrono::milliseconds(50));
      poll.async_wait([&](beast::error_code ec) {
        if (ec) return;
        if (options.stop->load()) return stop_all();
        check();
      });
    };
    check();
  } else {
    signals.emplace(ioc, SIGINT, SIGTERM);
    signals->async_wait([&](beast::error_code, int) { stop_all(); });
  }
  if (options.on_listening) options.on_listening(locals);
  ioc.run();
  return kExitOk;
}

}  // namespace tessera
