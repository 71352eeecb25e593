// The ClusterRole aggregation controller, as kube-controller-manager's: a
// ClusterRole with an aggregationRule gets, as its `rules`, the union of the
// rules of the ClusterRoles its selectors match, so that `tessera get
// clusterrole admin -o yaml` shows what it grants. Authorization does not wait
// for this write: the RBAC index aggregates by itself (auth/rbac.h); this makes
// the stored object say the same.
//
// Not thread-safe: the scheduler loop's thread calls it.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "auth/rbac.h"
#include "server/batched_writer.h"
#include "server/object_cache.h"
#include "server/controllers/controller.h"

namespace tessera {

inline constexpr const char* kClusterRoleKind = "rbac.authorization.k8s.io/ClusterRole";

// The effective rules of a ClusterRole (RbacIndex::RoleRules); nullopt when unknown.
using AggregatedRules = std::function<std::optional<std::vector<PolicyRule>>(const std::string& cluster_role)>;

// Writes `rules` of every aggregating ClusterRole whose stored rules differ from its aggregation.
void ReconcileAggregatedRoles(const ObjectCache& cache, const AggregatedRules& rules, BatchedWriter& writer);

// The aggregated ClusterRoles' rules, from the RBAC index's aggregation.
class ClusterRoleAggregationController final : public Controller {
 public:
  explicit ClusterRoleAggregationController(AggregatedRules rules) : rules_(std::move(rules)) {}
  std::string_view name() const override { return "clusterrole-aggregation-controller"; }
  void Reconcile(PassContext& pass) override {
    if (rules_) ReconcileAggregatedRoles(pass.cache, rules_, pass.writer);
  }

 private:
  AggregatedRules rules_;
};

}  // namespace tessera
