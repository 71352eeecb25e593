#include "auth/authenticator.h"

#include <fmt/format.h>
#include <openssl/crypto.h>

namespace tessera {
namespace {

constexpr Duration kRememberJwt = Duration::Seconds(60);
constexpr size_t kMaxCached = 20000;

bool LooksLikeJwt(std::string_view token) {
  const size_t first = token.find('.');
  return first != std::string_view::npos && token.find('.', first + 1) != std::string_view::npos;
}

bool SameSecret(std::string_view a, std::string_view b) {
  return a.size() == b.size() && CRYPTO_memcmp(a.data(), b.data(), a.size()) == 0;
}

}  // namespace

Authenticator::Authenticator(std::string admin_token, std::unique_ptr<TokenFileAuthenticator> token_file,
                             const TokenIssuer* issuer, std::unique_ptr<OidcAuthenticator> oidc, Lookups lookups)
    : admin_token_(std::move(admin_token)),
      token_file_(std::move(token_file)),
      issuer_(issuer),
      oidc_(std::move(oidc)),
      lookups_(std::move(lookups)) {}

Result<UserInfo> Authenticator::Authenticate(std::string_view token, Timestamp now, bool may_block) {
  if (token.empty()) {
    return Err(Status::Unauthenticated(
        "no bearer token: pass --token or --token-file, set TESSERA_TOKEN, or use the config written by `tessera up` "
        "(the admin token is in <data-dir>/admin.token)"));
  }
  if (!admin_token_.empty() && SameSecret(token, admin_token_)) {
    return UserInfo{.name = std::string(kAdminUser),
                    .groups = {std::string(kGroupMasters), std::string(kGroupAuthenticated)}};
  }
  if (token_file_) {
    if (auto user = token_file_->Find(token, now)) return std::move(*user);
  }
  if (LooksLikeJwt(token) && (issuer_ || oidc_)) return AuthenticateJwt(token, now, may_block);
  return Err(Status::Unauthenticated("the bearer token is not valid for this server"));
}

Result<UserInfo> Authenticator::AuthenticateJwt(std::string_view token, Timestamp now, bool may_block) {
  {
    std::lock_guard lock(mu_);
    auto it = cache_.find(std::string(token));
    if (it != cache_.end()) {
      if (now < it->second.until) {
        if (it->second.credential) RETURN_IF_ERROR(StillValid(*it->second.credential));
        return it->second.user;
      }
      cache_.erase(it);
    }
  }
  ASSIGN_OR_RETURN(Jwt unverified, DecodeJwtUnverified(token));
  const auto iss = unverified.claims.find("iss");
  const std::string issuer = iss != unverified.claims.end() && iss->is_string() ? iss->get<std::string>() : "";
  Cached entry;
  if (issuer_ && issuer_->Issued(unverified)) {
    ASSIGN_OR_RETURN(VerifiedCredential credential, issuer_->Verify(token, now));
    RETURN_IF_ERROR(StillValid(credential));
    entry.user = UserOf(credential);
    entry.until = std::min(credential.expires, now + kRememberJwt);
    if (credential.kind == VerifiedCredential::Kind::kServiceAccount) entry.credential = std::move(credential);
  } else if (oidc_ && !issuer.empty() && issuer == oidc_->issuer()) {
    if (!may_block) {
      const auto kid = unverified.header.find("kid");
      if (oidc_->WouldFetch(kid != unverified.header.end() && kid->is_string() ? kid->get<std::string>() : "", now)) {
        return Err(Status::Unavailable("the oidc issuer's keys must be fetched first"));
      }
    }
    ASSIGN_OR_RETURN(entry.user, oidc_->Authenticate(token, unverified, now));
    const auto exp = unverified.claims.find("exp");  // verified by Authenticate
    entry.until = now + kRememberJwt;
    if (exp != unverified.claims.end() && exp->is_number()) {
      entry.until = std::min(entry.until, Timestamp::FromSeconds(static_cast<int64_t>(exp->get<double>())));
    }
  } else {
    return Err(Status::Unauthenticated(
        !issuer.empty() ? fmt::format("token issuer \"{}\" is not trusted by this server", issuer)
                        : std::string("token has no issuer (\"iss\") this server trusts")));
  }
  UserInfo user = entry.user;
  std::lock_guard lock(mu_);
  if (cache_.size() >= kMaxCached) cache_.clear();  // rare; verifying again costs only time
  cache_.insert_or_assign(std::string(token), std::move(entry));
  return user;
}

Status Authenticator::StillValid(const VerifiedCredential& c) const {
  if (c.kind != VerifiedCredential::Kind::kServiceAccount) return Status::Ok();
  if (!lookups_.service_account_exists || !lookups_.service_account_exists(c.ns, c.name, c.uid)) {
    return Status::Unauthenticated(fmt::format(
        "the token's service account {}/{} no longer exists (a service account deleted, or deleted and created "
        "again, invalidates its tokens: request a new one)",
        c.ns, c.name));
  }
  if (c.pod && (!lookups_.pod_exists || !lookups_.pod_exists(c.ns, c.pod->name, c.pod->uid))) {
    return Status::Unauthenticated(fmt::format("the token's pod {}/{} no longer exists", c.ns, c.pod->name));
  }
  return Status::Ok();
}

UserInfo Authenticator::UserOf(const VerifiedCredential& c) const {
  UserInfo user;
  if (c.kind == VerifiedCredential::Kind::kNode) {
    user.name = NodeUserName(c.name);
    user.groups = {std::string(kGroupNodes), std::string(kGroupAuthenticated)};
  } else {
    user.name = ServiceAccountUserName(c.ns, c.name);
    user.uid = c.uid;
    user.groups = {std::string(kGroupServiceAccounts), fmt::format("{}:{}", kGroupServiceAccounts, c.ns),
                   std::string(kGroupAuthenticated)};
    if (c.pod) {
      user.extra["authentication.kubernetes.io/pod-name"] = {c.pod->name};
      user.extra["authentication.kubernetes.io/pod-uid"] = {c.pod->uid};
    }
  }
  if (!c.jti.empty()) user.extra["authentication.kubernetes.io/credential-id"] = {"JTI=" + c.jti};
  return user;
}

size_t Authenticator::CachedForTest() const {
  std::lock_guard lock(mu_);
  return cache_.size();
}

}  // namespace tessera
