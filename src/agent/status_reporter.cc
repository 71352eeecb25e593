#include "agent/status_reporter.h"

#include <pthread.h>
#include <spdlog/spdlog.h>

#include <chrono>

namespace tessera {
namespace {

using nlohmann::json;

constexpr auto kRetryPause = std::chrono::milliseconds(500);

}  // namespace

StatusReporter::StatusReporter(std::unique_ptr<ApiClient> client) : client_(std::move(client)) {
  thread_ = std::thread([this] {
    pthread_setname_np(pthread_self(), "agent-status");
    Run();
  });
}

StatusReporter::~StatusReporter() { Stop(); }

void StatusReporter::Post(const std::string& uid, const std::string& path, const json& status, uint64_t version) {
  {
    std::lock_guard lock(mu_);
    auto [it, fresh] = pending_.try_emplace(uid);
    Pending& p = it->second;
    if (!fresh && p.version >= version) return;
    p.path = path;
    if (fresh || !p.status.is_object()) {
      p.status = status;
    } else {
      p.status.merge_patch(status);  // what sending the older, then this, would leave
    }
    p.version = version;
  }
  cv_.notify_one();
}

std::map<std::string, uint64_t> StatusReporter::TakeConfirmed() {
  std::lock_guard lock(mu_);
  return std::exchange(confirmed_, {});
}

void StatusReporter::Stop() {
  {
    std::lock_guard lock(mu_);
    if (stop_) return;
    stop_ = true;
  }
  cv_.notify_one();
  if (thread_.joinable()) thread_.join();
}

bool StatusReporter::Send(std::map<std::string, Pending>& batch) {
  bool all_sent = true;
  for (auto& [uid, p] : batch) {
    auto r = client_->Request("PATCH", p.path, json{{"status", p.status}}.dump(), "application/merge-patch+json");
    const bool taken = r && (r->status / 100 == 2 || r->status == 404);  // 404: the pod is gone, nothing is owed
    std::lock_guard lock(mu_);
    if (taken) {
      uint64_t& done = confirmed_[uid];
      done = std::max(done, p.version);
      continue;
    }
    all_sent = false;
    spdlog::debug("status of {}: {}", p.path, r ? fmt::format("HTTP {}: {}", r->status, r->body) : r.error().message());
    // Back in the queue, under anything posted meanwhile.
    auto [it, fresh] = pending_.try_emplace(uid, std::move(p));
    if (!fresh) {
      json newer = std::move(it->second.status);
      it->second.status = std::move(p.status);
      it->second.status.merge_patch(newer);
    }
  }
  return all_sent;
}

void StatusReporter::Run() {
  std::unique_lock lock(mu_);
  while (true) {
    cv_.wait(lock, [this] { return stop_ || !pending_.empty(); });
    const bool stopping = stop_;
    std::map<std::string, Pending> batch = std::exchange(pending_, {});
    lock.unlock();
    const bool all_sent = Send(batch);
    lock.lock();
    if (stopping) return;  // one last attempt was made; the rest stays owed
    if (!all_sent) cv_.wait_for(lock, kRetryPause, [this] { return stop_; });
  }
}

}  // namespace tessera
