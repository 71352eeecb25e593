#include "server/api/user_rate_limiter.h"

namespace tessera {
namespace {

constexpr size_t kPruneAbove = 10000;
constexpr Duration kIdle = Duration::Seconds(60);

}  // namespace

bool UserRateLimiter::Admit(const UserInfo& user, Timestamp now) {
  if (limit_.per_second <= 0 || user.InGroup(kGroupMasters) || user.InGroup(kGroupNodes)) return true;
  std::lock_guard lock(mu_);
  if (buckets_.size() > kPruneAbove) {
    std::erase_if(buckets_, [&](const auto& entry) { return now - entry.second.last_used > kIdle; });
  }
  auto it = buckets_.find(user.name);
  if (it == buckets_.end()) {
    it = buckets_.emplace(user.name, Bucket{TokenBucket(limit_.per_second, limit_.burst), now}).first;
  }
  it->second.last_used = now;
  return it->second.tokens.TryTake(now);
}

}  // namespace tessera
