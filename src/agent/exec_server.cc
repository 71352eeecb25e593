#include "agent/exec_server.h"

#include <fmt/format.h>
#include <signal.h>
#include <spdlog/spdlog.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cctype>
#include <condition_variable>
#include <deque>
#include <memory>
#include <mutex>
#include <thread>

#include <boost/asio/dispatch.hpp>
#include <boost/asio/post.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <boost/beast/websocket.hpp>
#include <nlohmann/json.hpp>

#include "http/upgraded_stream.h"

namespace tessera {
namespace {

using nlohmann::json;
namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
namespace websocket = beast::websocket;

constexpr char kStdin = 0, kStdout = 1, kStderr = 2, kError = 3, kResize = 4;
constexpr unsigned char kClose = 255;

bool Flag(const std::string& v) { return v == "true" || v == "1"; }

HttpResponse Refuse(int status, std::string_view reason, const std::string& message) {
  HttpResponse r;
  r.status = status;
  r.body = json{{"kind", "Status"}, {"apiVersion", "v1"}, {"metadata", json::object()}, {"status", "Failure"},
                {"message", message}, {"reason", reason}, {"code", status}}
               .dump();
  return r;
}

// The channel protocol the client offers that this end speaks, "" when none.
std::string ChooseProtocol(const std::string& offered) {
  std::vector<std::string> names;
  for (size_t start = 0; start <= offered.size();) {
    size_t comma = offered.find(',', start);
    if (comma == std::string::npos) comma = offered.size();
    std::string name = offered.substr(start, comma - start);
    const size_t b = name.find_first_not_of(" \t"), e = name.find_last_not_of(" \t");
    names.push_back(b == std::string::npos ? "" : name.substr(b, e - b + 1));
    start = comma + 1;
  }
  for (const char* want : {"v5.channel.k8s.io", "v4.channel.k8s.io"}) {
    for (const std::string& n : names) {
      if (n == want) return n;
    }
  }
  return "";
}

// One exec: the WebSocket, the command's pipes and the threads that move bytes.
class ExecSession : public std::enable_shared_from_this<ExecSession> {
 public:
  ExecSession(std::shared_ptr<UpgradedConnection> connection, ExecRequest exec, PodExecTarget target,
              std::string protocol)
      : ws_(UpgradedStream(connection)),
        executor_(connection->executor()),
        exec_(std::move(exec)),
        target_(std::move(target)),
        protocol_(std::move(protocol)) {}

  ~ExecSession() {
    if (stdin_thread_.joinable()) stdin_thread_.detach();
  }

  void Start(http::request<http::string_body> request) {
    request_ = std::move(request);
    auto self = shared_from_this();
    ws_.set_option(websocket::stream_base::decorator(
        [protocol = protocol_](websocket::response_type& res) { res.set(http::field::sec_websocket_protocol, protocol); }));
    ws_.binary(true);
    ws_.async_accept(request_, [self](beast::error_code ec) {
      if (ec) {
        spdlog::warn("exec: the WebSocket handshake failed: {}", ec.message());
        return;
      }
      self->Run();
    });
  }

 private:
  void Run() {
    auto spawned = SpawnInPod(exec_.command, target_, exec_.with_stdin, /*merge_stderr=*/false);
    if (!spawned) {
      Send(kError, ExecStatusJson(exec_.command, -1, spawned.error().message()));
      CloseAfterWrites();
      return;
    }
    pid_ = spawned->pid;
    auto self = shared_from_this();
    if (exec_.with_stdin) {
      stdin_fd_ = std::move(spawned->stdin_fd);
      stdin_thread_ = std::thread([self]() mutable {
        self->PumpStdin();
        Release(std::move(self));
      });
    }
    readers_ = 2;
    std::thread([self, fd = std::make_shared<UniqueFd>(std::move(spawned->stdout_fd))]() mutable {
      self->PumpOutput(fd->get(), kStdout);
      Release(std::move(self));
    }).detach();
    std::thread([self, fd = std::make_shared<UniqueFd>(std::move(spawned->stderr_fd))]() mutable {
      self->PumpOutput(fd->get(), kStderr);
      Release(std::move(self));
    }).detach();
    Read();
  }

