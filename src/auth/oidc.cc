#include "auth/oidc.h"

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <fstream>
#include <sstream>

namespace tessera {
namespace {

using nlohmann::json;

constexpr int64_t kRefetchMs = 10'000;

Status Unauthenticated(std::string why) { return Status::Unauthenticated(std::move(why)); }

Result<std::string> ReadWholeFile(const std::string& path) {
  std::ifstream in(path);
  if (!in) return Err(Status::IoError(fmt::format("cannot read {}", path)));
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

}  // namespace

Result<std::unique_ptr<OidcAuthenticator>> OidcAuthenticator::Create(OidcOptions options, UrlFetcher fetch) {
  if (options.client_id.empty()) {
    return Err(Status::InvalidArgument("--oidc-client-id is required with --oidc-issuer-url"));
  }
  if (!options.issuer_url.starts_with("https://")) {
    return Err(Status::InvalidArgument(
        fmt::format("--oidc-issuer-url \"{}\": the issuer URL must use https://", options.issuer_url)));
  }
  if (options.username_claim.empty()) options.username_claim = "sub";
  if (options.signing_algs.empty()) options.signing_algs = {"RS256"};
  for (const std::string& alg : options.signing_algs) {
    if (std::find(std::begin(kSupportedJwtAlgs), std::end(kSupportedJwtAlgs), alg) == std::end(kSupportedJwtAlgs)) {
      return Err(Status::InvalidArgument(fmt::format("--oidc-signing-algs: {} is not supported (supported: {})", alg,
                                                     fmt::join(kSupportedJwtAlgs, ", "))));
    }
  }
  std::unique_ptr<OidcAuthenticator> a(new OidcAuthenticator(std::move(options), std::move(fetch)));
  for (const std::string& alg : a->options_.signing_algs) a->algs_.push_back(alg);
  if (!a->options_.jwks_file.empty()) {
    // Air-gapped: the keys come from the file, read now so that a bad one stops the server.
    auto text = ReadWholeFile(a->options_.jwks_file);
    if (!text) {
      return Err(Status::InvalidArgument(fmt::format("--oidc-jwks-file: {}", text.error().message())));
    }
    auto keys = KeySet::FromJwks(*text);
    if (!keys) {
      return Err(Status::InvalidArgument(
          fmt::format("--oidc-jwks-file {}: {}", a->options_.jwks_file, keys.error().message())));
    }
    a->keys_.store(std::make_shared<const KeySet>(std::move(*keys)));
  }
  return a;
}

Result<KeySet> OidcAuthenticator::FetchKeys() {
  if (!options_.jwks_file.empty()) {
    ASSIGN_OR_RETURN(std::string text, ReadWholeFile(options_.jwks_file));
    return KeySet::FromJwks(text);
  }
  std::string base = options_.issuer_url;
  while (!base.empty() && base.back() == '/') base.pop_back();
  ASSIGN_OR_RETURN(std::string discovery_text, fetch_(base + "/.well-known/openid-configuration"));
  const json discovery = json::parse(discovery_text, nullptr, false);
  if (!discovery.is_object()) return Err(Status::InvalidArgument("the issuer's discovery document is not JSON"));
  auto issuer = discovery.find("issuer");
  if (issuer == discovery.end() || !issuer->is_string() || issuer->get<std::string>() != options_.issuer_url) {
    // OIDC discovery section 4.3: the document's issuer must be the one asked.
    return Err(Status::InvalidArgument(
        fmt::format("the issuer's discovery document names another issuer than {}", options_.issuer_url)));
  }
  auto jwks_uri = discovery.find("jwks_uri");
  if (jwks_uri == discovery.end() || !jwks_uri->is_string()) {
    return Err(Status::InvalidArgument("the issuer's discovery document has no jwks_uri"));
  }
  ASSIGN_OR_RETURN(std::string jwks, fetch_(jwks_uri->get<std::string>()));
  return KeySet::FromJwks(jwks);
}

bool OidcAuthenticator::WouldFetch(std::string_view kid, Timestamp now) {
  std::shared_ptr<const KeySet> keys = keys_.load();
  if (keys && (kid.empty() || keys->HasKid(kid))) return false;
  if (!options_.jwks_file.empty()) return false;  // a file, read at once
  std::unique_lock lock(fetch_mu_, std::try_to_lock);
  if (!lock.owns_lock()) return true;  // a fetch is under way: Authenticate would wait for it
  return last_fetch_ms_ == 0 || now.ms - last_fetch_ms_ >= kRefetchMs;
}

std::shared_ptr<const KeySet> OidcAuthenticator::KeysFor(std::string_view kid, Timestamp now) {
  std::shared_ptr<const KeySet> keys = keys_.load();
  if (keys && (kid.empty() || keys->HasKid(kid))) return keys;
  std::lock_guard lock(fetch_mu_);
  keys = keys_.load();  // another thread may have fetched meanwhile
  if (keys && (kid.empty() || keys->HasKid(kid))) return keys;
  if (last_fetch_ms_ != 0 && now.ms - last_fetch_ms_ < kRefetchMs) return keys;
  last_fetch_ms_ = now.ms;
  auto fetched = FetchKeys();
  if (!fetched) {
    if (fetched.error().message() != last_fetch_error_) {
      spdlog::warn("oidc issuer {}: cannot fetch its keys: {}", options_.issuer_url, fetched.error().message());
    }
    last_fetch_error_ = fetched.error().message();
    return keys;
  }
  last_fetch_error_.clear();
  keys = std::make_shared<const KeySet>(std::move(*fetched));
  keys_.store(keys);
  return keys;
}

Result<UserInfo> OidcAuthenticator::Authenticate(std::string_view token, const Jwt& unverified, Timestamp now) {
  const json& header = unverified.header;
  std::string kid;
  if (auto it = header.find("kid"); it != header.end() && it->is_string()) kid = it->get<std::string>();
  std::shared_ptr<const KeySet> keys = KeysFor(kid, now);
  if (!keys || keys->empty()) {
    std::lock_guard lock(fetch_mu_);
    return Err(Unauthenticated(fmt::format("the keys of oidc issuer {} are not available yet{}", options_.issuer_url,
                                           last_fetch_error_.empty() ? "" : ": " + last_fetch_error_)));
  }
  ASSIGN_OR_RETURN(Jwt jwt, VerifyJwt(token, *keys, algs_));
  const json& c = jwt.claims;
  auto iss = c.find("iss");
  if (iss == c.end() || !iss->is_string() || iss->get<std::string>() != options_.issuer_url) {
    return Err(Unauthenticated("token issuer is not the configured oidc issuer"));
  }
  RETURN_IF_ERROR(CheckTokenAudience(c, std::span<const std::string>(&options_.client_id, 1)));
  RETURN_IF_ERROR(CheckTokenTimes(c, now));
  auto username = c.find(options_.username_claim);
  if (username == c.end() || !username->is_string() || username->get<std::string>().empty()) {
    return Err(Unauthenticated(fmt::format("token has no \"{}\" claim to take the user name from", options_.username_claim)));
  }
  if (options_.username_claim == "email") {
    if (auto verified = c.find("email_verified"); verified != c.end() && !(verified->is_boolean() && verified->get<bool>())) {
      return Err(Unauthenticated("token's email is not verified (email_verified is not true)"));
    }
  }
  for (const auto& [key, value] : options_.required_claims) {
    auto claim = c.find(key);
    if (claim == c.end() || !claim->is_string() || claim->get<std::string>() != value) {
      return Err(Unauthenticated(fmt::format("token lacks the required claim {}={}", key, value)));
    }
  }
  UserInfo user;
  std::string prefix;
  if (options_.username_prefix) {
    if (*options_.username_prefix != "-") prefix = *options_.username_prefix;
  } else if (options_.username_claim != "email") {
    prefix = options_.issuer_url + "#";
  }
  user.name = prefix + username->get<std::string>();
  if (!options_.groups_claim.empty()) {
    if (auto groups = c.find(options_.groups_claim); groups != c.end()) {
      if (groups->is_string()) {
        user.groups.push_back(options_.groups_prefix + groups->get<std::string>());
      } else if (groups->is_array()) {
        for (const json& g : *groups) {
          if (!g.is_string()) {
            return Err(Unauthenticated(fmt::format("token's \"{}\" claim holds something else than strings", options_.groups_claim)));
          }
          user.groups.push_back(options_.groups_prefix + g.get<std::string>());
        }
      } else {
        return Err(Unauthenticated(fmt::format("token's \"{}\" claim is neither a string nor a list", options_.groups_claim)));
      }
    }
  }
  user.groups.emplace_back(kGroupAuthenticated);
  return user;
}

}  // namespace tessera
