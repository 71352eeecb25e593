// Authenticator: who a bearer token names, trying kube-apiserver's token
// authenticators in turn (DESIGN.md section 12):
//   1. the bootstrap admin token (<data-dir>/admin.token): user "admin" in
//      system:masters;
//   2. the --token-auth-file's users;
//   3. a JWT issued by this server (TokenIssuer): a ServiceAccount, valid while
//      that ServiceAccount (same uid) exists and, for a token bound to a pod,
//      while that pod (same uid) exists; or a node's credential;
//   4. a JWT from the --oidc-issuer-url issuer.
// A JWT is routed to 3 or 4 by its (unverified) "iss"; any other issuer is
// refused. Every refusal is Unauthenticated with the reason, for the 401's
// Status: "no bearer token ...", "the bearer token is not valid for this server",
// "malformed token: ...", "token expired at ...", "token audience ... is not
// accepted here", "token signed by an unknown key ...", "the token's service
// account team-a/ci no longer exists". No message holds the token.
//
// Cost: a verified JWT is remembered (by its text) until it expires or for a
// minute, whichever is first, so that a client's stream of requests costs one
// signature check, not one per request; the ServiceAccount and pod checks run
// on every use (they are lookups in the caller's caches).
//
// Thread-safety: Authenticate may be called from any thread.
#pragma once

#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>

#include "auth/oidc.h"
#include "auth/service_account_tokens.h"
#include "auth/token_file.h"
#include "auth/user_info.h"
#include "common/result.h"
#include "common/time.h"

namespace tessera {

inline constexpr std::string_view kAdminUser = "admin";

class Authenticator {
 public:
  // What the server knows now: whether the ServiceAccount (pod) ns/name
  // exists with metadata.uid `uid`.
  struct Lookups {
    std::function<bool(std::string_view ns, std::string_view name, std::string_view uid)> service_account_exists;
    std::function<bool(std::string_view ns, std::string_view name, std::string_view uid)> pod_exists;
  };

  // Any of `token_file`, `issuer` and `oidc` may be null (that authenticator is
  // off). `issuer` must outlive this object.
  Authenticator(std::string admin_token, std::unique_ptr<TokenFileAuthenticator> token_file,
                const TokenIssuer* issuer, std::unique_ptr<OidcAuthenticator> oidc, Lookups lookups);

  // With `may_block` false, a token whose issuer's keys must be fetched first
  // (an OIDC token signed by a key not fetched yet) is answered Unavailable
  // without fetching, so that an I/O thread never waits on an identity
  // provider: the caller asks again, with `may_block`, from a thread that may.
  // Unavailable means nothing else here.
  Result<UserInfo> Authenticate(std::string_view token, Timestamp now, bool may_block = true);

  // How many JWTs are remembered now (tests).
  size_t CachedForTest() const;

 private:
  struct Cached {
    UserInfo user;
    std::optional<VerifiedCredential> credential;  // a ServiceAccount's: re-checked on each use
    Timestamp until;
  };
  Result<UserInfo> AuthenticateJwt(std::string_view token, Timestamp now, bool may_block);
  // The ServiceAccount (and pod) a credential names still exist as they were.
  Status StillValid(const VerifiedCredential& credential) const;
  UserInfo UserOf(const VerifiedCredential& credential) const;

  std::string admin_token_;
  std::unique_ptr<TokenFileAuthenticator> token_file_;
  const TokenIssuer* issuer_;
  std::unique_ptr<OidcAuthenticator> oidc_;
  Lookups lookups_;
  mutable std::mutex mu_;
  std::unordered_map<std::string, Cached> cache_;  // guarded by mu_
};

}  // namespace tessera