  // Client messages: stdin, close, resize.
  void Read() {
    auto self = shared_from_this();
    ws_.async_read(in_, [self](beast::error_code ec, std::size_t) {
      if (ec) {
        self->ClientGone();
        return;
      }
      std::string data = beast::buffers_to_string(self->in_.data());
      self->in_.consume(self->in_.size());
      if (!data.empty()) {
        const unsigned char channel = static_cast<unsigned char>(data[0]);
        if (channel == static_cast<unsigned char>(kStdin)) {
          self->QueueStdin(data.substr(1), false);
        } else if (channel == kClose && data.size() >= 2 && data[1] == kStdin) {
          self->QueueStdin("", true);
        } else if (channel == static_cast<unsigned char>(kResize)) {
          // No TTY yet: nothing to resize.
        }
      }
      self->Read();
    });
  }

  void QueueStdin(std::string data, bool close) {
    {
      std::lock_guard lock(stdin_mu_);
      if (stdin_closed_) return;
      if (close) {
        stdin_closed_ = true;
      } else if (!data.empty()) {
        stdin_queue_.push_back(std::move(data));
      }
    }
    stdin_cv_.notify_all();
  }

  void PumpStdin() {
    for (;;) {
      std::string chunk;
      {
        std::unique_lock lock(stdin_mu_);
        stdin_cv_.wait(lock, [&] { return !stdin_queue_.empty() || stdin_closed_; });
        if (stdin_queue_.empty()) break;
        chunk = std::move(stdin_queue_.front());
        stdin_queue_.pop_front();
      }
      size_t at = 0;
      while (at < chunk.size()) {
        const ssize_t n = ::write(stdin_fd_.get(), chunk.data() + at, chunk.size() - at);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) break;
        at += static_cast<size_t>(n);
      }
    }
    stdin_fd_.Reset();  // end of input for the command
  }

  void PumpOutput(int fd, char channel) {
    char buf[16 * 1024];
    for (;;) {
      const ssize_t n = ::read(fd, buf, sizeof buf);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) break;
      auto self = shared_from_this();
      asio::post(executor_, [self, channel, data = std::string(buf, static_cast<size_t>(n))]() mutable {
        // A stream the client did not ask for is read, and dropped.
        if ((channel == kStdout && !self->exec_.with_stdout) || (channel == kStderr && !self->exec_.with_stderr)) return;
        self->Send(channel, std::move(data));
      });
    }
    auto self = shared_from_this();
    asio::post(executor_, [self] {
      if (--self->readers_ > 0) return;
      // Its output has ended: wait for it (off the I/O thread), then say how it ended.
      std::thread([self]() mutable {
        int status = 0;
        while (::waitpid(self->pid_, &status, 0) < 0 && errno == EINTR) {
        }
        const int code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
        asio::post(self->executor_, [self, code] {
          self->exited_ = true;
          self->QueueStdin("", true);
          self->Send(kError, ExecStatusJson(self->exec_.command, code));
          self->CloseAfterWrites();
        });
        Release(std::move(self));
      }).detach();
    });
  }

  // A thread's hold on the session ends on its I/O thread: the last one to go
  // closes the connection, which only that thread may touch.
  static void Release(std::shared_ptr<ExecSession> self) {
    const asio::any_io_executor executor = self->executor_;
    asio::post(executor, [self = std::move(self)] {});
  }

  void ClientGone() {
    QueueStdin("", true);
    if (pid_ > 0 && !exited_) ::kill(-pid_, SIGKILL);
    closed_ = true;
  }

  void Send(char channel, std::string data) {
    if (closed_) return;
    std::string frame(1, channel);
    frame += data;
    out_.push_back(std::move(frame));
    if (!writing_) WriteNext();
  }

  void WriteNext() {
    if (out_.empty()) {
      writing_ = false;
      if (close_when_written_ && !closed_) {
        closed_ = true;
        auto self = shared_from_this();
        ws_.async_close(websocket::close_code::normal, [self](beast::error_code) {});
      }
      return;
    }
    writing_ = true;
    auto self = shared_from_this();
    ws_.async_write(asio::buffer(out_.front()), [self](beast::error_code ec, std::size_t) {
      self->out_.pop_front();
      if (ec) {
        self->out_.clear();
        self->writing_ = false;
        self->ClientGone();
        return;
      }
      self->WriteNext();
    });
  }

  void CloseAfterWrites() {
    close_when_written_ = true;
    if (!writing_) WriteNext();
  }

