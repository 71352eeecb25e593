// coordination.k8s.io/v1: Lease, node heartbeats as kubelets renew theirs, and the
// controller's leadership.
#include "api/kinds/groups.h"

#include "api/common_schemas.h"
#include "api/schema.h"

namespace tessera {
namespace {

using nlohmann::json;
using namespace schema;  // NOLINT(google-build-using-namespace): schemas read as tables

SchemaRef LeaseSchema() {
  return Root({Opt("spec", Obj({
                               Opt("holderIdentity", Str()),
                               Opt("leaseDurationSeconds", Int(1)),
                               Opt("acquireTime", Str()),
                               Opt("renewTime", Str()),
                               Opt("leaseTransitions", Int(0)),
                               Opt("preferredHolder", Str()),
                               Opt("strategy", Str()),
                           }))});
}

}  // namespace

std::vector<KindDefinition> CoordinationKinds() {
  return {
      {.info = {.group = "coordination.k8s.io", .version = "v1", .kind = "Lease",
                .api_version = "coordination.k8s.io/v1", .plural = "leases", .singular = "lease", .namespaced = true,
                .store_key = "coordination.k8s.io/Lease"},
       .schema = LeaseSchema(),
       .columns = DefaultColumns(),
       // No default role grants it: the nodes' heartbeats and the controller's leadership.
       .roles = NoDefaultRoles(),
       .controller = "node-lifecycle"},
  };
}

}  // namespace tessera
