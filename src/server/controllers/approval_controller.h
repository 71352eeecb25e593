// The approval controller: seed 004's rule ("if it involves expensive
// resources, production traffic or cross-team impact, put a gate"), as
// tessera.dev/v1 ApprovalPolicies that an admin sets:
//
//   apiVersion: tessera.dev/v1
//   kind: ApprovalPolicy
//   metadata: {name: big-jobs}
//   spec:
//     namespaceSelector: {matchLabels: {tier: research}}   # every namespace when absent
//     thresholds:                 # a workload crossing any one of them needs approval
//       gpus: 8                   # more GPUs than this (the whole gang)
//       gpuHours: 100             # GPUs x run-time limit; work without a limit crosses it
//       estimatedCost: "500"      # those GPU-hours at the dearest flavor of its queue
//       priorityClasses: [production-inference]
//       overNominalQuota: true    # more GPUs than its queue's nominal quota in any flavor
//     requiredApprovals: 2        # from distinct people (default 1)
//     allowSelfApproval: false    # the requester's own approval does not count (default)
//     expireAfter: 72h            # default 72h
//
// A Workload that is not admitted and crosses a policy gets an ApprovalRequest
// of its name in its namespace (spec: workload, requester — who created it —,
// policies, reasons, requiredApprovals, expiresAt, a hash of what was asked for),
// and waits for it outside the queue: it holds no quota and preempts nothing,
// unlike Kueue's AdmissionChecks, which reserve quota first. Its QuotaReserved
// condition says what it waits for and who may approve (whom RBAC lets update
// approvalrequests/approval in that namespace).
//
// People decide through the approval subresource (approval_handler.h): each
// decision is kept in the request's status (who, when, why) and in the audit
// log. Once approved (N distinct approvals), the workload queues as any other;
// when denied, or when the request expires, the workload is deactivated
// (spec.active false) with the reason. A workload whose spec changes after an
// approval (more GPUs, another class) asks again. A request whose workload is
// gone is deleted.
//
// Cost: policies are evaluated once per workload revision (and again when a
// policy, queue, flavor, class or namespace changes); with no policy, nothing.
//
// Not thread-safe: the scheduler loop's thread owns it.
#pragma once

#include <functional>
#include <set>
#include <string>
#include <unordered_map>
#include <vector>

#include "common/time.h"
#include "server/batched_writer.h"
#include "server/event_recorder.h"
#include "server/object_cache.h"
#include "server/controllers/controller.h"

namespace tessera {

inline constexpr const char* kApprovalPolicyKind = "tessera.dev/ApprovalPolicy";
inline constexpr const char* kApprovalRequestKind = "tessera.dev/ApprovalRequest";
inline constexpr Duration kDefaultApprovalExpiry = Duration::Seconds(72 * 3600);

class ApprovalController final : public Controller {
 public:
  std::string_view name() const override { return "approval-controller"; }
  void Reconcile(PassContext& pass) override { Reconcile(pass.cache, pass.now, pass.writer, pass.events); }
  // Who may approve in a namespace ("user bob", "group team-a-admins"), for messages.
  using Approvers = std::function<std::vector<std::string>(const std::string& ns)>;

  void SetApprovers(Approvers approvers) { approvers_ = std::move(approvers); }

  // Evaluates the workloads not yet admitted, makes, expires and reads their
  // requests, deactivates the denied and expired ones, writes what each waits
  // for. Afterwards Gated() names the workloads that wait for an approval.
  void Reconcile(const ObjectCache& cache, Timestamp now, BatchedWriter& writer, EventRecorder& events);

  // Whether the workload waits for an approval (the snapshot leaves it out).
  bool Gated(const StoredObject& workload) const { return gated_.count(&workload) > 0; }
  size_t gated() const { return gated_.size(); }
  // Why `workload` (not yet stored, say: a forecast's) would need an approval:
  // one line per threshold crossed, as its ApprovalRequest would list them; empty: none.
  std::vector<std::string> ApprovalReasons(const ObjectCache& cache, const StoredObject& workload) const {
    return Evaluate(cache, workload).reasons;
  }

 private:
  struct Verdict {
    int64_t revision = 0;
    uint64_t context = 0;
    std::vector<std::string> policies;  // crossed, by name
    std::vector<std::string> reasons;   // one per threshold crossed
    int32_t required = 1;
    bool allow_self = false;
    Duration expire_after = kDefaultApprovalExpiry;
    std::string hash;  // of what the workload asks for
  };
  Verdict Evaluate(const ObjectCache& cache, const StoredObject& w) const;

  Approvers approvers_;
  std::unordered_map<const StoredObject*, Verdict> verdicts_;
  uint64_t context_ = 0;
  std::set<const StoredObject*> gated_;
};

}  // namespace tessera
