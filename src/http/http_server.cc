#include "http/http_server.h"

#include <boost/asio.hpp>
#include <boost/asio/ssl.hpp>
#include <boost/beast.hpp>
#include <boost/beast/ssl.hpp>
#include <fmt/format.h>
#include <pthread.h>
#include <spdlog/spdlog.h>

#include <atomic>
#include <deque>
#include <optional>

namespace tessera {
namespace {

namespace beast = boost::beast;
namespace http = beast::http;
namespace net = boost::asio;
namespace ssl = net::ssl;
using tcp = net::ip::tcp;

constexpr auto kHandshakeTimeout = std::chrono::seconds(30);
// How long a refused plain-HTTP connection may take to send the rest of its
// request before the socket closes (closing with unread bytes would reset it
// and could lose the answer).
constexpr auto kDrainTimeout = std::chrono::seconds(5);

std::string StatusJson(int code, std::string_view reason, std::string_view message) {
  // Kubernetes' Status object; the message is JSON-escaped by hand (ASCII text of ours).
  std::string escaped;
  for (char c : message) {
    if (c == '"' || c == '\\') escaped += '\\';
    escaped += c;
  }
  return fmt::format(R"({{"kind":"Status","apiVersion":"v1","metadata":{{}},"status":"Failure","message":"{}","reason":"{}","code":{}}})",
                     escaped, reason, code);
}

HttpRequest Convert(const http::request<http::string_body>& req, const std::string& remote) {
  HttpRequest r;
  r.method = std::string(req.method_string());
  const std::string target(req.target());
  const auto q = target.find('?');
  r.path = UrlDecode(target.substr(0, q), false);
  if (q != std::string::npos) {
    std::string_view rest = std::string_view(target).substr(q + 1);
    while (!rest.empty()) {
      const auto amp = rest.find('&');
      std::string_view pair = rest.substr(0, amp);
      const auto eq = pair.find('=');
      r.query[UrlDecode(pair.substr(0, eq), true)] =
          eq == std::string_view::npos ? std::string() : UrlDecode(pair.substr(eq + 1), true);
      if (amp == std::string_view::npos) break;
      rest.remove_prefix(amp + 1);
    }
  }
  for (const auto& field : req) {
    std::string name(field.name_string());
    for (char& c : name) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    r.headers[name] = std::string(field.value());
  }
  r.body = req.body();
  r.remote = remote;
  r.target = target;
  return r;
}

}  // namespace

std::string UrlDecode(std::string_view s, bool query_component) {
  std::string out;
  out.reserve(s.size());
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '%' && i + 2 < s.size()) {
      auto hex = [](char c) -> int {
        if (c >= '0' && c <= '9') return c - '0';
        if (c >= 'a' && c <= 'f') return c - 'a' + 10;
        if (c >= 'A' && c <= 'F') return c - 'A' + 10;
        return -1;
      };
      const int hi = hex(s[i + 1]), lo = hex(s[i + 2]);
      if (hi >= 0 && lo >= 0) {
        out += static_cast<char>(hi * 16 + lo);
        i += 2;
        continue;
      }
    }
    out += (query_component && s[i] == '+') ? ' ' : s[i];
  }
  return out;
}

// A connection the idle sweep may close.
class IdleTracked {
 public:
  virtual ~IdleTracked() = default;
  // Closes the connection when it has waited for its client since before `cutoff`.
  virtual void CloseIfIdleSince(std::chrono::steady_clock::time_point cutoff) = 0;
};

// One per I/O thread, touched by that thread alone: its connections, looked at
// every tenth of the idle timeout. (A timeout per read and write, as Beast's
// streams keep, armed and cancelled a timer twice a request: a tenth of the I/O
// threads' time under a storm of small requests.)
struct IdleSweep {
  explicit IdleSweep(net::io_context& ioc) : timer(ioc) {}
  void Add(std::weak_ptr<IdleTracked> connection) {
    // Many short connections between two sweeps: drop the closed ones' entries
    // as the list doubles, not only at the sweep.
    if (connections.size() >= 2 * pruned_size + 64) Prune();
    connections.push_back(std::move(connection));
  }
  void Prune() {
    std::erase_if(connections, [](const std::weak_ptr<IdleTracked>& weak) { return weak.expired(); });
    pruned_size = connections.size();
  }
  net::steady_timer timer;
  std::vector<std::weak_ptr<IdleTracked>> connections;
  size_t pruned_size = 0;
};

