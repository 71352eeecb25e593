// The node IPAM controller: every Node gets a range of pod addresses of its
// own, spec.podCIDR (and spec.podCIDRs, [the same], as Kubernetes sets both),
// as kube-controller-manager's nodeipam range allocator gives it: the cluster
// range (--cluster-cidr) is cut into ranges of --node-cidr-mask-size
// (domain/ipv4_cidr.h) and a Node without one gets the lowest range that no
// Node holds. Ranges Nodes already hold, also ones an admin set by hand and of
// any size, are taken; a deleted Node's range is free again for the next.
//
// Runs in the scheduler loop's pass. Idempotent: a Node that has its range
// costs a look. The write carries the Node's revision; one that conflicts
// (the agent wrote the Node meanwhile) is tried again next pass. When the
// range is used up the Node gets none and a Warning Event CIDRNotAvailable
// (written once per Node, and logged), until a range is freed.
//
// Thread-safety: owned by the thread running the loop's pass.
#pragma once

#include <set>
#include <string>

#include "common/time.h"
#include "domain/ipv4_cidr.h"
#include "server/batched_writer.h"
#include "server/event_recorder.h"
#include "server/object_cache.h"
#include "server/controllers/controller.h"

namespace tessera {

class NodeIpamController final : public Controller {
 public:
  std::string_view name() const override { return "node-ipam-controller"; }
  void Reconcile(PassContext& pass) override { Reconcile(pass.cache, pass.now, pass.writer, pass.events); }
  explicit NodeIpamController(NodeCidrSet ranges) : ranges_(ranges) {}

  // Adds the controller's writes (and events) to `writer`.
  void Reconcile(const ObjectCache& cache, Timestamp now, BatchedWriter& writer, EventRecorder& events);

 private:
  NodeCidrSet ranges_;
  std::set<std::string> warned_;  // uids of the Nodes told there is no range left, still waiting
};

}  // namespace tessera
