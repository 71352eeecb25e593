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
//   - elastic growth: a gang running below maxReplicas that has reported a
//     checkpoint asks for the rest with a placeholder Workload
//     (trainingjob-<name>-grow, kPlaceholderAnnotation: no pods, the lowest
//     priority, never preempting), queued like any work; once it is admitted
//     (room appeared) the gang restarts at its next checkpoint (reason
//     Resizing, not counted in restarts) and the placeholder is deleted as the
//     gang's pods have stopped, so the gang is admitted again with that room.
//     No checkpoint within kGrowthCheckpointWait: the room is given back until
//     the next checkpoint. (Shrinking is by preemption of the whole gang.)
//   - status: phase (Pending, Running, Resizing, Restarting, Succeeded, Failed), restarts,
//     worldSize, lastCheckpoint, workload, message, and the Succeeded/Failed
//     conditions.
// A TrainingJob's deletion deletes its Workload and Pods.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "common/time.h"

#include "server/controllers/controller.h"

namespace tessera {

inline constexpr const char* kTrainingJobKind = "tessera.dev/TrainingJob";
inline constexpr int64_t kDefaultTrainingBackoffLimit = 3;
inline constexpr int32_t kGrowthPlaceholderPriority = -1000000000;  // below any PriorityClass users make
inline constexpr Duration kGrowthCheckpointWait = Duration::Seconds(600);

// The Workload the controller makes for TrainingJob `tj`: one gang of workers
// (minCount the elastic minimum), in spec.queueName or the namespace's default LocalQueue.
nlohmann::json TrainingJobWorkload(const ObjectCache& cache, const StoredObject& tj, const std::string& now_text);

class TrainingJobController final : public Controller {
 public:
  std::string_view name() const override { return "trainingjob-controller"; }
  void Reconcile(PassContext& pass) override;

 private:
  // An elastic gang below its maximum: the placeholder, and the restart that grows it.
  void Grow(PassContext& pass, const StoredObject& tj, const StoredObject& wl, const StoredObject* growth,
            int64_t world, int64_t max, nlohmann::json& st, std::string& message, std::vector<WriteOp>& unit);
  void DeleteOrphans(PassContext& pass);
  std::optional<uint64_t> orphans_checked_at_;  // ObjectCache::removals of the kind at the last scan
};

}  // namespace tessera
