// The EndpointSlice controller: for every Service with a selector, the
// discovery.k8s.io/v1 EndpointSlices of the pods it selects, as
// kube-controller-manager's endpointslice controller writes them, so that the
// nodes' agents (as kube-proxy does) balance a Service's cluster IP over them.
//
// What is written, for Service S in namespace NS:
//   - the pods of NS whose labels S's selector matches (every key equal) and
//     that have an IPv4 status.podIP; not those a restart policy has finished
//     (Never: Succeeded or Failed; OnFailure: Succeeded), as Kubernetes;
//   - each such pod one endpoint: addresses [podIP]; conditions ready (the
//     pod's Ready condition True and not terminating), serving (Ready True),
//     terminating (deletionTimestamp set) — with publishNotReadyAddresses all
//     three ready/serving true; nodeName; hostname when spec.hostname is set
//     and spec.subdomain is S; targetRef {kind Pod, namespace, name, uid};
//   - ports: each of S's ports {name, protocol, port = the target port on the
//     pod, appProtocol}; a named targetPort is resolved per pod from its
//     containers' ports (and sidecars'), by name and protocol. A pod that
//     lacks a named port has that port left out of its set, as Kubernetes
//     does: endpoints are grouped by their set of ports, one slice per set (a
//     pod that resolves none of S's ports is left out altogether);
//   - at most kMaxEndpointsPerSlice endpoints a slice, in pod name order;
//   - each slice named S + "-" + 5 characters derived from S's uid and the
//     slice's place among S's slices (port sets in order, then chunks), so
//     that a change of ports rewrites a slice instead of replacing it;
//     labelled
//     kubernetes.io/service-name=S and endpointslice.kubernetes.io/managed-by=
//     endpointslice-controller.tessera.dev, owned by S (ownerReferences,
//     controller), addressType IPv4.
// A Service whose pods give no endpoint has no slice (Kubernetes keeps an
// empty placeholder; a consumer reads no slice as no endpoints). Slices of a
// Service that is gone, or lost its selector, are deleted; slices without the
// managed-by label (written by someone else) are never touched.
//
// Cost: only namespaces where a Pod, Service or EndpointSlice changed since
// the last pass are looked at (the cache's observers say which); a slice is
// rewritten only when what it says changed. A namespace whose pass wrote is
// looked at again next pass (which finds nothing to do, or retries a write
// that met a conflict).
//
// Thread-safety: owned by the thread running the loop's pass.
#pragma once

#include <cstddef>
#include <set>
#include <span>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "api/service.h"
#include "server/batched_writer.h"
#include "server/object_cache.h"
#include "server/controllers/controller.h"

namespace tessera {

inline constexpr const char* kServiceNameLabel = "kubernetes.io/service-name";
inline constexpr const char* kManagedByLabel = "endpointslice.kubernetes.io/managed-by";
inline constexpr const char* kEndpointSliceManager = "endpointslice-controller.tessera.dev";
inline constexpr size_t kMaxEndpointsPerSlice = 100;  // kube-controller-manager's --max-endpoints-per-slice

// The slices `service` should have, given the pods of its namespace (name
// order); each a whole EndpointSlice object without creationTimestamp.
std::vector<nlohmann::json> DesiredEndpointSlices(const ServiceView& service,
                                                  std::span<const nlohmann::json* const> pods);

class EndpointSliceController final : public Controller {
 public:
  std::string_view name() const override { return "endpointslice-controller"; }
  void Reconcile(PassContext& pass) override { Reconcile(pass.cache, pass.now_text, pass.writer); }
  // Observes `cache`'s Pods, Services and EndpointSlices (it must hold them).
  explicit EndpointSliceController(ObjectCache& cache);

  // Adds the writes that bring the changed namespaces' slices up to date.
  void Reconcile(const ObjectCache& cache, const std::string& now, BatchedWriter& writer);

 private:
  // Returns whether it added a write.
  bool ReconcileNamespace(const ObjectCache& cache, const std::string& ns, const std::string& now,
                          BatchedWriter& writer);

  std::set<std::string> dirty_;  // namespaces changed since they were last looked at
};

}  // namespace tessera