struct HttpServer::Impl {
  HttpServerOptions options;
  HttpHandler handler;
  // One io_context per I/O thread, run by that thread alone: no locking between
  // I/O threads inside Asio, no thread woken to run another's handlers; new
  // connections are dealt out in turn. The first also runs the acceptor.
  std::vector<std::unique_ptr<net::io_context>> iocs;
  // Keeps each io_context running while it has no connection (run() returns
  // once out of work), until Stop.
  std::vector<net::executor_work_guard<net::io_context::executor_type>> keep_running;
  std::vector<std::unique_ptr<IdleSweep>> sweeps;  // one per io_context, in the same order
  size_t next_ioc = 0;
  std::optional<ssl::context> ssl_ctx;
  std::optional<tcp::acceptor> acceptor;
  std::vector<std::thread> threads;
  std::atomic<bool> stopping{false};

  void Accept();
  void ScheduleSweep(IdleSweep& sweep);
};

namespace {

template <class Stream>
class Session : public IdleTracked, public std::enable_shared_from_this<Session<Stream>> {
 public:
  // `read`: bytes already read from the connection (a plain-HTTP request
  // that came to a TLS port which serves both).
  Session(HttpServer::Impl& server, IdleSweep& sweep, Stream stream, std::string remote,
          beast::flat_buffer read = {})
      : server_(server), sweep_(sweep), stream_(std::move(stream)), remote_(std::move(remote)),
        buffer_(std::move(read)) {}

  void Run() {
    net::dispatch(stream_.get_executor(), [self = this->shared_from_this()] {
      self->sweep_.Add(self);
      self->Handshake();
    });
  }

  void CloseIfIdleSince(std::chrono::steady_clock::time_point cutoff) override {
    if (waiting_for_client_ && last_active_ < cutoff) Shutdown();
  }

  // Called through the sink, from any thread.
  void Enqueue(std::string data, bool last) {
    net::post(stream_.get_executor(), [self = this->shared_from_this(), data = std::move(data), last]() mutable {
      if (self->closed_) return;
      if (!data.empty()) self->queue_.push_back(fmt::format("{:x}\r\n{}\r\n", data.size(), data));
      if (last) {
        self->queue_.push_back("0\r\n\r\n");
        self->close_after_write_ = true;
      }
      if (!self->writing_) self->WriteNext();
    });
  }
  bool closed() const { return closed_flag_.load(); }

 private:
  void Handshake() {
    if constexpr (std::is_same_v<Stream, beast::ssl_stream<beast::tcp_stream>>) {
      beast::get_lowest_layer(stream_).expires_after(kHandshakeTimeout);
      // A plain-HTTP request on the HTTPS port would fail the handshake and see
      // only a closed connection: it is answered in plain HTTP instead, saying to
      // use https:// (as Go's servers do).
      beast::async_detect_ssl(stream_.next_layer(), buffer_,
                              [self = this->shared_from_this()](beast::error_code ec, bool is_tls) {
                                if (ec) return self->Shutdown();
                                if (!is_tls && self->server_.options.plain_http_too) return self->ServePlainHttp();
                                if (!is_tls) return self->RefusePlainHttp();
                                self->TlsHandshake();
                              });
    } else {
      Read();
    }
  }

  // The bytes async_detect_ssl read are the start of the handshake. (The
  // default argument is for Beast 1.81, whose buffered async_handshake wrongly
  // requires a handler callable without the byte count as well.)
  void TlsHandshake() {
    stream_.async_handshake(ssl::stream_base::server, buffer_.data(),
                            [self = this->shared_from_this()](beast::error_code ec, size_t used = 0) {
                              if (ec) return self->Shutdown();
                              self->buffer_.consume(used);
                              beast::get_lowest_layer(self->stream_).expires_never();  // the idle sweep takes over
                              self->Read();
                            });
  }

  // A port that serves both: the connection goes on as plain HTTP, with the
  // bytes async_detect_ssl has read.
  void ServePlainHttp() {
    if constexpr (std::is_same_v<Stream, beast::ssl_stream<beast::tcp_stream>>) {
      beast::get_lowest_layer(stream_).expires_never();
      std::shared_ptr<Session<beast::tcp_stream>>(new Session<beast::tcp_stream>(
                                                      server_, sweep_, std::move(stream_.next_layer()), remote_,
                                                      std::move(buffer_)))
          ->Run();
    }
  }

