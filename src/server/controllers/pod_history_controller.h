// The pod history controller: remembers the pod instances that ended and were
// deleted, so that their logs stay readable (`tessera logs --previous`, and a
// finished or preempted job's logs; server/api/pod_logs.h) until the Job is
// cleaned up.
//
// A Workload's Pods are named <workload>-<podset>-<index>; when the Workload is
// preempted (its Pods deleted) and admitted again, or a Job replaces a failed
// Pod, the new Pods get the same names with new uids. For each Pod of a
// Workload (label tessera.dev/workload) that is deleted after it was bound to a
// node, this controller appends a record to the Workload's status.podHistory
// (newest last, at most kPodHistoryCap entries):
//
//   {name, uid, nodeName, containerName, phase, reason, message, startTime,
//    finishedAt, deletedAt}
//
// The uid and node say where the agent keeps that instance's log files
// (<data_dir>/pods/<ns>_<name>_<uid>). The records go with the Workload: when
// its Job is deleted (by a user, or by its ttlSecondsAfterFinished) they are
// gone, and so are the logs through the API. Bare Pods (no Workload) have no
// history: their logs go with them.
//
// It observes the cache's Pods and keeps a small record of each bound Pod of a
// Workload (not the object), so that on deletion it still knows where the Pod
// ran. Records not written yet (a conflict) are tried again next pass; those
// of a Workload that is gone are dropped. A server restart forgets the records
// of deletions it had not written yet.
#pragma once

#include <cstddef>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "server/controllers/controller.h"

namespace tessera {

inline constexpr size_t kPodHistoryCap = 100;

// `history` (a Workload's status.podHistory; anything but an array: none) with
// `records` appended, newest last, leaving out those whose uid is there
// already, and only the newest `cap` kept.
nlohmann::json AppendPodHistory(const nlohmann::json& history, const std::vector<nlohmann::json>& records,
                                size_t cap = kPodHistoryCap);

class PodHistoryController final : public Controller {
 public:
  // Observes `cache`'s Pods (it must hold them and Workloads) for as long as it lives.
  explicit PodHistoryController(ObjectCache& cache);
  std::string_view name() const override { return "pod-history-controller"; }
  void Reconcile(PassContext& pass) override;

 private:
  using Key = std::pair<std::string, std::string>;
  struct Instance {
    std::string workload;
    nlohmann::json record;  // without deletedAt
  };
  void Changed(const Key& pod, const StoredObject* now);

  std::map<Key, Instance> bound_;  // the Pods of Workloads that are on a node, as last seen
  // (namespace, workload) -> its deleted instances not written yet, oldest first.
  std::map<Key, std::vector<nlohmann::json>> pending_;
};

}  // namespace tessera
