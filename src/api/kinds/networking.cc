// networking.k8s.io/v1: NetworkPolicy (enforced by the agents, net/).
#include "api/kinds/groups.h"

#include "api/common_schemas.h"
#include "api/schema.h"

namespace tessera {
namespace {

using nlohmann::json;
using namespace schema;  // NOLINT(google-build-using-namespace): schemas read as tables

SchemaRef NetworkPolicySchema() {
  SchemaRef peer = Obj({
      Opt("podSelector", LabelSelector()),
      Opt("namespaceSelector", LabelSelector()),
      Opt("ipBlock", Obj({Req("cidr", Str()), Opt("except", Arr(Str()))})),
  });
  SchemaRef port = Obj({
      Opt("protocol", Enum({"TCP", "UDP", "SCTP"})),
      Opt("port", IntOrStr()),
      Opt("endPort", Int(1, 65535)),
  });
  return Root({Opt("spec", Obj({
                               Opt("podSelector", LabelSelector()),
                               Opt("policyTypes", Arr(Enum({"Ingress", "Egress"}))),
                               Opt("ingress", Arr(Obj({Opt("from", Arr(peer)), Opt("ports", Arr(port))}))),
                               Opt("egress", Arr(Obj({Opt("to", Arr(peer)), Opt("ports", Arr(port))}))),
                           }))});
}

}  // namespace

std::vector<KindDefinition> NetworkingKinds() {
  return {
      {.info = {.group = "networking.k8s.io", .version = "v1", .kind = "NetworkPolicy",
                .api_version = "networking.k8s.io/v1", .plural = "networkpolicies", .singular = "networkpolicy",
                .short_names = {"netpol"}, .namespaced = true, .store_key = "networking.k8s.io/NetworkPolicy"},
       .schema = NetworkPolicySchema(),
       .columns = DefaultColumns(),
       .roles = RoleGrants{.grants = {ViewReads(), EditWrites()}}},
  };
}

}  // namespace tessera
