// discovery.k8s.io/v1: EndpointSlice, the endpoints of Services, written by the
// server's controller.
#include "api/kinds/groups.h"

#include <fmt/format.h>

#include "api/common_schemas.h"
#include "api/schema.h"

namespace tessera {
namespace {

using nlohmann::json;
using namespace schema;  // NOLINT(google-build-using-namespace): schemas read as tables

SchemaRef EndpointSliceSchema() {
  SchemaRef endpoint = Obj({
      Req("addresses", Arr(Str(), /*non_empty=*/true)),
      Opt("conditions", Obj({Opt("ready", Bool()), Opt("serving", Bool()), Opt("terminating", Bool())})),
      Opt("hostname", Str(StringRule::kDns1123Label)),
      Opt("targetRef", ObjectReference()),
      Opt("nodeName", Str()),
      Opt("zone", Str()),
      Opt("hints", OpenObj()),
      Opt("deprecatedTopology", MapOf(Str())),
  });
  SchemaRef port = Obj({
      Opt("name", Str()),
      Opt("protocol", Enum({"TCP", "UDP", "SCTP"})),
      Opt("port", Int(0, 65535)),
      Opt("appProtocol", Str()),
  });
  return Root({Req("addressType", Enum({"IPv4", "IPv6", "FQDN"})), Opt("endpoints", Arr(endpoint)),
               Opt("ports", Arr(port))});
}

// A slice's address type is fixed, as in Kubernetes.
Status KeepAddressType(const KindInfo&, const json& stored, const json& next) {
  if (stored.value("addressType", json()) != next.value("addressType", json())) {
    return Status::InvalidArgument(
        fmt::format("addressType: Invalid value: {}: field is immutable", Dump(next.value("addressType", json()))));
  }
  return Status::Ok();
}

}  // namespace

std::vector<KindDefinition> DiscoveryKinds() {
  return {
      {.info = {.group = "discovery.k8s.io", .version = "v1", .kind = "EndpointSlice",
                .api_version = "discovery.k8s.io/v1", .plural = "endpointslices", .singular = "endpointslice",
                .namespaced = true, .store_key = "discovery.k8s.io/EndpointSlice"},
       .schema = EndpointSliceSchema(),
       .update_rules = {KeepAddressType},
       .controller = "endpointslice-controller"},
  };
}

}  // namespace tessera