  websocket::stream<UpgradedStream> ws_;
  http::request<http::string_body> request_;
  asio::any_io_executor executor_;
  ExecRequest exec_;
  PodExecTarget target_;
  std::string protocol_;
  beast::flat_buffer in_;
  // On the executor:
  std::deque<std::string> out_;
  bool writing_ = false, close_when_written_ = false, closed_ = false, exited_ = false;
  int readers_ = 0;
  pid_t pid_ = 0;
  // stdin, fed by the executor, written by stdin_thread_.
  UniqueFd stdin_fd_;
  std::thread stdin_thread_;
  std::mutex stdin_mu_;
  std::condition_variable stdin_cv_;
  std::deque<std::string> stdin_queue_;
  bool stdin_closed_ = false;
};

}  // namespace

Result<ExecRequest> ParseExecRequest(const HttpRequest& req) {
  ExecRequest out;
  const size_t q = req.target.find('?');
  std::string_view rest = q == std::string::npos ? std::string_view() : std::string_view(req.target).substr(q + 1);
  while (!rest.empty()) {
    const size_t amp = rest.find('&');
    const std::string_view pair = rest.substr(0, amp);
    rest = amp == std::string_view::npos ? std::string_view() : rest.substr(amp + 1);
    const size_t eq = pair.find('=');
    const std::string key = UrlDecode(pair.substr(0, eq), true);
    const std::string value = eq == std::string_view::npos ? "" : UrlDecode(pair.substr(eq + 1), true);
    if (key == "command") out.command.push_back(value);
    if (key == "stdin" || key == "input") out.with_stdin = Flag(value);
    if (key == "stdout" || key == "output") out.with_stdout = Flag(value);
    if (key == "stderr" || key == "error") out.with_stderr = Flag(value);
    if (key == "tty") out.tty = Flag(value);
  }
  if (out.command.empty()) {
    return Err(Status::InvalidArgument("you must specify at least 1 command (command=... in the query)"));
  }
  return out;
}

std::string ExecStatusJson(const std::vector<std::string>& command, int exit_code, const std::string& error) {
  if (!error.empty()) {
    return json{{"metadata", json::object()}, {"status", "Failure"}, {"message", error}, {"reason", "InternalError"}}.dump();
  }
  if (exit_code == 0) return json{{"metadata", json::object()}, {"status", "Success"}}.dump();
  std::string args;
  for (const std::string& a : command) args += (args.empty() ? "" : " ") + a;
  return json{{"metadata", json::object()},
              {"status", "Failure"},
              {"message", fmt::format("command terminated with non-zero exit code: error executing command [{}], exit "
                                      "code {}",
                                      args, exit_code)},
              {"reason", "NonZeroExitCode"},
              {"details", {{"causes", {{{"reason", "ExitCode"}, {"message", std::to_string(exit_code)}}}}}}}
      .dump();
}

HttpResponse ExecResponse(const HttpRequest& req, ExecRequest exec, PodExecTarget target) {
  std::string upgrade = req.Header("upgrade");
  for (char& c : upgrade) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  if (upgrade != "websocket") {
    return Refuse(400, "BadRequest",
                  "exec is served over a WebSocket (Upgrade: websocket, Sec-WebSocket-Protocol: v5.channel.k8s.io); "
                  "SPDY is not supported: use kubectl 1.30 or later, or tessera exec");
  }
  const std::string protocol = ChooseProtocol(req.Header("sec-websocket-protocol"));
  if (protocol.empty()) {
    return Refuse(400, "BadRequest",
                  fmt::format("none of the WebSocket protocols offered ({}) is spoken here: offer v5.channel.k8s.io "
                              "or v4.channel.k8s.io",
                              req.Header("sec-websocket-protocol")));
  }
  if (exec.tty) {
    return Refuse(400, "BadRequest", "a TTY (tty=true, kubectl exec -t) is not supported yet: leave out -t");
  }
  http::request<http::string_body> request;
  request.method_string(req.method);
  request.target(req.target);
  request.version(11);
  for (const auto& [name, value] : req.headers) request.set(name, value);
  HttpResponse r;
  r.upgrade = [request = std::move(request), exec = std::move(exec), target = std::move(target),
               protocol](std::shared_ptr<UpgradedConnection> connection) mutable {
    auto session = std::make_shared<ExecSession>(connection, std::move(exec), std::move(target), protocol);
    session->Start(std::move(request));
  };
  return r;
}

}  // namespace tessera
