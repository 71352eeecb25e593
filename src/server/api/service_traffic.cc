#include "server/api/service_traffic.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>

namespace tessera {

bool BackendAccepts(const std::string& host, uint16_t port) {
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(port);
  if (::inet_pton(AF_INET, host.c_str(), &addr.sin_addr) != 1) return true;  // not IPv4: let the proxy try
  const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  if (fd < 0) return true;
  bool ok = ::connect(fd, reinterpret_cast<const sockaddr*>(&addr), sizeof(addr)) == 0;
  if (!ok && errno == EINPROGRESS) {
    pollfd p{.fd = fd, .events = POLLOUT, .revents = 0};
    int err = 0;
    socklen_t len = sizeof(err);
    ok = ::poll(&p, 1, 200) == 1 && ::getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &len) == 0 && err == 0;
  }
  ::close(fd);
  return ok;
}

ServiceTraffic::ServiceTraffic(std::function<void()> kick, std::chrono::milliseconds timeout)
    : kick_(std::move(kick)), timeout_(timeout) {}

ServiceTraffic::~ServiceTraffic() { Stop(); }

void ServiceTraffic::Begin(const std::string& ns, const std::string& service) {
  std::lock_guard lock(mu_);
  ++in_flight_[{ns, service}];
}

void ServiceTraffic::End(const std::string& ns, const std::string& service) {
  std::lock_guard lock(mu_);
  auto it = in_flight_.find({ns, service});
  if (it == in_flight_.end()) return;
  if (--it->second <= 0) in_flight_.erase(it);
}

int64_t ServiceTraffic::InFlight(const std::string& ns, const std::string& service) const {
  std::lock_guard lock(mu_);
  auto it = in_flight_.find({ns, service});
  return it == in_flight_.end() ? 0 : it->second;
}

void ServiceTraffic::Hold(std::function<std::optional<HttpResponse>()> retry, std::function<void(HttpResponse)> respond,
                          HttpResponse on_timeout) {
  {
    std::unique_lock lock(mu_);
    if (stopped_) {
      lock.unlock();
      respond(std::move(on_timeout));
      return;
    }
    held_.push_back(Held{.retry = std::move(retry), .respond = std::move(respond), .on_timeout = std::move(on_timeout),
                         .deadline = std::chrono::steady_clock::now() + timeout_});
    if (!thread_.joinable()) {
      thread_ = std::thread([this] {
        pthread_setname_np(pthread_self(), "proxy-activator");
        Run();
      });
    }
  }
  cv_.notify_all();
  if (kick_) kick_();
}

void ServiceTraffic::Run() {
  std::unique_lock lock(mu_);
  while (!stopped_) {
    cv_.wait_for(lock, std::chrono::milliseconds(50));
    if (stopped_) break;
    std::vector<Held> waiting = std::move(held_);
    held_.clear();
    lock.unlock();
    // Outside the lock: retry reads the store, respond hands the answer to an I/O thread.
    std::vector<Held> still;
    const auto now = std::chrono::steady_clock::now();
    for (Held& h : waiting) {
      if (std::optional<HttpResponse> answer = h.retry()) {
        h.respond(std::move(*answer));
      } else if (now >= h.deadline) {
        h.respond(std::move(h.on_timeout));
      } else {
        still.push_back(std::move(h));
      }
    }
    lock.lock();
    for (Held& h : still) held_.push_back(std::move(h));
  }
}

void ServiceTraffic::Stop() {
  std::vector<Held> left;
  {
    std::lock_guard lock(mu_);
    if (stopped_) return;
    stopped_ = true;
  }
  cv_.notify_all();
  if (thread_.joinable()) thread_.join();
  {
    std::lock_guard lock(mu_);
    left = std::move(held_);
    held_.clear();
  }
  for (Held& h : left) h.respond(std::move(h.on_timeout));
}

}  // namespace tessera
