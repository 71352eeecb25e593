// JWTs (RFC 7519) as compact JWS (RFC 7515) with keys as JWKs (RFC 7517): the
// one place Tessera drives cjose (Debian's libcjose). The server signs
// ServiceAccount tokens (TokenRequest), node credentials and its own calls to
// agents with a SigningKey; it verifies those and OIDC ID tokens against a
// KeySet (its own public keys, or an identity provider's JWKS).
//
// Algorithms: RS256 (kube-apiserver's default for service account and OIDC
// tokens), RS384, RS512, ES256, ES384, ES512. "none" and the HMAC algorithms are
// never accepted when verifying, whatever `allowed_algs` says.
//
// Key ids: a generated key's kid is its RFC 7638 thumbprint (base64url of the
// SHA-256 of the canonical public JWK), as kube-apiserver derives its kid, so
// that a key read back from its JWK or PEM has the same kid.
//
// Errors: everything about a token a client sent is Unauthenticated, worded
// for the 401 that the user reads, and never contains the token itself (it is a
// credential). Everything about a key is InvalidArgument (a bad file an admin
// gave) or Internal (the library failed).
//
// Thread-safety: SigningKey and KeySet are immutable once built (Add aside) and
// their const methods are safe to call from any thread; copies share the key.
#pragma once

#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "common/result.h"
#include "common/time.h"

namespace tessera {

// What verification accepts unless told otherwise.
inline constexpr std::string_view kDefaultJwtAlgs[] = {"RS256"};
// Every algorithm this file can verify.
inline constexpr std::string_view kSupportedJwtAlgs[] = {"RS256", "RS384", "RS512", "ES256", "ES384", "ES512"};

struct Jwt {
  nlohmann::json header;  // the protected header, a JSON object
  nlohmann::json claims;  // the payload, a JSON object
};

class SigningKey {
 public:
  // A new RSA key of `bits` bits (at least 2048), alg RS256.
  static Result<SigningKey> GenerateRsa(int bits = 2048);
  // A new EC key on P-256, alg ES256.
  static Result<SigningKey> GenerateEs256();
  // From a private JWK as ToPrivateJwk writes it (RSA or EC P-256/384/521).
  // Its "alg" is kept when present (RS256 for RSA, ES256/384/512 by curve
  // otherwise) and so is its "kid" (the thumbprint otherwise).
  static Result<SigningKey> FromPrivateJwk(std::string_view json);
  // From a PEM private key (PKCS#1 "RSA PRIVATE KEY", SEC1 "EC PRIVATE KEY" or
  // PKCS#8 "PRIVATE KEY"), as kube-apiserver's --service-account-signing-key-file.
  static Result<SigningKey> FromPem(std::string_view pem);

  // The private JWK as JSON text (with kid and alg); whoever stores it keeps it 0600.
  std::string ToPrivateJwk() const;
  // The public half: {"kty","kid","alg","use":"sig", "n","e" | "crv","x","y"}.
  nlohmann::json PublicJwk() const;
  const std::string& kid() const;
  const std::string& alg() const;

  // `claims` (a JSON object) signed: header {"alg": alg(), "kid": kid(), "typ": "JWT"}.
  Result<std::string> Sign(const nlohmann::json& claims) const;

  struct Impl;  // cjose's key, shared by copies

 private:
  explicit SigningKey(std::shared_ptr<const Impl> impl) : impl_(std::move(impl)) {}
  std::shared_ptr<const Impl> impl_;
  friend class KeySet;
};

// Public keys to verify with.
class KeySet {
 public:
  KeySet() = default;
  // A JWKS document ({"keys": [...]}). RSA and EC keys whose "use" is absent or
  // "sig" are taken (private parts, when present, are ignored); others (an
  // encryption key, an unknown kty or curve) are skipped, as identity providers
  // list such keys too. InvalidArgument when it is not JSON, has no "keys"
  // list, or leaves no usable key.
  static Result<KeySet> FromJwks(std::string_view json);
  // The public half of `key`.
  void Add(const SigningKey& key);
  // {"keys": [public JWKs]}, in the order added.
  nlohmann::json ToJwks() const;
  size_t size() const { return keys_.size(); }
  bool empty() const { return keys_.empty(); }
  bool HasKid(std::string_view kid) const;

  struct Key;  // cjose's key with its kid and alg

 private:
  std::vector<std::shared_ptr<const Key>> keys_;
  friend Result<Jwt> VerifyJwt(std::string_view, const KeySet&, std::span<const std::string_view>);
};

// Decodes a compact JWS without checking its signature, so that a caller can
// route it by issuer ("iss") before verifying. Unauthenticated when it is not
// three base64url parts whose header and payload are JSON objects:
// "malformed token: ...".
Result<Jwt> DecodeJwtUnverified(std::string_view token);

// Checks the signature against `keys`. The header's alg must be in
// `allowed_algs` (and supported) and fit the key's type; its kid, when present,
// picks the key, else every key of that type is tried. Unauthenticated:
//   "malformed token: ..."
//   "token signed with HS256, which is not accepted (accepted: RS256)"
//   "token signed by an unknown key (kid \"abc\")"
//   "token signature is invalid"
Result<Jwt> VerifyJwt(std::string_view token, const KeySet& keys,
                      std::span<const std::string_view> allowed_algs = kDefaultJwtAlgs);

// RFC 7519 section 4.1's time claims, allowing `leeway` of clock skew, as
// Unauthenticated:
//   "exp" required, a number, and now < exp + leeway: "token expired at 2026-12-01T10:00:00Z";
//   "nbf" when present: now >= nbf - leeway: "token is not valid before 2026-12-01T10:00:00Z";
//   "iat" when present must be a number.
Status CheckTokenTimes(const nlohmann::json& claims, Timestamp now, Duration leeway = Duration::Seconds(60));

// "aud" (a string or a list of strings) shares a value with `accepted`:
// "token audience [\"other\"] is not accepted here (accepted: [\"tessera\"])".
// A token without "aud" is refused the same way.
Status CheckTokenAudience(const nlohmann::json& claims, std::span<const std::string> accepted);

// The "aud" claim as a list (a single string becomes a list of one); empty when absent.
std::vector<std::string> TokenAudiences(const nlohmann::json& claims);

// The RFC 7638 thumbprint of an RSA or EC JWK (public or private): base64url,
// unpadded, of the SHA-256 of its required members ({"e","kty","n"} or
// {"crv","kty","x","y"}) as compact JSON in lexicographic order. What a
// generated key's kid is. InvalidArgument when a required member is missing or
// not a string, or the kty is another.
Result<std::string> JwkThumbprint(const nlohmann::json& jwk);

}  // namespace tessera
