// EventRecorder: core v1 Events about the objects the controllers act on, the
// history that `tessera describe` shows ("Admitted by ClusterQueue team-a",
// "Preempted by ...", "Successfully assigned ... to node-1").
//
// As Kubernetes' recorder does, a repeat of the same reason and message about
// the same object within the window bumps count and lastTimestamp of the event
// already written instead of adding another. Events older than the TTL (one hour,
// Kubernetes' default) that this recorder wrote are deleted.
//
// As Kubernetes' recorders drop events once their queue is full, this one
// writes at most kEventsPerSecond a second, kEventBurst at once, of each reason
// (so that a storm of Pending events does not crowd out Admitted, Preempted or
// NodeLost): under a storm (20,000 new workloads, each Pending) the rest are
// dropped, counted and logged, rather than doubling the store's writes and
// every watcher's work. The objects' own conditions still say why each waits.
#pragma once

#include <deque>
#include <map>
#include <optional>
#include <string>

#include "common/time.h"
#include "common/token_bucket.h"
#include "server/batched_writer.h"
#include "store/store.h"

namespace tessera {

class EventRecorder {
 public:
  explicit EventRecorder(std::string component) : component_(std::move(component)) {}

  enum class Type { kNormal, kWarning };
  // Adds the write of one event about `involved` to `writer`.
  void Record(BatchedWriter& writer, const StoredObject& involved, Type type, const std::string& reason,
              const std::string& message, Timestamp now);
  // Adds the deletion of this recorder's events that are older than the TTL.
  void Expire(BatchedWriter& writer, Timestamp now);

  static constexpr int64_t kEventsPerSecond = 100;
  static constexpr int64_t kEventBurst = 1000;
  // Events dropped over their reason's budget, since the start.
  int64_t dropped() const { return dropped_; }

 private:
  struct Written {
    ObjectKey key;
    int32_t count = 0;
    std::string first_timestamp;
    Timestamp last;
  };
  std::string component_;
  std::map<std::string, Written> by_aggregate_;  // uid/reason/message -> event
  std::deque<std::pair<Timestamp, std::string>> by_age_;  // (last written, aggregate key)
  int64_t sequence_ = 0;
  std::map<std::string, TokenBucket, std::less<>> budgets_;  // by reason
  int64_t dropped_ = 0;
  int64_t dropped_unlogged_ = 0;
  std::optional<Timestamp> logged_;
  // Takes one event of `reason` from its budget; false (and counted) when there is none.
  bool TakeFromBudget(const std::string& reason, Timestamp now);
  // Logs the drops not logged yet, at most every kDroppedLogPeriod.
  void LogDropped(Timestamp now);
};

}  // namespace tessera