  void RefusePlainHttp() {
    const std::string body =
        StatusJson(400, "BadRequest",
                   "this server speaks HTTPS and the request came in plain HTTP: use an https:// server URL");
    auto text = std::make_shared<std::string>(fmt::format(
        "HTTP/1.1 400 Bad Request\r\nServer: tessera\r\nContent-Type: application/json\r\nContent-Length: {}\r\n"
        "Connection: close\r\n\r\n{}",
        body.size(), body));
    net::async_write(beast::get_lowest_layer(stream_), net::buffer(*text),
                     [self = this->shared_from_this(), text](beast::error_code ec, size_t) {
                       if (ec) return self->Shutdown();
                       beast::error_code ignored;
                       beast::get_lowest_layer(self->stream_).socket().shutdown(tcp::socket::shutdown_send, ignored);
                       beast::get_lowest_layer(self->stream_).expires_after(kDrainTimeout);
                       self->DrainThenClose();
                     });
  }

  // Reads (and drops) what the client still sends until it closes its side.
  void DrainThenClose() {
    beast::get_lowest_layer(stream_).async_read_some(
        net::buffer(probe_), [self = this->shared_from_this()](beast::error_code ec, size_t) {
          if (ec) return self->Shutdown();
          self->DrainThenClose();
        });
  }

  void Read() {
    parser_.emplace();
    parser_->body_limit(server_.options.max_body_bytes);
    parser_->header_limit(64 * 1024);
    WaitForClient();
    http::async_read(stream_, buffer_, *parser_,
                     [self = this->shared_from_this()](beast::error_code ec, size_t) { self->OnRead(ec); });
  }

  void OnRead(beast::error_code ec) {
    if (ec == http::error::body_limit) {
      HttpResponse r;
      r.status = 413;
      r.body = StatusJson(413, "RequestEntityTooLarge",
                          fmt::format("request body exceeds the limit of {} bytes; split the request",
                                      server_.options.max_body_bytes));
      return Respond(std::move(r), 11, false);
    }
    if (ec) return Shutdown();
    waiting_for_client_ = false;  // for the handler, maybe the store, until the response is written
    http::request<http::string_body> req = parser_->release();
    const bool keep_alive = req.keep_alive();
    const unsigned version = req.version();
    HttpResponse response;
    try {
      HttpRequest converted = Convert(req, remote_);
      converted.tls = std::is_same_v<Stream, beast::ssl_stream<beast::tcp_stream>>;
      response = server_.handler(converted);
    } catch (const std::exception& e) {
      spdlog::error("handler for {} {} threw: {}", std::string(req.method_string()), std::string(req.target()), e.what());
      response.status = 500;
      response.body = StatusJson(500, "InternalError", "internal error; see the server log");
    }
    if (response.stream) return StartStream(std::move(response), version);
    if (response.deferred) return Defer(std::move(response.deferred), version, keep_alive);
    if (response.upgrade) return HandOver(std::move(response.upgrade));
    Respond(std::move(response), version, keep_alive);
  }

 public:
  // The connection, once handed over (UpgradedConnection), on its I/O thread.
  std::string TakeBuffered() {
    std::string out = beast::buffers_to_string(buffer_.data());
    buffer_.consume(buffer_.size());
    return out;
  }
  void RawRead(std::function<void(std::string_view)> done) {
    if (closed_) return done({});
    if (!raw_in_) raw_in_ = std::make_unique<std::array<char, 64 * 1024>>();
    stream_.async_read_some(net::buffer(*raw_in_), [self = this->shared_from_this(), done = std::move(done)](
                                                       beast::error_code ec, size_t n) {
      if (ec || n == 0 || self->closed_) return done({});
      done(std::string_view(self->raw_in_->data(), n));
    });
  }
  void RawWrite(std::string data, std::function<void(bool)> done) {
    if (closed_) return done(false);
    auto owned = std::make_shared<std::string>(std::move(data));
    net::async_write(stream_, net::buffer(*owned),
                     [self = this->shared_from_this(), owned, done = std::move(done)](beast::error_code ec, size_t) {
                       done(!ec && !self->closed_);
                     });
  }
  void RawClose() { Shutdown(); }
  net::any_io_executor executor() { return stream_.get_executor(); }

 private:
  void HandOver(std::function<void(std::shared_ptr<UpgradedConnection>)> upgrade);

