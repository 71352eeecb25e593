// The TTL-after-finished controller, as Kubernetes' ttl-after-finished
// controller: a batch/v1 Job with spec.ttlSecondsAfterFinished is deleted that
// many seconds after it finished (its Complete or Failed condition turned
// True), and with it its Workload and Pods (the Job controller deletes a Job's
// orphans) and the logs the agents kept for them. Its UsageRecords stay: they
// are the cost reports' history, not the Job's.
//
// It observes the cache's Jobs, so a pass looks only at the expiries due, not
// at every finished Job.
#pragma once

#include <map>
#include <optional>
#include <set>
#include <string>
#include <utility>

#include "server/controllers/controller.h"

namespace tessera {

class TtlAfterFinishedController final : public Controller {
 public:
  // Observes `cache`'s Jobs (it must hold them) for as long as it lives.
  explicit TtlAfterFinishedController(ObjectCache& cache);
  std::string_view name() const override { return "ttl-after-finished-controller"; }
  void Reconcile(PassContext& pass) override;

 private:
  using Key = std::pair<std::string, std::string>;
  void Changed(const Key& job, const StoredObject* now);

  std::set<std::pair<Timestamp, Key>> expiries_;
  std::map<Key, Timestamp> expiry_of_;
};

}  // namespace tessera
