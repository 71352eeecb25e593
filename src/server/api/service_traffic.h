// ServiceTraffic: what the services proxy knows of each Service's load, for
// the InferenceService autoscaler (server/controllers/inferenceservice_controller.h),
// and the requests it holds while a Service scaled to zero starts.
//
//   - In-flight requests per Service (namespace, name): Begin when the proxy
//     takes a request for services/NAME/proxy, End when it was answered (or
//     refused). A held request counts as in flight, so that the controller,
//     which reads InFlight each pass, scales a Service at zero replicas up to
//     one (Knative's activator does the same for its KPA).
//   - Held requests: Hold keeps one until `retry` finds a backend (the first
//     replica turned Ready), then answers it with what `retry` returned, so the
//     first request is answered, not dropped; after `timeout` (60 s by default)
//     it is answered with `on_timeout`. A held request wakes the scheduler loop
//     (`kick`) at once, and `retry` runs every 50 ms on this object's thread.
//
// Thread-safety: every method may be called from any thread. Stop (and the
// destructor) answers the requests still held with their `on_timeout`.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "http/http_server.h"

namespace tessera {

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

  void Begin(const std::string& ns, const std::string& service);
  void End(const std::string& ns, const std::string& service);
  // Requests in flight (held ones included) to the Service now.
  int64_t InFlight(const std::string& ns, const std::string& service) const;

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

  const std::function<void()> kick_;
  const std::chrono::milliseconds timeout_;
  mutable std::mutex mu_;
  std::condition_variable cv_;
  std::map<std::pair<std::string, std::string>, int64_t> in_flight_;
  std::vector<Held> held_;
  bool stopped_ = false;
  std::thread thread_;  // started with the first held request
};

}  // namespace tessera