  // The response comes through `respond`, from any thread: it is written from
  // this connection's strand. Until then nothing is read from the connection.
  void Defer(std::function<void(std::function<void(HttpResponse)>)> deferred, unsigned version, bool keep_alive) {
    auto answered = std::make_shared<std::atomic<bool>>(false);
    auto respond = [self = this->shared_from_this(), version, keep_alive, answered](HttpResponse r) {
      if (answered->exchange(true)) return;
      net::post(self->stream_.get_executor(), [self, r = std::move(r), version, keep_alive]() mutable {
        if (r.stream) return self->StartStream(std::move(r), version);
        if (r.deferred) return self->Defer(std::move(r.deferred), version, keep_alive);
        if (r.upgrade) return self->HandOver(std::move(r.upgrade));
        self->Respond(std::move(r), version, keep_alive);
      });
    };
    try {
      deferred(std::move(respond));
    } catch (const std::exception& e) {
      spdlog::error("deferred handler threw: {}", e.what());
      if (answered->exchange(true)) return;
      HttpResponse r;
      r.status = 500;
      r.body = StatusJson(500, "InternalError", "internal error; see the server log");
      Respond(std::move(r), version, keep_alive);
    }
  }

  void Respond(HttpResponse r, unsigned version, bool keep_alive) {
    auto res = std::make_shared<http::response<http::string_body>>(static_cast<http::status>(r.status), version);
    res->set(http::field::server, "tessera");
    if (!r.content_type.empty()) res->set(http::field::content_type, r.content_type);
    for (const auto& [k, v] : r.headers) res->set(k, v);
    res->body() = std::move(r.body);
    res->keep_alive(keep_alive);
    res->prepare_payload();
    WaitForClient();
    http::async_write(stream_, *res, [self = this->shared_from_this(), res, keep_alive](beast::error_code ec, size_t) {
      if (ec || !keep_alive) return self->Shutdown();
      self->Read();
    });
  }

  void StartStream(HttpResponse r, unsigned version);

  void WaitForClient() {
    waiting_for_client_ = true;
    last_active_ = std::chrono::steady_clock::now();
  }

  void WriteNext() {
    writing_ = true;
    net::async_write(stream_, net::buffer(queue_.front()),
                     [self = this->shared_from_this()](beast::error_code ec, size_t) {
                       self->writing_ = false;
                       // Shut down meanwhile (the client went away): the queue is ours to drop now.
                       if (self->closed_) return self->queue_.clear();
                       self->queue_.pop_front();
                       if (ec) return self->Shutdown();
                       if (!self->queue_.empty()) return self->WriteNext();
                       if (self->close_after_write_) self->Shutdown();
                     });
  }

  // While streaming, a read only notices that the client went away.
  void WatchForClose() {
    stream_.async_read_some(net::buffer(probe_), [self = this->shared_from_this()](beast::error_code ec, size_t) {
      if (ec) return self->Shutdown();
      self->WatchForClose();
    });
  }

  void Shutdown() {
    if (closed_) return;
    closed_ = true;
    closed_flag_ = true;
    // A write in flight still reads queue_.front(): its handler drops the queue.
    if (!writing_) queue_.clear();
    beast::error_code ec;
    beast::get_lowest_layer(stream_).socket().shutdown(tcp::socket::shutdown_both, ec);
    beast::get_lowest_layer(stream_).close();
  }

  HttpServer::Impl& server_;
  IdleSweep& sweep_;
  // For the idle sweep: whether the connection waits for its client (to send
  // a request, or take a response), and since when.
  bool waiting_for_client_ = false;
  std::chrono::steady_clock::time_point last_active_;
  Stream stream_;
  std::string remote_;
  beast::flat_buffer buffer_;
  std::optional<http::request_parser<http::string_body>> parser_;
  std::deque<std::string> queue_;
  bool writing_ = false;
  bool close_after_write_ = false;
  bool closed_ = false;
  std::atomic<bool> closed_flag_{false};
  std::array<char, 512> probe_{};
  std::unique_ptr<std::array<char, 64 * 1024>> raw_in_;  // reads of a connection handed over
};

// A session handed over: holds it (it stays open while this is held, or an
// operation of it is in flight) and closes it when dropped.
template <class Stream>
class HandedOverConnection : public UpgradedConnection {
 public:
  explicit HandedOverConnection(std::shared_ptr<Session<Stream>> s) : session_(std::move(s)) {}
  ~HandedOverConnection() override { session_->RawClose(); }
  boost::asio::any_io_executor executor() override { return session_->executor(); }
  std::string TakeBuffered() override { return session_->TakeBuffered(); }
  void ReadSome(std::function<void(std::string_view)> done) override { session_->RawRead(std::move(done)); }
  void Write(std::string data, std::function<void(bool)> done) override {
    session_->RawWrite(std::move(data), std::move(done));
  }
  void Close() override { session_->RawClose(); }

