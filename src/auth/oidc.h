// OIDC ID tokens as kube-apiserver's --oidc-* flags accept them (the seed binds a
// Role to an Entra ID group: this is that path).
//
// A token is accepted when:
//   - it is signed by a key of the issuer (RS256 unless --oidc-signing-algs says
//     more), found by its kid in the issuer's JWKS: fetched from the jwks_uri of
//     {issuer}/.well-known/openid-configuration, or read from --oidc-jwks-file
//     for sites without a route to the identity provider;
//   - "iss" is exactly --oidc-issuer-url and "aud" holds --oidc-client-id;
//   - it is within its "exp" and "nbf" (a minute of clock skew allowed);
//   - the username claim (--oidc-username-claim, "sub" by default) is a
//     non-empty string; when it is "email", an "email_verified" claim, if
//     present, is true;
//   - every --oidc-required-claim KEY=VALUE is a string claim of that value.
// The user is the claim's value with --oidc-username-prefix before it; without
// that flag, claims other than "email" are prefixed with the issuer URL and
// '#' (kube-apiserver's default, so that "sub"s of two issuers never clash);
// "-" means no prefix. Groups come from --oidc-groups-claim (a string or a list
// of strings), each with --oidc-groups-prefix before it.
//
// Keys: fetched on first use and again when a token names a kid not among them
// (an identity provider rotates its keys), at most once every 10 s; a fetch that
// fails leaves the keys as they were. The fetch itself is the caller's (an
// HTTPS GET trusting --oidc-ca-file), so that this file does no network I/O;
// Authenticate runs it on the calling thread, and WouldFetch tells beforehand.
//
// Thread-safety: Authenticate may be called from any thread.
#pragma once

#include <atomic>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "auth/jwt.h"
#include "auth/user_info.h"
#include "common/result.h"
#include "common/time.h"

namespace tessera {

struct OidcOptions {
  std::string issuer_url;
  std::string client_id;
  std::string username_claim = "sub";
  std::optional<std::string> username_prefix;  // nullopt: kube-apiserver's default (above); "-": none
  std::string groups_claim;
  std::string groups_prefix;
  std::map<std::string, std::string> required_claims;
  std::vector<std::string> signing_algs = {"RS256"};
  std::string ca_file;    // trusted for the issuer's HTTPS (the fetcher's business)
  std::string jwks_file;  // when set, keys come from here and nothing is fetched
};

// GETs a URL and returns the body of a 200 answer; an error saying why otherwise.
using UrlFetcher = std::function<Result<std::string>(const std::string& url)>;

class OidcAuthenticator {
 public:
  // InvalidArgument for options kube-apiserver refuses (no client id, an issuer
  // that is not https://, an unknown signing algorithm, a jwks file that cannot
  // be read or holds no keys). Keys are not fetched yet.
  static Result<std::unique_ptr<OidcAuthenticator>> Create(OidcOptions options, UrlFetcher fetch);

  // For a token whose (unverified) "iss" is this issuer: the user, or
  // Unauthenticated saying why ("token expired at ...", "token audience ... is
  // not accepted here", "token signed by an unknown key (kid \"k2\")", ...).
  Result<UserInfo> Authenticate(std::string_view token, const Jwt& unverified, Timestamp now);

  const std::string& issuer() const { return options_.issuer_url; }

  // Whether Authenticate, for a token naming key `kid`, would fetch the keys
  // first (or wait for a fetch under way): a network round trip, which the
  // caller makes off any thread that must not block.
  bool WouldFetch(std::string_view kid, Timestamp now);

 private:
  OidcAuthenticator(OidcOptions options, UrlFetcher fetch) : options_(std::move(options)), fetch_(std::move(fetch)) {}
  // Fetches the keys when none are held or `kid` is unknown, at most every 10 s.
  std::shared_ptr<const KeySet> KeysFor(std::string_view kid, Timestamp now);
  Result<KeySet> FetchKeys();

  OidcOptions options_;
  UrlFetcher fetch_;
  std::vector<std::string_view> algs_;  // views of options_.signing_algs
  std::atomic<std::shared_ptr<const KeySet>> keys_;
  std::mutex fetch_mu_;  // one fetch at a time
  int64_t last_fetch_ms_ = 0;  // guarded by fetch_mu_
  std::string last_fetch_error_;  // guarded by fetch_mu_
};

}  // namespace tessera
