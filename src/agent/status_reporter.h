// StatusReporter: sends pods' statuses to the API from its own thread, so that
// the agent's loop never waits for a PATCH (as a kubelet's status manager does).
//
// The loop Posts a pod's whole status with a version that grows with each
// change; the reporter sends the latest one per pod. A status posted while an
// earlier one was still unsent is merged over it (JSON merge patch), so what
// reaches the API is what sending each in turn would leave. A send that fails
// (the server is unreachable) is retried, merged with anything newer, after a
// pause. TakeConfirmed tells the loop which versions the API has taken (or
// refused with 404: the pod is gone), so that it knows what is still owed,
// for example across its own restart.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>

#include <nlohmann/json.hpp>

#include "client/api_client.h"

namespace tessera {

class StatusReporter {
 public:
  // Starts the sending thread; `client` is used by it alone.
  explicit StatusReporter(std::unique_ptr<ApiClient> client);
  ~StatusReporter();  // Stop()
  StatusReporter(const StatusReporter&) = delete;
  StatusReporter& operator=(const StatusReporter&) = delete;

  // Queues pod `uid`'s status, to be sent as a merge patch of {"status": ...}
  // to `path` (the pod's status subresource).
  void Post(const std::string& uid, const std::string& path, const nlohmann::json& status, uint64_t version);
  // The newest version the API has taken for each pod since the last call.
  std::map<std::string, uint64_t> TakeConfirmed();
  // Sends what is queued once more (without waiting out a retry pause), then
  // ends the thread. What is still unsent is dropped: its pods are owed a report.
  void Stop();

 private:
  struct Pending {
    std::string path;
    nlohmann::json status;
    uint64_t version = 0;
  };
  void Run();
  // Sends each of `batch`; what fails goes back to the queue unless a newer post replaced it.
  bool Send(std::map<std::string, Pending>& batch);

  std::unique_ptr<ApiClient> client_;
  std::mutex mu_;
  std::condition_variable cv_;
  std::map<std::string, Pending> pending_;     // by uid; guarded by mu_
  std::map<std::string, uint64_t> confirmed_;  // guarded by mu_
  bool stop_ = false;                          // guarded by mu_
  std::thread thread_;
};

}  // namespace tessera
