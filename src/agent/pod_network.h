// The pod network of one node (DESIGN.md section 6; docs/agent.md "Pod
// network"): every pod gets a network namespace of its own and an IP from its
// node's spec.podCIDR, on a per-node Linux bridge, through a veth pair; pods
// on other nodes are reached through routes to their nodes' pod CIDRs (the
// host-gw model: no overlay, no encapsulation), as flannel's host-gw backend
// and the CNI bridge + host-local plugins do it.
//
//   node netns:  bridge tsr0 (gateway: the first address of podCIDR)
//                 |-- veth tsr<hash> <----> pod netns: eth0 (podIP/prefix), lo,
//                 |                                    default via gateway
//                 route 10.244.N.0/24 via <node N's address>, for each other node
//
// A pod's namespace is a file (a bind mount of /proc/thread-self/ns/net, as
// `ip netns add` makes one) under netns_dir, named by the pod's id, so that it
// outlives the agent: a restarted agent attaches nothing twice and adopts the
// pods still running (Adopt). Processes enter it with setns(2) before exec
// (ProcessSpec::netns_path); containers name it in their OCI config
// (linux.namespaces type network, path).
//
// All links, addresses and routes are made over netlink with libnl-route-3,
// in the agent's own network namespace (the node's) and, from a short-lived
// thread that enters it, in the pod's: no `ip` process per pod.
//
// Addresses: the gateway takes the range's first address; pods take the
// others but the broadcast address, round robin from the last one given (so
// an address freed is not handed out again at once, as host-local does).
//
// Thread-safety: one loop owns a PodNetwork; its calls are not thread-safe.
// Requires root (CAP_NET_ADMIN and CAP_SYS_ADMIN, for the bind mounts).
#pragma once

#include <cstdint>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "common/result.h"
#include "domain/ipv4_cidr.h"

namespace tessera {

struct PodNetworkOptions {
  Ipv4Cidr pod_cidr;              // the Node's spec.podCIDR
  std::string bridge = "tsr0";    // made when missing
  std::string netns_dir;          // pods' namespace files (made when missing)
  uint32_t mtu = 1500;
};

// What a pod was given.
struct PodAttachment {
  std::string netns_path;  // <netns_dir>/<id>
  uint32_t ip = 0;         // host order
  std::string host_veth;   // the bridge port on the node's side
};

// A route of the host-gw model: another node's pod range through its address.
struct PodRoute {
  Ipv4Cidr destination;
  uint32_t gateway = 0;
  friend auto operator<=>(const PodRoute&, const PodRoute&) = default;
};

class PodNetwork {
 public:
  // Makes the bridge (when missing) with the gateway address, brings it up,
  // and turns on IPv4 forwarding in the node's namespace. Unavailable, saying
  // what the host refused, when it cannot.
  static Result<std::unique_ptr<PodNetwork>> Open(PodNetworkOptions options);
  ~PodNetwork();

  // Gives the pod `id` (letters, digits, '-', '_' and '.') its namespace, an
  // address and a port on the bridge. Idempotent for a pod already attached
  // (a restarted agent's Adopt, a container's restart): the same attachment.
  Result<PodAttachment> Attach(const std::string& id);
  // Records an attachment a previous agent made, so that its address is not
  // handed out again; false when its namespace file is gone.
  bool Adopt(const std::string& id, const PodAttachment& attachment);
  // Removes the pod's veth and namespace and frees its address. No error
  // when there is nothing to remove.
  Status Detach(const std::string& id);
  // For a pod that ended while no PodNetwork was open (a restarted agent
  // before the Node's podCIDR was read): removes its namespace file; the
  // namespace, and the veth pair with it, go once nothing holds them.
  static void RemoveNamespace(const PodAttachment& attachment);

  // Removes what pods no agent holds left on this node's bridge (an agent
  // killed with its data directory deleted, a test's `tessera up`): each
  // namespace file not attached or adopted whose veth is a port of the bridge
  // and whose address is in this node's range (another node on the same
  // bridge keeps its own), so that its address is not answered twice. Call after the
  // Adopt calls; returns how many were removed.
  int RemoveStale();

  // Makes the node's routes to the other nodes' pod ranges exactly `routes`:
  // adds the missing, replaces changed gateways, removes the ones no longer
  // wanted (only routes this class made: protocol tessera). Routes into this
  // node's own range are refused.
  Status SyncRoutes(const std::vector<PodRoute>& routes);

  uint32_t gateway() const;
  const Ipv4Cidr& pod_cidr() const;
  const std::string& bridge() const;
  // The pods' namespace file for `id` (whether or not it exists).
  std::string NetnsPath(const std::string& id) const;
  // The addresses given to pods now (host order).
  std::set<uint32_t> allocated() const;

 private:
  struct Impl;
  explicit PodNetwork(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

// The host-side veth name for a pod id: "tsr" and 11 hex digits of a hash
// (interface names are at most 15 bytes).
std::string HostVethName(const std::string& id);

}  // namespace tessera
