// The tokens the server signs itself (kube-apiserver's ServiceAccount token
// issuer, with Tessera's node credentials beside them):
//
//   - ServiceAccount tokens (the TokenRequest API, and what each pod gets as
//     TESSERA_TOKEN_FILE): claims as kube-apiserver writes bound tokens,
//       {"iss": ISSUER, "sub": "system:serviceaccount:NS:NAME", "aud": [...],
//        "exp", "iat", "nbf", "jti",
//        "kubernetes.io": {"namespace": NS,
//                          "serviceaccount": {"name": NAME, "uid": UID},
//                          "pod": {"name": P, "uid": U}}}      (pod: when bound to one)
//     Valid while the ServiceAccount with that uid exists (and the pod, for a
//     bound token): the authenticator checks that on every use.
//   - Node credentials, one per node's agent: {"iss", "sub": "system:node:NAME",
//     "aud", "exp", "iat", "nbf", "jti", "tessera.dev": {"node": NAME}}.
//   - Calls the server makes to an agent (pod logs): {"iss", "sub":
//     "system:apiserver", "aud": ["tessera-agent:NODE"], "exp" (5 minutes),
//     "tessera.dev": {"agentCall": NODE}}. The audience is never one the API
//     accepts, and no TokenRequest can produce that subject, so neither kind of
//     token can pass for the other.
//   - A browser's session on one proxy path (the cookie the proxy sets after
//     a login code, server/api/proxy_login.h): {"iss", "sub": USER, "aud":
//     ["tessera-proxy-session"], "exp" (12 hours), "iat", "nbf", "jti",
//     "tessera.dev": {"proxySession": {"path": P, "uid", "groups", "extra"}}}.
//     Its audience is never one the API accepts, so it is no bearer token; it
//     is accepted only on requests under its own path P.
//
// Keys: one signing key, kept in the data directory as a private JWK (mode
// 0600), created on first start; its public half is served at /openid/v1/jwks
// with the discovery document at /.well-known/openid-configuration, as
// kube-apiserver serves them, so agents (and anyone) can verify.
//
// Thread-safety: immutable after construction; every method is const and safe
// from any thread.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "auth/jwt.h"
#include "auth/user_info.h"
#include "common/result.h"
#include "common/time.h"

namespace tessera {

inline constexpr std::string_view kDefaultServiceAccountIssuer = "https://tessera.default.svc";
// kube-apiserver's TokenRequest rules: at least 10 minutes; 1 hour when unset.
inline constexpr Duration kMinTokenExpiration = Duration::Seconds(600);
inline constexpr Duration kDefaultTokenExpiration = Duration::Seconds(3600);
inline constexpr Duration kAgentCallTokenExpiration = Duration::Seconds(300);
inline constexpr std::string_view kApiServerUser = "system:apiserver";
inline constexpr std::string_view kProxySessionAudience = "tessera-proxy-session";
inline constexpr Duration kProxySessionExpiration = Duration::Seconds(12 * 3600);

struct TokenIssuerOptions {
  std::string issuer = std::string(kDefaultServiceAccountIssuer);  // --service-account-issuer
  std::vector<std::string> api_audiences;  // --api-audiences; empty: {issuer}
  Duration max_expiration = Duration::Infinite();  // --service-account-max-token-expiration
};

struct BoundPod {
  std::string name;
  std::string uid;
  friend bool operator==(const BoundPod&, const BoundPod&) = default;
};

struct ServiceAccountTokenRequest {
  std::string ns;
  std::string name;
  std::string uid;  // the ServiceAccount's metadata.uid
  std::vector<std::string> audiences;  // empty: the API audiences
  std::optional<Duration> expiration;  // nullopt: kDefaultTokenExpiration
  std::optional<BoundPod> pod;
};

struct IssuedToken {
  std::string token;
  Timestamp expires;
};

// What a token the API accepts says, once its signature, issuer, audience and
// times were checked.
struct VerifiedCredential {
  enum class Kind { kServiceAccount, kNode };
  Kind kind = Kind::kServiceAccount;
  std::string ns;    // kServiceAccount
  std::string name;  // the ServiceAccount's, or the node's
  std::string uid;   // the ServiceAccount's
  std::optional<BoundPod> pod;
  std::string jti;
  Timestamp expires;
};

class TokenIssuer {
 public:
  TokenIssuer(SigningKey key, TokenIssuerOptions options);

  // Reads the private JWK at `path`, or creates one (ES256, mode 0600) when
  // the file does not exist. IoError or InvalidArgument naming the file.
  static Result<SigningKey> LoadOrCreateSigningKey(const std::string& path);

  // InvalidArgument, in TokenRequest's words, when the expiration is below 10
  // minutes ("spec.expirationSeconds: may not specify a duration less than 10
  // minutes"); an expiration above max_expiration is cut to it, as
  // kube-apiserver does.
  Result<IssuedToken> IssueServiceAccount(const ServiceAccountTokenRequest& request, Timestamp now) const;
  Result<IssuedToken> IssueNode(std::string_view node, Duration expiration, Timestamp now) const;
  Result<std::string> IssueAgentCall(std::string_view node, Timestamp now) const;
  // `user`'s session on the proxy path `path` (no trailing slash), valid for
  // `expiration`.
  Result<IssuedToken> IssueProxySession(const UserInfo& user, std::string_view path, Duration expiration,
                                        Timestamp now) const;
  // The user of a session IssueProxySession made for exactly `path`;
  // Unauthenticated saying why (a bad signature, expired, another path).
  Result<UserInfo> VerifyProxySession(std::string_view token, std::string_view path, Timestamp now) const;

  // True when the token is a JWT whose (unverified) issuer is this one: the
  // authenticator routes it here rather than to OIDC.
  bool Issued(const Jwt& unverified) const;
  // Unauthenticated with the reason: a bad signature, an unknown key, wrong
  // issuer or audience, expired, or claims of neither kind.
  Result<VerifiedCredential> Verify(std::string_view token, Timestamp now) const;

  const KeySet& public_keys() const { return public_keys_; }
  // /.well-known/openid-configuration: issuer, jwks_uri (`server_url` +
  // "/openid/v1/jwks"), response_types_supported, subject_types_supported,
  // id_token_signing_alg_values_supported.
  nlohmann::json DiscoveryDocument(std::string_view server_url) const;
  const std::string& issuer() const { return options_.issuer; }
  const std::vector<std::string>& api_audiences() const { return options_.api_audiences; }

 private:
  nlohmann::json BaseClaims(std::vector<std::string> audiences, Timestamp now, Timestamp expires) const;

  SigningKey key_;
  KeySet public_keys_;
  TokenIssuerOptions options_;
};

// The agent's check of a call from the server: signed by one of `server_keys`,
// issued by `issuer`, subject system:apiserver, audience tessera-agent:`node`,
// not expired. Unauthenticated saying why.
Status VerifyAgentCall(std::string_view token, const KeySet& server_keys, std::string_view issuer,
                       std::string_view node, Timestamp now);

// "tessera-agent:NODE": the audience of the server's calls to a node's agent.
std::string AgentCallAudience(std::string_view node);

}  // namespace tessera
