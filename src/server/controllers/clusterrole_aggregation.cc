#include "server/controllers/clusterrole_aggregation.h"

#include <fmt/format.h>

namespace tessera {

void ReconcileAggregatedRoles(const ObjectCache& cache, const AggregatedRules& rules, BatchedWriter& writer) {
  if (!rules) return;
  for (const auto& [key, role] : cache.Of(kClusterRoleKind)) {
    if (!role.object.contains("aggregationRule")) continue;
    const std::optional<std::vector<PolicyRule>> effective = rules(key.second);
    if (!effective) continue;  // the index has not seen it yet: next pass
    const nlohmann::json wanted = PolicyRulesToJson(*effective);
    if (role.object.value("rules", nlohmann::json::array()) == wanted) continue;
    nlohmann::json next = role.object;
    next["rules"] = wanted;
    writer.Add(WriteOp{.op = WriteOp::Kind::kUpdate, .key = role.key, .object = std::move(next),
                       .expected_revision = role.revision},
               fmt::format("aggregate the rules of ClusterRole {}", key.second));
  }
}

}  // namespace tessera