 private:
  std::shared_ptr<Session<Stream>> session_;
};

// Holds the session weakly: the I/O handlers own sessions, so stopping the server
// never waits for whoever still holds a sink.
template <class Stream>
class SessionSink : public StreamSink {
 public:
  explicit SessionSink(std::weak_ptr<Session<Stream>> s) : session_(std::move(s)) {}
  bool Write(std::string chunk) override {
    if (closed_) return false;
    auto s = session_.lock();
    if (!s || s->closed()) return false;
    s->Enqueue(std::move(chunk), false);
    return true;
  }
  void Close() override {
    if (closed_.exchange(true)) return;
    if (auto s = session_.lock()) s->Enqueue(std::string(), true);
  }
  bool open() const override {
    auto s = session_.lock();
    return !closed_ && s && !s->closed();
  }

 private:
  std::weak_ptr<Session<Stream>> session_;
  std::atomic<bool> closed_{false};
};

template <class Stream>
void Session<Stream>::StartStream(HttpResponse r, unsigned version) {
  waiting_for_client_ = false;  // a watch may be quiet for hours
  std::string head = fmt::format("HTTP/1.{} {} OK\r\nServer: tessera\r\nContent-Type: {}\r\nCache-Control: no-cache\r\n",
                                 version == 10 ? 0 : 1, r.status, r.content_type);
  for (const auto& [k, v] : r.headers) head += fmt::format("{}: {}\r\n", k, v);
  head += "Transfer-Encoding: chunked\r\n\r\n";
  queue_.push_back(std::move(head));
  WriteNext();
  WatchForClose();
  r.stream(std::make_shared<SessionSink<Stream>>(this->weak_from_this()));
}

template <class Stream>
void Session<Stream>::HandOver(std::function<void(std::shared_ptr<UpgradedConnection>)> upgrade) {
  waiting_for_client_ = false;  // the idle sweep leaves it alone: a WebSocket may be quiet for hours
  try {
    upgrade(std::make_shared<HandedOverConnection<Stream>>(this->shared_from_this()));
  } catch (const std::exception& e) {
    spdlog::error("upgrade handler threw: {}", e.what());
    Shutdown();
  }
}

}  // namespace

void HttpServer::Impl::ScheduleSweep(IdleSweep& sweep) {
  sweep.timer.expires_after(options.idle_timeout / 10);
  sweep.timer.async_wait([this, &sweep](beast::error_code ec) {
    if (ec || stopping) return;
    const auto cutoff = std::chrono::steady_clock::now() - options.idle_timeout;
    for (const std::weak_ptr<IdleTracked>& weak : sweep.connections) {
      if (auto connection = weak.lock()) connection->CloseIfIdleSince(cutoff);
    }
    sweep.Prune();
    ScheduleSweep(sweep);
  });
}

void HttpServer::Impl::Accept() {
  const size_t index = next_ioc++ % iocs.size();
  net::io_context& ioc = *iocs[index];
  IdleSweep& sweep = *sweeps[index];
  acceptor->async_accept(ioc, [this, &sweep](beast::error_code ec, tcp::socket socket) {
    if (stopping) return;
    if (!ec) {
      beast::error_code rec;
      const auto ep = socket.remote_endpoint(rec);
      const std::string remote = rec ? "?" : fmt::format("{}:{}", ep.address().to_string(), ep.port());
      socket.set_option(tcp::no_delay(true), rec);
      if (ssl_ctx) {
        // Not make_shared: the sweep's weak_ptr would keep a closed session's memory.
        std::shared_ptr<Session<beast::ssl_stream<beast::tcp_stream>>>(
            new Session<beast::ssl_stream<beast::tcp_stream>>(
                *this, sweep, beast::ssl_stream<beast::tcp_stream>(beast::tcp_stream(std::move(socket)), *ssl_ctx), remote))
            ->Run();
      } else {
        std::shared_ptr<Session<beast::tcp_stream>>(
            new Session<beast::tcp_stream>(*this, sweep, beast::tcp_stream(std::move(socket)), remote))
            ->Run();
      }
    }
    Accept();
  });
}

