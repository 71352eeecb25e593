// EventRecorder: core v1 Events about the objects the controllers act on, the
// history that `tessera describe` shows ("Admitted by ClusterQueue team-a",
// "Preempted by ...", "Successfully assigned ... to node-1").
//
// As Kubernetes' recorder does, a repeat of the same reason and message about
// the same object within the window bumps count and lastTimestamp of the event
// already written instead of adding another. Events older than the TTL (one hour,
// Kubernetes' default) that this recorder wrote are deleted.
#pragma once

#include <deque>
#include <map>
#include <string>

#include "common/time.h"
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
};

}  // namespace tessera
