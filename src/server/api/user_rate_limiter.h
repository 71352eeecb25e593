// UserRateLimiter: fair request rates, one token bucket per identity (DESIGN.md
// section 12), so that one user's runaway script cannot starve the others'
// requests. A request beyond its user's bucket is answered 429 TooManyRequests
// with Retry-After, as kube-apiserver answers a client it sheds.
//
// The bootstrap admin (system:masters) and nodes' agents (system:nodes) are
// exempt, as kube-apiserver's priority and fairness exempts system:masters and
// gives the nodes their own level: an agent reports the status of every pod it
// runs, and must not be slowed by a team's burst.
//
// Memory: a bucket per user seen; buckets full and idle for a minute are
// dropped when there are many.
//
// Thread-safety: Admit may be called from any thread.
#pragma once

#include <cstdint>
#include <mutex>
#include <string>
#include <unordered_map>

#include "auth/user_info.h"
#include "common/time.h"
#include "common/token_bucket.h"

namespace tessera {

struct UserRateLimit {
  int64_t per_second = 200;  // --per-user-qps; 0: no limit
  int64_t burst = 400;       // --per-user-burst
};

class UserRateLimiter {
 public:
  explicit UserRateLimiter(UserRateLimit limit) : limit_(limit) {}
  // True when the request may go on; it takes a token from the user's bucket.
  bool Admit(const UserInfo& user, Timestamp now);
  const UserRateLimit& limit() const { return limit_; }

 private:
  struct Bucket {
    TokenBucket tokens;
    Timestamp last_used;
  };
  UserRateLimit limit_;
  std::mutex mu_;
  std::unordered_map<std::string, Bucket> buckets_;
};

}  // namespace tessera
