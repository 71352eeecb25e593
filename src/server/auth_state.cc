#include "server/auth_state.h"

#include <fmt/format.h>
#include <pthread.h>
#include <spdlog/spdlog.h>

#include <chrono>

#include "server/object_cache.h"

namespace tessera {
namespace {

constexpr const char* kRoleKind = "rbac.authorization.k8s.io/Role";
constexpr const char* kClusterRoleKind = "rbac.authorization.k8s.io/ClusterRole";
constexpr const char* kRoleBindingKind = "rbac.authorization.k8s.io/RoleBinding";
constexpr const char* kClusterRoleBindingKind = "rbac.authorization.k8s.io/ClusterRoleBinding";
constexpr const char* kServiceAccountKind = "/ServiceAccount";
constexpr auto kFollowPeriod = std::chrono::milliseconds(100);
constexpr Duration kPodUidFresh = Duration::Seconds(5);

const std::vector<std::string>& FollowedKinds() {
  static const std::vector<std::string> kinds{kServiceAccountKind, kClusterRoleKind, kClusterRoleBindingKind, kRoleKind,
                                              kRoleBindingKind};
  return kinds;
}

std::string RevisionKey(const ObjectKey& key) { return fmt::format("{}/{}/{}", key.kind, key.ns, key.name); }

std::string UidOf(const nlohmann::json& object) {
  auto meta = object.find("metadata");
  if (meta == object.end() || !meta->is_object()) return "";
  auto uid = meta->find("uid");
  return uid != meta->end() && uid->is_string() ? uid->get<std::string>() : "";
}

}  // namespace

AuthState::AuthState(Store& store) : store_(store) {}

AuthState::~AuthState() { Stop(); }

bool AuthState::Follows(std::string_view store_kind) {
  for (const std::string& k : FollowedKinds()) {
    if (k == store_kind) return true;
  }
  return false;
}

Status AuthState::Start() {
  auto cache = std::make_unique<ObjectCache>(store_, FollowedKinds());
  for (const std::string& kind : FollowedKinds()) {
    cache->Observe(kind, [this, kind, c = cache.get()](const std::pair<std::string, std::string>& key,
                                                        const StoredObject* now) {
      ApplyAt(ObjectKey{kind, key.first, key.second}, now ? now->revision : c->revision(),
              now ? &now->object : nullptr);
    });
  }
  RETURN_IF_ERROR(cache->Sync().WithContext("reading the RBAC objects and ServiceAccounts"));
  follower_ = std::thread([this, cache = std::move(cache)]() mutable {
    pthread_setname_np(pthread_self(), "auth-follow");
    std::string last_error;
    while (true) {
      {
        std::unique_lock lock(mu_);
        cv_.wait_for(lock, kFollowPeriod, [this] { return kicked_ || stop_; });
        if (stop_) return;
        kicked_ = false;
      }
      Status s = cache->Sync();
      if (!s.ok() && s.message() != last_error) spdlog::warn("auth: following the store: {}", s.message());
      last_error = s.ok() ? "" : s.message();
    }
  });
  return Status::Ok();
}

void AuthState::Stop() {
  {
    std::lock_guard lock(mu_);
    stop_ = true;
  }
  cv_.notify_all();
  if (follower_.joinable()) follower_.join();
}

void AuthState::Kick() {
  {
    std::lock_guard lock(mu_);
    kicked_ = true;
  }
  cv_.notify_all();
}

void AuthState::Apply(const StoredObject& object) { ApplyAt(object.key, object.revision, &object.object); }

void AuthState::Remove(const ObjectKey& key, int64_t revision) { ApplyAt(key, revision, nullptr); }

void AuthState::ApplyAt(const ObjectKey& key, int64_t revision, const nlohmann::json* object) {
  std::lock_guard lock(mu_);
  int64_t& known = revisions_[RevisionKey(key)];
  if (revision <= known) return;
  known = revision;
  if (key.kind == kServiceAccountKind) {
    if (object) {
      service_accounts_[{key.ns, key.name}] = UidOf(*object);
    } else {
      service_accounts_.erase({key.ns, key.name});
    }
    return;
  }
  const bool role = key.kind == kRoleKind || key.kind == kClusterRoleKind;
  if (!object) {
    if (role) {
      rbac_.RemoveRole(key.ns, key.name);
    } else {
      rbac_.RemoveBinding(key.ns, key.name);
    }
    return;
  }
  // Stored objects passed validation; one that still does not convert grants nothing.
  if (role) {
    auto converted = RbacRoleFromJson(*object);
    if (converted) {
      rbac_.PutRole(std::move(*converted));
    } else {
      spdlog::warn("auth: {} {}/{} grants nothing: {}", key.kind, key.ns, key.name, converted.error().message());
      rbac_.RemoveRole(key.ns, key.name);
    }
  } else {
    auto converted = RbacBindingFromJson(*object);
    if (converted) {
      rbac_.PutBinding(std::move(*converted));
    } else {
      spdlog::warn("auth: {} {}/{} grants nothing: {}", key.kind, key.ns, key.name, converted.error().message());
      rbac_.RemoveBinding(key.ns, key.name);
    }
  }
}

bool AuthState::ServiceAccountExists(std::string_view ns, std::string_view name, std::string_view uid) {
  {
    std::lock_guard lock(mu_);
    auto it = service_accounts_.find({std::string(ns), std::string(name)});
    if (it != service_accounts_.end() && it->second == uid) return true;
  }
  // Not followed yet (created a moment ago), or changed: the store knows.
  auto got = store_.Get(ObjectKey{kServiceAccountKind, std::string(ns), std::string(name)});
  if (!got) return false;
  Apply(*got);
  return UidOf(got->object) == uid;
}

bool AuthState::PodExists(std::string_view ns, std::string_view name, std::string_view uid, Timestamp now) {
  std::pair<std::string, std::string> key{std::string(ns), std::string(name)};
  {
    std::lock_guard lock(mu_);
    auto it = pods_.find(key);
    if (it != pods_.end() && it->second.uid == uid && now - it->second.read < kPodUidFresh) return true;
  }
  auto got = store_.Get(ObjectKey{"/Pod", key.first, key.second});
  if (!got || UidOf(got->object) != uid) return false;
  std::lock_guard lock(mu_);
  if (pods_.size() > 100000) pods_.clear();  // a bound on memory; entries are cheap to read again
  pods_[std::move(key)] = PodEntry{.uid = std::string(uid), .read = now};
  return true;
}

void AuthState::ForgetPod(std::string_view ns, std::string_view name) {
  std::lock_guard lock(mu_);
  pods_.erase(std::pair<std::string, std::string>{std::string(ns), std::string(name)});
}

}  // namespace tessera
