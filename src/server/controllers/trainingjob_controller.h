// The TrainingJob controller (tessera.dev/v1 TrainingJob, like Kubeflow's
// PyTorchJob): one Workload per TrainingJob, named trainingjob-<name>, whose
// pod set "worker" is the gang:
//   - replicas N: N workers admitted together (all or nothing); elastic
//     minReplicas..maxReplicas: admitted with as many as fit, at least the
//     minimum (Kueue's partial admission); the world size is what was admitted;
//   - each worker has the torchrun environment as Kubeflow sets it: the agent's
//     MASTER_ADDR (rank 0's pod IP), MASTER_PORT, WORLD_SIZE, RANK, LOCAL_RANK,
//     and from here NODE_RANK, PET_NODE_RANK, PET_NNODES, PET_NPROC_PER_NODE,
//     PET_MASTER_ADDR, PET_MASTER_PORT;
//   - restartPolicy OnFailure (the default): when a worker fails, the whole gang
//     is evicted and queued again (restarts counted), up to backoffLimit
//     (default 3); it resumes from its last checkpoint, since its checkpoint
//     directory is the Workload's; Never, or no restarts left: the TrainingJob fails;
//   - status: phase (Pending, Running, Restarting, Succeeded, Failed), restarts,
//     worldSize, lastCheckpoint, workload, message, and the Succeeded/Failed
//     conditions.
// A TrainingJob's deletion deletes its Workload and Pods.
#pragma once

#include <cstdint>
#include <optional>

#include "server/controllers/controller.h"

namespace tessera {

inline constexpr const char* kTrainingJobKind = "tessera.dev/TrainingJob";
inline constexpr int64_t kDefaultTrainingBackoffLimit = 3;

class TrainingJobController final : public Controller {
 public:
  std::string_view name() const override { return "trainingjob-controller"; }
  void Reconcile(PassContext& pass) override;

 private:
  void DeleteOrphans(PassContext& pass);
  std::optional<uint64_t> orphans_checked_at_;  // ObjectCache::removals of the kind at the last scan
};

}  // namespace tessera
