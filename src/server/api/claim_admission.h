// PersistentVolumeClaims at the API server: bound when created, counted
// against the namespace's ResourceQuotas.
//
// Who provisions: a claim is a directory <volume-root>/<namespace>-<claim>-<uid>
// on a filesystem every node mounts at its --volume-root (NFS, as Kubernetes'
// nfs-subdir-external-provisioner makes them). There is nothing to allocate,
// so the server binds the claim at once (status.phase Bound, spec.volumeName
// pvc-<uid>, status.capacity its request: WaitForFirstConsumer buys nothing
// when every node reaches the same share); the agent of the first pod that
// mounts it makes the directory (and owns it to the pod's uid); the server's
// ClaimReclaimer (claim_reclaimer.h) deletes the directory once the claim is
// gone (reclaimPolicy Delete, the default StorageClass's).
//
// Quota, as kube-apiserver's ResourceQuota admission: a create that would take
// the namespace past `persistentvolumeclaims` (a count) or `requests.storage`
// (bytes) in any of its quotas is refused, 403, in Kubernetes' words
// (`exceeded quota: NAME, requested: requests.storage=10Gi, used:
// requests.storage=95Gi, limited: requests.storage=100Gi`) and nothing is
// stored. Creates in flight are counted too (a reservation held until the
// store answers), so two at once cannot both take the last room.
//
// Thread-safety: Admit and Release may be called from any thread.
#pragma once

#include <map>
#include <mutex>
#include <string>

#include <nlohmann/json.hpp>

#include "common/result.h"
#include "common/uuid.h"
#include "store/store.h"

namespace tessera {

class ClaimAdmission {
 public:
  // Checks `claim` (a valid PersistentVolumeClaim being created) against its
  // namespace's quotas and binds it (metadata.uid, spec.volumeName, status).
  // On success the claim's bytes are reserved until Release(ns, bytes).
  // PermissionDenied with the quota's message; InvalidArgument for a
  // spec.volumeName (there are no PersistentVolumes to name).
  Result<int64_t> Admit(Store& store, nlohmann::json& claim);
  void Release(const std::string& ns, int64_t bytes);

 private:
  std::mutex mu_;
  std::map<std::string, std::pair<int64_t, int64_t>> pending_;  // namespace -> (claims, bytes) in flight
  UuidGenerator uuids_;
};

// A claim's requested bytes (spec.resources.requests.storage); 0 when absent or not a quantity.
int64_t ClaimBytes(const nlohmann::json& claim);

}  // namespace tessera
