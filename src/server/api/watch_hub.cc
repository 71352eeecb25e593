#include "server/api/watch_hub.h"

#include <pthread.h>
#include <spdlog/spdlog.h>

#include <algorithm>

namespace tessera {
namespace {

constexpr size_t kBatch = 4096;
constexpr auto kPollInterval = std::chrono::milliseconds(500);

}  // namespace

WatchHub::WatchHub(Store& store) : store_(store) {
  dispatched_ = store_.Revision();
  thread_ = std::thread([this] {
    pthread_setname_np(pthread_self(), "watch-hub");
    Run();
  });
}

WatchHub::~WatchHub() {
  {
    std::lock_guard lock(wake_mu_);
    stop_ = true;
  }
  wake_cv_.notify_all();
  thread_.join();
  for (Watcher& w : watchers_) w.sink->Close();
}

std::string WatchHub::EncodeEvent(const StoreEvent& e) {
  const char* type = e.type == EventType::kAdded ? "ADDED" : e.type == EventType::kModified ? "MODIFIED" : "DELETED";
  std::string out = R"({"type":")";
  out += type;
  out += R"(","object":)";
  out += e.object.object.dump();
  out += "}\n";
  return out;
}

bool WatchHub::Deliver(Watcher& w, const StoreEvent& e, const std::string& encoded) {
  if (e.revision <= w.seen) return true;
  w.seen = e.revision;
  const ObjectKey& k = e.object.key;
  if (k.kind != w.filter.kind || (!w.filter.ns.empty() && k.ns != w.filter.ns)) return true;
  if (!w.filter.selector.MatchesObject(e.object.object) || !w.filter.fields.Matches(e.object.object)) return true;
  if (w.filter.project) {
    StoreEvent projected = e;
    projected.object.object = w.filter.project(e.object.object);
    return w.sink->Write(EncodeEvent(projected));
  }
  return w.sink->Write(encoded);
}

Status WatchHub::Subscribe(WatchFilter filter, int64_t from_revision, std::shared_ptr<StreamSink> sink) {
  std::lock_guard lock(mu_);
  // Alone, the dispatcher was not woken for the writes since it last ran
  // (Notify): it starts from the store's revision, and this watcher catches up to it.
  if (watchers_.empty()) dispatched_ = std::max(dispatched_, store_.Revision());
  Watcher w{.filter = std::move(filter), .seen = from_revision, .sink = std::move(sink)};
  // Catch up to what every other watcher has seen; live events continue from there.
  int64_t at = from_revision;
  while (at < dispatched_) {
    auto events = store_.EventsSince(at, kBatch);
    if (!events) return events.error();
    if (events->empty()) break;
    for (const StoreEvent& e : *events) {
      if (e.revision > dispatched_) break;
      if (!Deliver(w, e, EncodeEvent(e))) return Status::Ok();  // client already gone
      at = e.revision;
    }
    if (events->back().revision >= dispatched_) break;
  }
  w.seen = std::max(w.seen, dispatched_);
  watchers_.push_back(std::move(w));
  any_watchers_.store(true);
  Wake();  // a write made while there was no watcher may not have woken the dispatcher
  return Status::Ok();
}

void WatchHub::Notify() {
  // Without watchers there is nothing to dispatch (Subscribe starts from the
  // store's revision then).
  if (any_watchers_.load()) Wake();
}

void WatchHub::Wake() {
  {
    std::lock_guard lock(wake_mu_);
    // A wake-up already due covers this write too: waking the dispatcher for
    // every write of a burst cost more than the writes.
    if (notified_) return;
    notified_ = true;
  }
  wake_cv_.notify_one();
}

size_t WatchHub::watchers() const {
  std::lock_guard lock(mu_);
  return watchers_.size();
}

void WatchHub::Run() {
  while (true) {
    {
      std::unique_lock wake(wake_mu_);
      wake_cv_.wait_for(wake, kPollInterval, [this] { return notified_ || stop_; });
      if (stop_) break;
      notified_ = false;
    }
    std::lock_guard lock(mu_);
    if (watchers_.empty()) {
      // Nobody to deliver to: skip the log instead of reading and encoding every
      // write. A later Subscribe catches up from the store itself (its own
      // EventsSince up to dispatched_), so nothing is lost by skipping here.
      dispatched_ = std::max(dispatched_, store_.Revision());
      continue;
    }
    for (;;) {
      auto events = store_.EventsSince(dispatched_, kBatch);
      if (!events) {
        // The log moved past us (compaction under a burst): watchers must relist.
        spdlog::warn("watch dispatcher: {}; closing {} watch streams", events.error().message(), watchers_.size());
        for (Watcher& w : watchers_) w.sink->Close();
        watchers_.clear();
        dispatched_ = store_.Revision();
        break;
      }
      if (events->empty()) break;
      for (const StoreEvent& e : *events) {
        const std::string encoded = EncodeEvent(e);
        std::erase_if(watchers_, [&](Watcher& w) { return !Deliver(w, e, encoded); });
        dispatched_ = e.revision;
      }
      if (events->size() < kBatch) break;
    }
    std::erase_if(watchers_, [](const Watcher& w) { return !w.sink->open(); });
    any_watchers_.store(!watchers_.empty());
  }
}

}  // namespace tessera
