// ServiceTraffic: what the services proxy knows of each Service's load, for
// the InferenceService autoscaler (server/controllers/inferenceservice_controller.h),
// and the requests it holds while a Service scaled to zero starts.
//
//   - In-flight requests per Service (namespace, name): Begin when the proxy
//     takes a request for services/NAME/proxy, End when it was answered (or
//     refused). A held request counts as in flight, so that the controller,
//     which reads InFlight each pass, scales a Service at zero replicas up to
//     one (Knative's activator does the same for its KPA).
//     Begin also wakes the scheduler loop (`kick`), twice a second at most.
//   - Held requests: Hold keeps one until `retry` finds a backend (the first
//     replica turned Ready), then answers it with what `retry` returned, so the
//     first request is answered, not dropped; after `timeout` (60 s by default)
//     it is answered with `on_timeout`. A held request wakes the scheduler loop
//     (`kick`) at once, and `retry` runs every 50 ms on this object's thread.
//   - Answered requests per Service: End with the answer's status and when the
//     request began counts it in a window of the last 60 s (Recent: requests,
//     errors, latency percentiles, for the InferenceService's status) and, for
//     a Service of an InferenceService, in the registry's
//     tessera_inferenceservice_requests_total and
//     tessera_inferenceservice_request_duration_seconds (SetMetrics).
//
// Thread-safety: every method may be called from any thread. Stop (and the
// destructor) answers the requests still held with their `on_timeout`.
#pragma once

#include <array>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <iterator>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "http/http_server.h"

namespace tessera {

class MetricsRegistry;

// What a Service's proxy answered over the last RequestStats::kWindow.
struct RequestStats {
  static constexpr int64_t kWindowSeconds = 60;
  int64_t requests = 0;  // answered in the window
  int64_t errors = 0;    // of those: a 5xx, or no answer (the backend failed)
  // Latency percentiles, milliseconds: the upper bound of the histogram bucket
  // the percentile falls in, never above the slowest request seen (0: none).
  int64_t p50_ms = 0;
  int64_t p99_ms = 0;
  // Requests a second over the window, in thousandths (fixed point).
  int64_t PerSecondMilli() const { return requests * 1000 / kWindowSeconds; }
  bool operator==(const RequestStats&) const = default;
};

// How one proxied request ended, for ServiceTraffic::End.
struct RequestEnd {
  int status = 0;  // the backend's answer; 0 when there was none
  std::chrono::steady_clock::time_point began;
  std::string inference_service;  // the Service's tessera.dev/inferenceservice label; empty: none
};

// Whether host:port (IPv4) accepts a TCP connection within 200 ms (closed at
// once): a held request is forwarded only to a replica that listens, as
// Knative's activator probes. True for a host that is not IPv4 (the proxy tries).
bool BackendAccepts(const std::string& host, uint16_t port);

class ServiceTraffic {
 public:
  explicit ServiceTraffic(std::function<void()> kick = nullptr,
                          std::chrono::milliseconds timeout = std::chrono::seconds(60));
  ~ServiceTraffic();
  ServiceTraffic(const ServiceTraffic&) = delete;
  ServiceTraffic& operator=(const ServiceTraffic&) = delete;

  // Also registers the InferenceService metrics families in `metrics`.
  void SetMetrics(MetricsRegistry* metrics);

  // When the request began, for End.
  std::chrono::steady_clock::time_point Begin(const std::string& ns, const std::string& service);
  // Ends an in-flight request; `ended`, when given, counts it as answered.
  void End(const std::string& ns, const std::string& service, const std::optional<RequestEnd>& ended = std::nullopt);
  // Requests in flight (held ones included) to the Service now.
  int64_t InFlight(const std::string& ns, const std::string& service) const;
  // Those answered over the last minute (as of `now`, for tests).
  RequestStats Recent(const std::string& ns, const std::string& service,
                      std::chrono::steady_clock::time_point now = std::chrono::steady_clock::now()) const;

  // Holds a request (see above). `respond` is called exactly once.
  void Hold(std::function<std::optional<HttpResponse>()> retry, std::function<void(HttpResponse)> respond,
            HttpResponse on_timeout);
  void Stop();

 private:
  struct Held {
    std::function<std::optional<HttpResponse>()> retry;
    std::function<void(HttpResponse)> respond;
    HttpResponse on_timeout;
    std::chrono::steady_clock::time_point deadline;
  };
  void Run();

  // Latency buckets' upper bounds, milliseconds (the last is open).
  static constexpr int64_t kBucketsMs[] = {5, 10, 25, 50, 100, 250, 500, 1000, 2500, 5000, 10000, 30000};
  static constexpr size_t kBuckets = std::size(kBucketsMs) + 1;
  // One second of a Service's answered requests.
  struct Second {
    int64_t at = -1;  // seconds of the steady clock; -1: unused
    int64_t requests = 0;
    int64_t errors = 0;
    int64_t slowest_ms = 0;
    int64_t buckets[kBuckets] = {};
  };
  using Window = std::array<Second, RequestStats::kWindowSeconds>;

  const std::function<void()> kick_;
  const std::chrono::milliseconds timeout_;
  mutable std::mutex mu_;
  std::condition_variable cv_;
  std::map<std::pair<std::string, std::string>, int64_t> in_flight_;
  std::map<std::pair<std::string, std::string>, Window> answered_;
  MetricsRegistry* metrics_ = nullptr;
  static constexpr std::chrono::milliseconds kKickEvery{500};
  std::chrono::steady_clock::time_point last_kick_;  // Begin's last kick of the loop
  std::vector<Held> held_;
  bool stopped_ = false;
  std::thread thread_;  // started with the first held request
};

}  // namespace tessera
