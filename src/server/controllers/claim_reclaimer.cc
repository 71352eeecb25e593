#include "server/controllers/claim_reclaimer.h"

#include <nlohmann/json.hpp>
#include <spdlog/spdlog.h>
#include <sys/stat.h>

#include <filesystem>
#include <set>

namespace tessera {
namespace {

namespace fs = std::filesystem;

// The uid at the end of "<namespace>-<claim>-<uid>", or "" when the name is not one.
std::string ClaimUid(const std::string& name) {
  constexpr size_t kUuid = 36;  // 8-4-4-4-12
  if (name.size() < kUuid + 4 || name[name.size() - kUuid - 1] != '-') return "";
  const std::string uid = name.substr(name.size() - kUuid);
  for (size_t i = 0; i < uid.size(); ++i) {
    const bool dash = i == 8 || i == 13 || i == 18 || i == 23;
    if (dash ? uid[i] != '-' : !std::isxdigit(static_cast<unsigned char>(uid[i]))) return "";
  }
  return uid;
}

}  // namespace

int ClaimReclaimer::Reconcile(const ObjectCache& cache, Timestamp now) {
  if (root_.empty() || now - last_ < Duration::Seconds(5)) return 0;
  last_ = now;
  std::set<std::string> uids;
  for (const auto& [key, claim] : cache.Of("/PersistentVolumeClaim")) {
    const auto meta = claim.object.find("metadata");
    if (meta != claim.object.end() && meta->is_object()) uids.insert(meta->value("uid", ""));
  }
  // Names "<namespace>-<claim>-" that a pod still running (or waiting) mounts:
  // its data stays until the pod ends, as Kubernetes' pvc-protection keeps it.
  std::set<std::string> in_use;
  for (const auto& [key, pod] : cache.Of("/Pod")) {
    const auto status = pod.object.find("status");
    const std::string phase = status != pod.object.end() && status->is_object() ? status->value("phase", "") : "";
    if (phase == "Succeeded" || phase == "Failed") continue;
    const auto spec = pod.object.find("spec");
    if (spec == pod.object.end() || !spec->is_object()) continue;
    for (const auto& v : spec->value("volumes", nlohmann::json::array())) {
      const auto claim = v.is_object() ? v.find("persistentVolumeClaim") : v.end();
      if (v.is_object() && claim != v.end() && claim->is_object()) {
        in_use.insert(pod.key.ns + "-" + claim->value("claimName", "") + "-");
      }
    }
  }
  int deleted = 0;
  std::set<std::string> orphans;
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(root_, ec)) {
    const std::string name = entry.path().filename().string();
    const std::string uid = ClaimUid(name);
    if (uid.empty() || uids.count(uid) || !entry.is_directory(ec)) continue;
    if (in_use.count(name.substr(0, name.size() - uid.size()))) continue;
    struct stat st {};
    if (::lstat(entry.path().c_str(), &st) != 0 || S_ISLNK(st.st_mode)) continue;
    orphans.insert(name);
    if (!orphans_.count(name)) continue;  // first seen without its claim: the next look decides
    std::error_code removed;
    fs::remove_all(entry.path(), removed);
    if (removed) {
      spdlog::warn("claim reclaimer: cannot delete {}: {}", entry.path().string(), removed.message());
    } else {
      spdlog::info("claim reclaimer: deleted {} (its claim is gone)", entry.path().string());
      ++deleted;
    }
  }
  orphans_ = std::move(orphans);
  return deleted;
}

}  // namespace tessera
