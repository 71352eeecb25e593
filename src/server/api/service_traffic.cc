#include "server/api/service_traffic.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>

#include "server/metrics_registry.h"

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

namespace {

constexpr char kRequestsMetric[] = "tessera_inferenceservice_requests_total";
constexpr char kDurationMetric[] = "tessera_inferenceservice_request_duration_seconds";

int64_t SecondOf(std::chrono::steady_clock::time_point t) {
  return std::chrono::duration_cast<std::chrono::seconds>(t.time_since_epoch()).count();
}

}  // namespace

void ServiceTraffic::SetMetrics(MetricsRegistry* metrics) {
  if (metrics != nullptr) {
    metrics->AddCounter(kRequestsMetric,
                        "Requests the server's proxy answered for an InferenceService, by the answer's HTTP code");
    std::vector<double> buckets;
    for (int64_t ms : kBucketsMs) buckets.push_back(static_cast<double>(ms) / 1000);
    metrics->AddHistogram(kDurationMetric, "Time from taking a request for an InferenceService to its answer",
                          std::move(buckets));
  }
  std::lock_guard lock(mu_);
  metrics_ = metrics;
}

std::chrono::steady_clock::time_point ServiceTraffic::Begin(const std::string& ns, const std::string& service) {
  const auto now = std::chrono::steady_clock::now();
  bool kick = false;
  {
    std::lock_guard lock(mu_);
    ++in_flight_[{ns, service}];
    // Rising load wakes the autoscaler, twice a second at most (Knative's KPA
    // ticks every 2 s), rather than waiting for the loop's resync.
    if (kick_ && now - last_kick_ >= kKickEvery) {
      last_kick_ = now;
      kick = true;
    }
  }
  if (kick) kick_();
  return now;
}

void ServiceTraffic::End(const std::string& ns, const std::string& service, const std::optional<RequestEnd>& ended) {
  MetricsRegistry* metrics = nullptr;
  const auto now = std::chrono::steady_clock::now();
  const int64_t us = ended ? std::chrono::duration_cast<std::chrono::microseconds>(now - ended->began).count() : 0;
  const int64_t ms = (std::max<int64_t>(us, 0) + 999) / 1000;  // rounded up: percentiles are upper bounds
  const bool error = ended && (ended->status == 0 || ended->status >= 500);
  {
    std::lock_guard lock(mu_);
    auto it = in_flight_.find({ns, service});
    if (it != in_flight_.end() && --it->second <= 0) in_flight_.erase(it);
    if (!ended) return;
    const int64_t at = SecondOf(now);
    Second& s = answered_[{ns, service}][static_cast<size_t>(at % RequestStats::kWindowSeconds)];
    if (s.at != at) s = Second{.at = at};
    ++s.requests;
    if (error) ++s.errors;
    s.slowest_ms = std::max(s.slowest_ms, ms);
    const auto bucket = std::lower_bound(std::begin(kBucketsMs), std::end(kBucketsMs), ms) - std::begin(kBucketsMs);
    ++s.buckets[bucket];
    metrics = ended->inference_service.empty() ? nullptr : metrics_;
  }
  if (metrics == nullptr) return;
  const std::string code = ended->status == 0 ? "0" : std::to_string(ended->status);
  metrics->Increment(kRequestsMetric, {{"namespace", ns}, {"inferenceservice", ended->inference_service}, {"code", code}});
  metrics->Observe(kDurationMetric, {{"namespace", ns}, {"inferenceservice", ended->inference_service}},
                   static_cast<double>(us) / 1e6);
}

RequestStats ServiceTraffic::Recent(const std::string& ns, const std::string& service,
                                    std::chrono::steady_clock::time_point now) const {
  RequestStats out;
  int64_t buckets[kBuckets] = {};
  int64_t slowest = 0;
  {
    std::lock_guard lock(mu_);
    auto it = answered_.find({ns, service});
    if (it == answered_.end()) return out;
    const int64_t at = SecondOf(now);
    for (const Second& s : it->second) {
      if (s.at < 0 || s.at > at || at - s.at >= RequestStats::kWindowSeconds) continue;
      out.requests += s.requests;
      out.errors += s.errors;
      slowest = std::max(slowest, s.slowest_ms);
      for (size_t b = 0; b < kBuckets; ++b) buckets[b] += s.buckets[b];
    }
  }
  auto percentile = [&](int64_t pct) -> int64_t {
    const int64_t rank = (out.requests * pct + 99) / 100;  // the rank-th fastest, 1-based
    int64_t seen = 0;
    for (size_t b = 0; b < kBuckets; ++b) {
      seen += buckets[b];
      if (seen >= rank) return b < std::size(kBucketsMs) ? std::min(kBucketsMs[b], slowest) : slowest;
    }
    return slowest;
  };
  if (out.requests > 0) {
    out.p50_ms = percentile(50);
    out.p99_ms = percentile(99);
  }
  return out;
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
