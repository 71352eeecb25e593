#include "server/api/claim_admission.h"

#include <fmt/format.h>

#include <vector>

#include "domain/quantity.h"
#include "server/object_json.h"

namespace tessera {

using nlohmann::json;

int64_t ClaimBytes(const json& claim) {
  const std::string text(StringAt(claim, {"spec", "resources", "requests", "storage"}));
  auto bytes = text.empty() ? Result<int64_t>(0) : ParseUnits(text);
  return bytes ? *bytes : 0;
}

Result<int64_t> ClaimAdmission::Admit(Store& store, json& claim) {
  const std::string ns(StringAt(claim, {"metadata", "namespace"}));
  if (!StringAt(claim, {"spec", "volumeName"}).empty()) {
    return Err(Status::InvalidArgument(
        "spec.volumeName: Forbidden: Tessera has no PersistentVolumes to name; leave it empty and the claim gets a "
        "directory of its own on the nodes' volume root"));
  }
  const int64_t bytes = ClaimBytes(claim);
  ASSIGN_OR_RETURN(auto quotas, store.List("/ResourceQuota", ns));
  ASSIGN_OR_RETURN(auto claims, store.List("/PersistentVolumeClaim", ns));
  std::lock_guard lock(mu_);
  auto& pending = pending_[ns];
  int64_t used_count = static_cast<int64_t>(claims.items.size()) + pending.first;
  int64_t used_bytes = pending.second;
  for (const auto& c : claims.items) used_bytes += ClaimBytes(c.object);
  for (const auto& q : quotas.items) {
    const json& hard = ObjectAt(q.object, {"spec", "hard"});
    std::vector<std::string> requested, used, limited;
    if (auto it = hard.find("persistentvolumeclaims"); it != hard.end()) {
      auto limit = ParseUnits(it->is_string() ? it->get<std::string>() : it->dump());
      if (limit && used_count + 1 > *limit) {
        requested.push_back("persistentvolumeclaims=1");
        used.push_back(fmt::format("persistentvolumeclaims={}", used_count));
        limited.push_back(fmt::format("persistentvolumeclaims={}", *limit));
      }
    }
    if (auto it = hard.find("requests.storage"); it != hard.end()) {
      auto limit = ParseUnits(it->is_string() ? it->get<std::string>() : it->dump());
      if (limit && used_bytes + bytes > *limit) {
        requested.push_back("requests.storage=" + FormatBytes(bytes));
        used.push_back("requests.storage=" + FormatBytes(used_bytes));
        limited.push_back("requests.storage=" + FormatBytes(*limit));
      }
    }
    if (requested.empty()) continue;
    const auto join = [](const std::vector<std::string>& parts) {
      std::string out;
      for (const std::string& p : parts) out += (out.empty() ? "" : ",") + p;
      return out;
    };
    return Err(Status::PermissionDenied(fmt::format("exceeded quota: {}, requested: {}, used: {}, limited: {}",
                                                    q.key.name, join(requested), join(used), join(limited))));
  }
  ++pending.first;
  pending.second += bytes;
  // Bound at once to a directory of its own (see the header).
  const std::string uid = uuids_.Next();
  claim["metadata"]["uid"] = uid;
  claim["metadata"]["annotations"]["volume.kubernetes.io/storage-provisioner"] = "tessera.dev/volume-root";
  claim["metadata"]["annotations"]["pv.kubernetes.io/bind-completed"] = "yes";
  claim["spec"]["volumeName"] = "pvc-" + uid;
  if (!claim["spec"].contains("volumeMode")) claim["spec"]["volumeMode"] = "Filesystem";
  claim["status"] = {{"phase", "Bound"},
                     {"accessModes", claim["spec"].value("accessModes", json::array())},
                     {"capacity", {{"storage", FormatBytes(bytes)}}}};
  return bytes;
}

void ClaimAdmission::Release(const std::string& ns, int64_t bytes) {
  std::lock_guard lock(mu_);
  auto it = pending_.find(ns);
  if (it == pending_.end()) return;
  --it->second.first;
  it->second.second -= bytes;
  if (it->second.first <= 0) pending_.erase(it);
}

}  // namespace tessera
