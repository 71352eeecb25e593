// discovery.k8s.io/v1: EndpointSlice, the endpoints of Services, written by the
// server's controller.
#include "api/kinds/groups.h"

#include <fmt/format.h>

#include <string>
#include <vector>

#include "api/common_schemas.h"
#include "api/object_fields.h"
#include "api/printer_columns.h"
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

// The first three of `items`, then " + N more...", as kubectl lists them; "<unset>" when none.
std::string FirstThree(const std::vector<std::string>& items) {
  if (items.empty()) return "<unset>";
  std::string out;
  for (size_t i = 0; i < items.size() && i < 3; ++i) out += (i == 0 ? "" : ",") + items[i];
  if (items.size() > 3) out += fmt::format(" + {} more...", items.size() - 3);
  return out;
}

std::string SlicePorts(const json& o, const ColumnOptions&) {
  std::vector<std::string> ports;
  if (const json* list = Find(o, "ports"); list && list->is_array()) {
    for (const json& p : *list) {
      const json* port = Child(&p, "port");
      ports.push_back(port ? Text(port) : TextAt(p, "name", "*"));
    }
  }
  return FirstThree(ports);
}

std::string SliceEndpoints(const json& o, const ColumnOptions&) {
  std::vector<std::string> addresses;
  if (const json* list = Find(o, "endpoints"); list && list->is_array()) {
    for (const json& e : *list) {
      const json* a = Child(&e, "addresses");
      if (!a || !a->is_array()) continue;
      for (const json& address : *a) addresses.push_back(Text(&address));
    }
  }
  return FirstThree(addresses);
}

}  // namespace

std::vector<KindDefinition> DiscoveryKinds() {
  return {
      {.info = {.group = "discovery.k8s.io", .version = "v1", .kind = "EndpointSlice",
                .api_version = "discovery.k8s.io/v1", .plural = "endpointslices", .singular = "endpointslice",
                .namespaced = true, .store_key = "discovery.k8s.io/EndpointSlice"},
       .schema = EndpointSliceSchema(),
       .update_rules = {KeepAddressType},
       .columns = {NameColumn(),
                   FieldColumn("ADDRESSTYPE", "addressType"),
                   {.name = "PORTS", .description = "the first three ports", .cell = SlicePorts},
                   {.name = "ENDPOINTS",
                    .description = "the first three endpoint addresses",
                    .cell = SliceEndpoints},
                   AgeColumn()},
       // Written only by the server's controller.
       .roles = RoleGrants{.grants = {ViewReads()}},
       .controller = "endpointslice-controller"},
  };
}

}  // namespace tessera
