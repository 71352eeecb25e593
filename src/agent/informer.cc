#include "agent/informer.h"

#include <pthread.h>

#include <chrono>

#include <spdlog/spdlog.h>

namespace tessera {
namespace {

using json = nlohmann::json;

std::string Key(const json& object) {
  const auto meta = object.find("metadata");
  if (meta == object.end() || !meta->is_object()) return "";
  const std::string ns = meta->value("namespace", "");
  const std::string name = meta->value("name", "");
  return ns.empty() ? name : ns + "/" + name;
}

std::string WithQuery(const std::string& path, const std::string& query) {
  return path + (path.find('?') == std::string::npos ? "?" : "&") + query;
}

}  // namespace

Informer::Informer(std::string server, std::string token, TlsClientOptions tls, std::string path,
                   std::function<void()> on_change)
    : path_(std::move(path)),
      on_change_(std::move(on_change)),
      client_(std::make_unique<ApiClient>(std::move(server), std::move(token), std::move(tls))) {
  thread_ = std::thread([this] { Run(); });
}

Informer::~Informer() {
  stop_ = true;
  {
    std::lock_guard lock(sleep_mu_);
  }
  sleep_cv_.notify_all();
  client_->Cancel();
  if (thread_.joinable()) thread_.join();
}

void Informer::Read(const std::function<void(const std::map<std::string, json>&)>& fn) const {
  std::lock_guard lock(mu_);
  fn(objects_);
}

void Informer::Run() {
  pthread_setname_np(pthread_self(), "agent-inform");
  const auto pause = [&](int ms) {
    std::unique_lock lock(sleep_mu_);
    sleep_cv_.wait_for(lock, std::chrono::milliseconds(ms), [&] { return stop_.load(); });
  };
  int last_warned = 0;
  while (!stop_) {
    auto listed = client_->Request("GET", path_);
    if (!listed || listed->status != 200) {
      // Said once for each new answer (a kind this server does not serve yet: 404 until it does).
      const int status = listed ? listed->status : 0;
      if (status / 100 == 4 && status != last_warned) {
        spdlog::warn("informer {}: HTTP {}: {}", path_, status, listed->body.substr(0, 300));
      }
      last_warned = status;
      pause(1000);
      continue;
    }
    const json list = json::parse(listed->body, nullptr, false);
    const json meta = list.is_object() ? list.value("metadata", json::object()) : json::object();
    const std::string revision = meta.is_object() ? meta.value("resourceVersion", "0") : "0";
    {
      std::lock_guard lock(mu_);
      objects_.clear();
      const json items = list.is_object() ? list.value("items", json::array()) : json::array();
      for (const json& item : items) {
        if (std::string key = Key(item); !key.empty()) objects_[key] = item;
      }
      ++version_;
    }
    synced_ = true;
    if (on_change_) on_change_();
    (void)client_->Stream(WithQuery(path_, "watch=true&allowWatchBookmarks=true&resourceVersion=" + revision),
                          [&](const std::string& line) {
                            const json event = json::parse(line, nullptr, false);
                            if (!event.is_object()) return !stop_.load();
                            const std::string type = event.value("type", "");
                            const auto object = event.find("object");
                            if (type == "BOOKMARK" || type == "ERROR" || object == event.end() || !object->is_object()) {
                              return !stop_.load() && type != "ERROR";  // ERROR (410 Gone): list again
                            }
                            const std::string key = Key(*object);
                            if (key.empty()) return !stop_.load();
                            {
                              std::lock_guard lock(mu_);
                              if (type == "DELETED") {
                                objects_.erase(key);
                              } else {
                                objects_[key] = *object;
                              }
                              ++version_;
                            }
                            if (on_change_) on_change_();
                            return !stop_.load();
                          });
    if (!stop_) pause(200);
  }
}

}  // namespace tessera
