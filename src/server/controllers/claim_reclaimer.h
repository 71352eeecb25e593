// Deletes what a PersistentVolumeClaim held once the claim is gone
// (reclaimPolicy Delete, as the default StorageClass of an NFS provisioner):
// the directories <volume-root>/<namespace>-<claim>-<uid> (claim_admission.h)
// whose uid no stored claim has. The server reaches the share at the same
// --volume-root as its agents (under `tessera up`, one machine, one path).
//
// It looks every 5 s and deletes a directory only when two looks in a row
// found it without a claim, so that a claim made a moment ago (not yet in the
// loop's cache when its first pod made the directory) keeps what it holds.
// Only names of that form are touched; anything else under the root stays. A
// directory that a pod not yet ended still mounts (by claim name) stays until
// the pod ends, as Kubernetes' pvc-protection finalizer keeps a claim in use.
#pragma once

#include <set>
#include <string>

#include "common/time.h"
#include "server/object_cache.h"
#include "server/controllers/controller.h"

namespace tessera {

class ClaimReclaimer final : public Controller {
 public:
  std::string_view name() const override { return "claim-reclaimer"; }
  void Reconcile(PassContext& pass) override { Reconcile(pass.cache, pass.now); }
  explicit ClaimReclaimer(std::string volume_root) : root_(std::move(volume_root)) {}
  // Returns how many directories it deleted.
  int Reconcile(const ObjectCache& cache, Timestamp now);

 private:
  std::string root_;
  Timestamp last_{};
  std::set<std::string> orphans_;  // directories the last look found without a claim
};

}  // namespace tessera
