// AuthState: what authenticating and authorizing a request reads, kept in
// memory and current with the store: the RBAC index (Roles, ClusterRoles and
// their bindings) and the ServiceAccounts' uids, as kube-apiserver's RBAC
// authorizer and token authenticator read their informers.
//
// Two ways in, both idempotent by revision (an older write never replaces a
// newer one, a deletion is remembered so that a late event cannot bring the
// object back):
//   - the API handler applies its own successful writes before it answers, so
//     that a client who created a RoleBinding is authorized by it in its next
//     request (read-your-writes);
//   - a follower thread reads the store's event log (an ObjectCache of those
//     kinds) every 100 ms or when kicked, so that writes made elsewhere (the
//     server's own controllers, another replica) arrive too.
// A ServiceAccount or pod asked for but not held is read from the store (a
// ServiceAccount created a moment ago by a controller), and a pod's uid is
// remembered for a few seconds: pod-bound tokens check it on every use.
//
// Thread-safety: every method may be called from any thread.
#pragma once

#include <condition_variable>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <thread>

#include "auth/rbac.h"
#include "common/time.h"
#include "store/store.h"

namespace tessera {

class AuthState {
 public:
  explicit AuthState(Store& store);
  ~AuthState();
  AuthState(const AuthState&) = delete;
  AuthState& operator=(const AuthState&) = delete;

  // Lists what it follows (an error stops the server's start), then follows
  // the event log on its own thread until Stop.
  Status Start();
  void Stop();

  // Whether objects of this store kind ("rbac.authorization.k8s.io/Role") matter here.
  static bool Follows(std::string_view store_kind);
  // The API's own writes (call only for kinds Follows): an object as stored, or a deletion.
  void Apply(const StoredObject& object);
  void Remove(const ObjectKey& key, int64_t revision);
  // Wakes the follower (after a write it should see soon).
  void Kick();

  const RbacIndex& rbac() const { return rbac_; }
  // Whether ServiceAccount ns/name exists with metadata.uid `uid` (read from
  // the store when what is held says otherwise).
  bool ServiceAccountExists(std::string_view ns, std::string_view name, std::string_view uid);
  // Whether pod ns/name exists with metadata.uid `uid`: a pod seen with that
  // uid in the last few seconds does; otherwise the store is read.
  bool PodExists(std::string_view ns, std::string_view name, std::string_view uid, Timestamp now);
  // Pod ns/name was deleted through the API: its bound tokens stop at once
  // (a pod the server's own controllers delete is noticed within those seconds).
  void ForgetPod(std::string_view ns, std::string_view name);

 private:
  void Follow();
  // Applies `object` (nullptr: removed) at `revision` unless something newer was applied.
  void ApplyAt(const ObjectKey& key, int64_t revision, const nlohmann::json* object);

  Store& store_;
  RbacIndex rbac_;
  std::mutex mu_;
  std::map<std::string, int64_t> revisions_;                 // by "kind/ns/name"; deletions kept
  std::map<std::pair<std::string, std::string>, std::string> service_accounts_;  // (ns, name) -> uid
  struct PodEntry {
    std::string uid;
    Timestamp read;
  };
  std::map<std::pair<std::string, std::string>, PodEntry> pods_;  // pods seen to exist
  std::condition_variable cv_;
  bool kicked_ = false;
  bool stop_ = false;
  std::thread follower_;
};

}  // namespace tessera