HttpServer::HttpServer(HttpServerOptions options, HttpHandler handler) : impl_(std::make_unique<Impl>()) {
  impl_->options = std::move(options);
  impl_->handler = std::move(handler);
}

HttpServer::~HttpServer() { Stop(); }

bool HttpServer::tls() const { return impl_->ssl_ctx.has_value(); }

Status HttpServer::Start() {
  Impl& s = *impl_;
  if (s.options.idle_timeout < std::chrono::milliseconds(10)) {
    return Status::InvalidArgument(fmt::format("idle timeout {} ms is too short: give at least 10 ms",
                                               s.options.idle_timeout.count()));
  }
  if (!s.options.tls_cert_file.empty() || !s.options.tls_key_file.empty()) {
    if (s.options.tls_cert_file.empty() || s.options.tls_key_file.empty()) {
      return Status::InvalidArgument(
          "TLS needs both a certificate (--tls-cert-file) and its private key (--tls-private-key-file)");
    }
    s.ssl_ctx.emplace(ssl::context::tls_server);
    beast::error_code ec;
    s.ssl_ctx->set_options(ssl::context::default_workarounds | ssl::context::no_sslv2 | ssl::context::no_sslv3 |
                           ssl::context::no_tlsv1 | ssl::context::no_tlsv1_1);
    s.ssl_ctx->use_certificate_chain_file(s.options.tls_cert_file, ec);
    if (ec) return Status::InvalidArgument(fmt::format("TLS certificate {}: {}", s.options.tls_cert_file, ec.message()));
    s.ssl_ctx->use_private_key_file(s.options.tls_key_file, ssl::context::pem, ec);
    // OpenSSL also checks here that the key is the certificate's ("key values mismatch").
    if (ec) {
      return Status::InvalidArgument(fmt::format("TLS key {} (for the certificate {}): {}", s.options.tls_key_file,
                                                 s.options.tls_cert_file, ec.message()));
    }
  }
  beast::error_code ec;
  const auto address = net::ip::make_address(s.options.host, ec);
  if (ec) return Status::InvalidArgument(fmt::format("listen address \"{}\": {}", s.options.host, ec.message()));
  const tcp::endpoint endpoint(address, s.options.port);
  const int threads = std::max(1, s.options.threads);
  for (int i = 0; i < threads; ++i) {
    s.iocs.push_back(std::make_unique<net::io_context>(1));
    s.keep_running.push_back(net::make_work_guard(*s.iocs.back()));
    s.sweeps.push_back(std::make_unique<IdleSweep>(*s.iocs.back()));
  }
  s.acceptor.emplace(*s.iocs.front());
  s.acceptor->open(endpoint.protocol(), ec);
  if (!ec) s.acceptor->set_option(net::socket_base::reuse_address(true), ec);
  if (!ec) s.acceptor->bind(endpoint, ec);
  if (!ec) s.acceptor->listen(net::socket_base::max_listen_connections, ec);
  if (ec) {
    return Status::Unavailable(fmt::format("cannot listen on {}:{}: {} (is another server running there? use --listen)",
                                           s.options.host, s.options.port, ec.message()));
  }
  bound_port_ = s.acceptor->local_endpoint().port();
  s.Accept();
  for (auto& sweep : s.sweeps) s.ScheduleSweep(*sweep);
  for (auto& ioc : s.iocs) {
    s.threads.emplace_back([ioc = ioc.get()] {
      pthread_setname_np(pthread_self(), "http-io");  // for top -H and perf
      ioc->run();
    });
  }
  return Status::Ok();
}

void HttpServer::Stop() {
  Impl& s = *impl_;
  if (s.stopping.exchange(true)) return;
  if (s.iocs.empty()) return;  // never started
  net::post(*s.iocs.front(), [&s] {
    beast::error_code ec;
    s.acceptor->close(ec);
  });
  s.keep_running.clear();
  for (auto& ioc : s.iocs) ioc->stop();
  for (auto& t : s.threads) {
    if (t.joinable()) t.join();
  }
  // The close posted above may not have run before the threads stopped: with
  // no thread left, close here, so that the port refuses connections from now.
  beast::error_code ec;
  s.acceptor->close(ec);
}

}  // namespace tessera
