// WatchHub: fans the store's event log out to watch streams.
//
// A watcher names a kind, optionally a namespace and a label selector, and the
// revision it has seen; it first receives every matching event after that
// revision still in the log (or Gone when the log was compacted past it), then
// live events, in revision order, without gaps or repeats. One dispatcher thread
// reads the log once per batch of writes (Notify) and encodes each event once,
// however many watchers it goes to; it also polls, so writes made by another
// server process on the same store are seen too.
//
// Thread-safe.
#pragma once

#include <functional>

#include <atomic>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "http/http_server.h"
#include "server/api/field_selector.h"
#include "server/api/label_selector.h"
#include "store/store.h"

namespace tessera {

struct WatchFilter {
  std::string kind;  // store kind, "<group>/<Kind>"
  std::string ns;    // empty: all namespaces
  LabelSelector selector;
  FieldSelector fields;
  // When set, what the watcher sees of each object (a node's view of other
  // nodes' pods: PodNetworkView).
  std::function<nlohmann::json(const nlohmann::json&)> project;
};

class WatchHub {
 public:
  explicit WatchHub(Store& store);
  ~WatchHub();

  // Starts streaming to `sink`. Fails with Gone when `from_revision` is older
  // than the retained event log.
  Status Subscribe(WatchFilter filter, int64_t from_revision, std::shared_ptr<StreamSink> sink);
  // Wakes the dispatcher: call after writes.
  void Notify();
  size_t watchers() const;

  // {"type":"ADDED","object":{...}}\n
  static std::string EncodeEvent(const StoreEvent& e);

 private:
  struct Watcher {
    WatchFilter filter;
    int64_t seen = 0;
    std::shared_ptr<StreamSink> sink;
  };
  void Run();
  bool Deliver(Watcher& w, const StoreEvent& e, const std::string& encoded);

  // Wakes the dispatcher. Its own mutex, held only for a moment: Notify runs on
  // the store's writer thread, which must not wait for a fan-out to finish.
  void Wake();

  Store& store_;
  mutable std::mutex mu_;  // the watchers and dispatched_; held through a dispatch
  std::vector<Watcher> watchers_;
  int64_t dispatched_ = 0;  // every event up to here went to every watcher
  std::atomic<bool> any_watchers_{false};  // !watchers_.empty(), for Notify
  std::mutex wake_mu_;
  std::condition_variable wake_cv_;
  bool notified_ = false;  // guarded by wake_mu_
  bool stop_ = false;      // guarded by wake_mu_
  std::thread thread_;
};

}  // namespace tessera
