// The requeue controller: an evicted Workload (preempted, suspended, its node
// lost) goes back to its queue once all its Pods are gone, as Kueue requeues an
// evicted workload: status.admission is cleared, QuotaReserved and Admitted
// turn False with the cause, Evicted turns False (Requeued), and an Event says so.
#pragma once

#include "server/controllers/controller.h"

namespace tessera {

class RequeueController final : public Controller {
 public:
  std::string_view name() const override { return "requeue-controller"; }
  void Reconcile(PassContext& pass) override;
};

}  // namespace tessera
