// v1 Service (ClusterIP only) as the server completes and reads it.
//
//   - DefaultService fills in what kube-apiserver defaults before it stores a
//     Service: type ClusterIP, sessionAffinity None, internalTrafficPolicy
//     Cluster, ipFamilies [IPv4] and ipFamilyPolicy SingleStack, each port's
//     protocol (TCP) and targetPort (the port, when absent, 0 or ""), and
//     clusterIP and clusterIPs from each other. The address itself is the
//     server's to allocate (server/service_ip_allocator.h).
//   - KeepAllocatedServiceFields, on an update: what the server set at create
//     (clusterIP, clusterIPs, ipFamilies, ipFamilyPolicy) and the update leaves
//     out is kept, as kube-apiserver keeps it, so that a manifest applied again
//     needs no address; a different address is refused by ValidateUpdate
//     ("field is immutable"). A changed clusterIP beside the stored
//     clusterIPs changes both (kube-apiserver's normalizeClusterIPs), so the
//     refusal names the address asked for. Call before ValidateObject.
//   - ServiceViewFromJson: the typed view controllers read.
//
// REQUIRES (all three): the object passed ValidateObject for /Service. The
// view still checks each type it reads (an error names the field, never an
// exception).
//
// Thread-safety: pure functions.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "common/result.h"

namespace tessera {

inline constexpr std::string_view kServiceKind = "/Service";
inline constexpr std::string_view kEndpointSliceKind = "discovery.k8s.io/EndpointSlice";
// spec.clusterIP of a headless Service: no virtual address.
inline constexpr std::string_view kHeadlessClusterIp = "None";
// On a Service: "true" sends the server's proxy (services/NAME/proxy, see
// server/api/proxy.h) the whole path asked for, not only what follows /proxy.
inline constexpr const char* kProxyKeepPathAnnotation = "tessera.dev/proxy-keep-path";
// On a Service: a Secret of its namespace whose data.token the server's proxy
// sends the backend as `Authorization: token <token>` in place of the caller's
// credentials (a notebook's Jupyter: its own token, which only the proxy and
// the node's agent know, so that the pod network alone does not reach it).
inline constexpr const char* kProxyTokenSecretAnnotation = "tessera.dev/proxy-token-secret";

void DefaultService(nlohmann::json& service);
void KeepAllocatedServiceFields(nlohmann::json& next, const nlohmann::json& stored);

struct ServicePortSpec {
  std::string name;            // "" only for a Service's one port
  std::string protocol = "TCP";  // TCP, UDP or SCTP
  int32_t port = 0;            // on the cluster IP
  int32_t target_number = 0;   // on each endpoint, when target_name is ""
  std::string target_name;     // a container port's name, resolved per pod
  std::string app_protocol;    // "" when not given
};

struct ServiceView {
  std::string ns;
  std::string name;
  std::string uid;
  std::string cluster_ip;                       // "" (not allocated), "None" or an IPv4 address
  std::map<std::string, std::string> selector;  // empty: no selector (no EndpointSlices made for it)
  std::vector<ServicePortSpec> ports;
  bool publish_not_ready_addresses = false;     // every endpoint ready, as Kubernetes reads it
};

Result<ServiceView> ServiceViewFromJson(const nlohmann::json& service);

}  // namespace tessera
