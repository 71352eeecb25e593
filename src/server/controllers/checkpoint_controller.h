// The checkpoint controller: a workload's last checkpoint, as its pods report
// it, becomes the Workload's annotation tessera.dev/last-checkpoint, which the
// scheduler core reads for least-waste preemption (the work lost since the
// last checkpoint) and `describe` shows.
//
// An agent sets the Pod annotation when a pod writes or touches
// $TESSERA_CHECKPOINT_DIR/.tessera-checkpoint (docs/agent.md); a workload may
// also set the Workload's annotation itself (a PATCH with a token allowed to).
// The Workload keeps the newest of the two: an older pod time never moves it back.
#pragma once

#include "server/controllers/controller.h"

namespace tessera {

class CheckpointController final : public Controller {
 public:
  std::string_view name() const override { return "checkpoint-controller"; }
  void Reconcile(PassContext& pass) override;
};

}  // namespace tessera
