// Informer: one kind's objects as the server has them, kept by a thread that
// lists them and then watches from the list's resourceVersion (list again on
// any break), as client-go's informers do. The agent's pod network reads
// Nodes (routes), Pods, Namespaces, NetworkPolicies, Services and
// EndpointSlices through informers (docs/agent.md "Pod network").
//
// Readers take what they need under the informer's lock (Read); version()
// counts changes, so a reader that keeps the last version it acted on does
// nothing while nothing changed. synced() is true once a list has arrived.
//
// Thread-safety: every method may be called from any thread.
#pragma once

#include <atomic>
#include <condition_variable>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>

#include <nlohmann/json.hpp>

#include "client/api_client.h"

namespace tessera {

class Informer {
 public:
  // `path`: a collection ("/api/v1/pods", "/apis/networking.k8s.io/v1/networkpolicies"),
  // optionally with a query ("?fieldSelector=..."). `on_change` (may be empty)
  // is called on the informer's thread after each change, without its lock.
  Informer(std::string server, std::string token, TlsClientOptions tls, std::string path,
           std::function<void()> on_change = {});
  ~Informer();  // stops the thread
  Informer(const Informer&) = delete;
  Informer& operator=(const Informer&) = delete;

  uint64_t version() const { return version_.load(); }
  bool synced() const { return synced_.load(); }
  // Calls `fn` with the objects, by "namespace/name" ("name" for cluster
  // objects), under the lock: keep it short.
  void Read(const std::function<void(const std::map<std::string, nlohmann::json>&)>& fn) const;

 private:
  void Run();

  std::string path_;
  std::function<void()> on_change_;
  std::unique_ptr<ApiClient> client_;
  mutable std::mutex mu_;
  std::map<std::string, nlohmann::json> objects_;
  std::atomic<uint64_t> version_{0};
  std::atomic<bool> synced_{false};
  std::atomic<bool> stop_{false};
  std::mutex sleep_mu_;
  std::condition_variable sleep_cv_;
  std::thread thread_;
};

}  // namespace tessera
