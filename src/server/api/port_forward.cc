#include "server/api/port_forward.h"

#include <boost/asio.hpp>
#include <boost/beast.hpp>
#include <boost/beast/websocket.hpp>
#include <fmt/format.h>

#include <array>
#include <cctype>
#include <functional>
#include <charconv>
#include <deque>
#include <memory>

#include "http/upgraded_stream.h"
#include "server/api/api_errors.h"
#include "server/object_json.h"

namespace tessera {
namespace {

namespace beast = boost::beast;
namespace http = beast::http;
namespace websocket = beast::websocket;
namespace net = boost::asio;
using tcp = net::ip::tcp;

constexpr size_t kRelayBytes = 32 * 1024;

std::string Lower(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

// The subprotocol to answer with among those the client offers, or "".
std::string ChosenProtocol(const HttpRequest& request) {
  const std::string text = request.Header("sec-websocket-protocol");
  std::string fallback;
  std::string_view rest = text;
  while (!rest.empty()) {
    const auto comma = rest.find(',');
    std::string_view p = rest.substr(0, comma);
    while (!p.empty() && p.front() == ' ') p.remove_prefix(1);
    while (!p.empty() && p.back() == ' ') p.remove_suffix(1);
    if (p == kPortForwardProtocol) return std::string(p);
    if (p == kPortForwardProtocolAlias) fallback = std::string(p);
    if (comma == std::string_view::npos) break;
    rest.remove_prefix(comma + 1);
  }
  return fallback;
}

std::string PortFrame(uint8_t channel, uint16_t port) {
  std::string f(3, '\0');
  f[0] = static_cast<char>(channel);
  f[1] = static_cast<char>(port & 0xff);
  f[2] = static_cast<char>(port >> 8);
  return f;
}

// One port-forward WebSocket on a handed-over connection, on its I/O thread:
// the WebSocket, a socket per port to the pod, and the bytes between them.
class PortForwardSession : public std::enable_shared_from_this<PortForwardSession> {
 public:
  PortForwardSession(std::shared_ptr<UpgradedConnection> connection, http::request<http::empty_body> upgrade,
                     std::string protocol, std::string pod, std::string ip, std::vector<uint16_t> ports)
      : ws_(UpgradedStream(std::move(connection))),
        upgrade_(std::move(upgrade)),
        protocol_(std::move(protocol)),
        pod_(std::move(pod)),
        ip_(std::move(ip)) {
    for (uint16_t p : ports) ports_.push_back(std::make_unique<Port>(Port{.port = p, .socket = tcp::socket(ws_.get_executor())}));
  }

  void Start() {
    ws_.set_option(websocket::stream_base::decorator([protocol = protocol_](websocket::response_type& res) {
      res.set(http::field::sec_websocket_protocol, protocol);
      res.set(http::field::server, "tessera");
    }));
    ws_.binary(true);
    ws_.async_accept(upgrade_, [self = shared_from_this()](beast::error_code ec) {
      if (ec) return self->Finish();
      self->Dial(0);
    });
  }

 private:
  struct Port {
    uint16_t port = 0;
    tcp::socket socket;
    std::array<char, kRelayBytes> in{};
    std::string out;
    bool open = false;
  };

  // Dials the ports in turn, then announces them and relays.
  void Dial(size_t i) {
    if (i == ports_.size()) {
      for (size_t k = 0; k < ports_.size(); ++k) {
        Send(PortFrame(static_cast<uint8_t>(2 * k), ports_[k]->port));
        Send(PortFrame(static_cast<uint8_t>(2 * k + 1), ports_[k]->port));
      }
      for (size_t k = 0; k < ports_.size(); ++k) ReadPort(k);
      ReadClient();
      return;
    }
    beast::error_code ec;
    const auto address = net::ip::make_address(ip_, ec);
    if (ec) return Refuse(i, fmt::format("\"{}\" is not an IP address", ip_));
    ports_[i]->socket.async_connect(tcp::endpoint(address, ports_[i]->port),
                                    [self = shared_from_this(), i](beast::error_code c_ec) {
                                      if (c_ec) {
                                        return self->Refuse(i, fmt::format("dial tcp {}:{}: connect: {}", self->ip_,
                                                                           self->ports_[i]->port, Lower(c_ec.message())));
                                      }
                                      beast::error_code ignored;
                                      self->ports_[i]->socket.set_option(tcp::no_delay(true), ignored);
                                      self->ports_[i]->open = true;
                                      self->Dial(i + 1);
                                    });
  }

  // Port i could not be reached: the port frames, its error, and the end.
  void Refuse(size_t i, const std::string& why) {
    for (size_t k = 0; k < ports_.size(); ++k) {
      Send(PortFrame(static_cast<uint8_t>(2 * k), ports_[k]->port));
      Send(PortFrame(static_cast<uint8_t>(2 * k + 1), ports_[k]->port));
    }
    Send(std::string(1, static_cast<char>(2 * i + 1)) +
         fmt::format("error forwarding port {} to pod {}: {}", ports_[i]->port, pod_, why));
    closing_ = true;
    WriteNext();
  }

  // Pod to client: each read a message on the port's data channel.
  void ReadPort(size_t i) {
    Port& p = *ports_[i];
    p.socket.async_read_some(net::buffer(p.in), [self = shared_from_this(), i](beast::error_code ec, size_t n) {
      if (ec || n == 0) {
        // The pod closed the connection: so does the stream.
        self->closing_ = true;
        return self->WriteNext();
      }
      std::string frame(1, static_cast<char>(2 * i));
      frame.append(self->ports_[i]->in.data(), n);
      self->Send(std::move(frame), [self, i] { self->ReadPort(i); });
    });
  }

  // Client to pod: a message's first byte names the channel.
  void ReadClient() {
    ws_.async_read(message_, [self = shared_from_this()](beast::error_code ec, size_t) {
      if (ec) return self->Finish();
      std::string data = beast::buffers_to_string(self->message_.data());
      self->message_.consume(self->message_.size());
      if (data.empty()) return self->ReadClient();
      const auto channel = static_cast<uint8_t>(data[0]);
      const size_t i = channel / 2;
      if (channel % 2 == 1 || i >= self->ports_.size() || data.size() == 1) return self->ReadClient();
      Port& p = *self->ports_[i];
      p.out = data.substr(1);
      // The next message is read once this one is written: a slow pod slows the client.
      net::async_write(p.socket, net::buffer(p.out), [self](beast::error_code w_ec, size_t) {
        if (w_ec) return self->Finish();
        self->ReadClient();
      });
    });
  }

  // Queues a message; `sent` runs once it is written.
  void Send(std::string message, std::function<void()> sent = nullptr) {
    queue_.push_back(Outgoing{std::move(message), std::move(sent)});
    WriteNext();
  }

  void WriteNext() {
    if (writing_ || finished_) return;
    if (queue_.empty()) {
      if (closing_ && !close_sent_) {
        close_sent_ = true;
        writing_ = true;
        ws_.async_close(websocket::close_code::normal, [self = shared_from_this()](beast::error_code) {
          self->writing_ = false;
          self->Finish();
        });
      }
      return;
    }
    writing_ = true;
    ws_.async_write(net::buffer(queue_.front().message), [self = shared_from_this()](beast::error_code ec, size_t) {
      self->writing_ = false;
      if (ec) return self->Finish();
      auto sent = std::move(self->queue_.front().sent);
      self->queue_.pop_front();
      if (sent) sent();
      self->WriteNext();
    });
  }

  void Finish() {
    if (finished_) return;
    finished_ = true;
    beast::error_code ignored;
    for (auto& p : ports_) {
      p->socket.shutdown(tcp::socket::shutdown_both, ignored);
      p->socket.close(ignored);
    }
    beast::get_lowest_layer(ws_).Close();
  }

  struct Outgoing {
    std::string message;
    std::function<void()> sent;
  };

  websocket::stream<UpgradedStream> ws_;
  http::request<http::empty_body> upgrade_;
  std::string protocol_;
  std::string pod_;
  std::string ip_;
  std::vector<std::unique_ptr<Port>> ports_;
  beast::flat_buffer message_;
  std::deque<Outgoing> queue_;
  bool writing_ = false;
  bool closing_ = false;
  bool close_sent_ = false;
  bool finished_ = false;
};

}  // namespace

Result<std::vector<uint16_t>> PortForwardPorts(const HttpRequest& request) {
  const std::string target = request.target.empty() ? request.path : request.target;
  const auto q = target.find('?');
  std::vector<uint16_t> ports;
  std::string_view query = q == std::string::npos ? std::string_view() : std::string_view(target).substr(q + 1);
  while (!query.empty()) {
    const auto amp = query.find('&');
    const std::string_view param = query.substr(0, amp);
    const auto eq = param.find('=');
    if (param.substr(0, eq) == "ports" && eq != std::string_view::npos) {
      const std::string values = UrlDecode(param.substr(eq + 1), true);
      std::string_view rest = values;
      while (true) {
        const auto comma = rest.find(',');
        const std::string_view v = rest.substr(0, comma);
        int n = 0;
        const auto [end, ec] = std::from_chars(v.data(), v.data() + v.size(), n);
        if (v.empty() || ec != std::errc() || end != v.data() + v.size() || n < 1 || n > 65535) {
          return Err(Status::InvalidArgument(
              fmt::format("invalid port \"{}\" in query parameter \"ports\": give port numbers 1-65535", v)));
        }
        ports.push_back(static_cast<uint16_t>(n));
        if (comma == std::string_view::npos) break;
        rest.remove_prefix(comma + 1);
      }
    }
    if (amp == std::string_view::npos) break;
    query.remove_prefix(amp + 1);
  }
  if (ports.empty()) {
    return Err(Status::InvalidArgument("query parameter \"ports\" is required: the pod's ports to forward, ?ports=8888"));
  }
  if (ports.size() > 64) return Err(Status::InvalidArgument("at most 64 ports per port-forward"));
  return ports;
}

HttpResponse PortForwardResponse(Store& store, const RequestInfo& info, const HttpRequest& request) {
  const std::string upgrade = Lower(request.Header("upgrade"));
  if (request.method != "GET" || upgrade != "websocket") {
    return StatusResponse(400, "BadRequest",
                          "port-forward is a WebSocket (GET with Upgrade: websocket, subprotocol v4.channel.k8s.io); "
                          "tessera port-forward pod/NAME LOCAL:REMOTE speaks it");
  }
  const std::string protocol = ChosenProtocol(request);
  if (protocol.empty()) {
    return StatusResponse(400, "BadRequest",
                          fmt::format("port-forward needs the WebSocket subprotocol {} (Sec-WebSocket-Protocol)",
                                      kPortForwardProtocol));
  }
  auto ports = PortForwardPorts(request);
  if (!ports) return StatusResponse(400, "BadRequest", ports.error().message());
  auto got = store.Get(ObjectKey{"/Pod", info.ns, info.name});
  if (!got) return ObjectErrorResponse(got.error(), *info.kind, info.name);
  const std::string phase = StringAt(got->object, {"status", "phase"});
  const std::string ip = StringAt(got->object, {"status", "podIP"});
  if (phase == "Succeeded" || phase == "Failed" || ip.empty()) {
    return StatusResponse(503, "ServiceUnavailable",
                          fmt::format("pod \"{}\" is not running (phase {}): nothing to forward to; see tessera "
                                      "describe pod {}",
                                      info.name, phase.empty() ? "Pending" : phase, info.name));
  }
  // Beast's accept reads the upgrade as Beast's request.
  http::request<http::empty_body> req(http::verb::get, request.target.empty() ? request.path : request.target, 11);
  for (const auto& [name, value] : request.headers) req.set(name, value);
  HttpResponse r;
  r.upgrade = [req = std::move(req), protocol, pod = info.ns + "/" + info.name, ip,
               ports = std::move(*ports)](std::shared_ptr<UpgradedConnection> connection) mutable {
    std::make_shared<PortForwardSession>(std::move(connection), std::move(req), protocol, pod, ip, std::move(ports))
        ->Start();
  };
  return r;
}

}  // namespace tessera
