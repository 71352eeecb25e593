#include "auth/service_account_tokens.h"

#include "common/atomic_file.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>

#include "auth/user_info.h"
#include "common/time_format.h"
#include "common/uuid.h"

namespace tessera {
namespace {

using nlohmann::json;

constexpr std::string_view kKubernetesClaim = "kubernetes.io";
constexpr std::string_view kTesseraClaim = "tessera.dev";
constexpr std::string_view kAgentAudiencePrefix = "tessera-agent:";

UuidGenerator& Jtis() {
  static UuidGenerator generator;
  return generator;
}

// A string at obj[key], or "" when absent or not a string.
std::string StringAt(const json& obj, std::string_view key) {
  if (!obj.is_object()) return "";
  auto it = obj.find(key);
  return it != obj.end() && it->is_string() ? it->get<std::string>() : "";
}

const json* ObjectAt(const json& obj, std::string_view key) {
  if (!obj.is_object()) return nullptr;
  auto it = obj.find(key);
  return it != obj.end() && it->is_object() ? &*it : nullptr;
}

Status Unauthenticated(std::string_view why) { return Status::Unauthenticated(std::string(why)); }

}  // namespace

std::string AgentCallAudience(std::string_view node) { return fmt::format("{}{}", kAgentAudiencePrefix, node); }

TokenIssuer::TokenIssuer(SigningKey key, TokenIssuerOptions options) : key_(std::move(key)), options_(std::move(options)) {
  if (options_.api_audiences.empty()) options_.api_audiences.push_back(options_.issuer);
  public_keys_.Add(key_);
}

Result<SigningKey> TokenIssuer::LoadOrCreateSigningKey(const std::string& path) {
  std::ifstream in(path);
  if (in) {
    std::ostringstream text;
    text << in.rdbuf();
    auto key = SigningKey::FromPrivateJwk(text.str());
    if (!key) return Err(key.error().WithContext(fmt::format("service account signing key {}", path)));
    return key;
  }
  if (errno != ENOENT) {
    return Err(Status::IoError(fmt::format("cannot read the service account signing key {}: {}", path,
                                           std::strerror(errno))));
  }
  // ES256: signing a pod's token costs microseconds, where RSA costs a millisecond.
  ASSIGN_OR_RETURN(SigningKey key, SigningKey::GenerateEs256());
  if (Status s = WriteFileAtomically(path, key.ToPrivateJwk() + "\n", 0600, {.sync = true}); !s.ok()) {
    return Err(s.WithContext("the service account signing key"));
  }
  return key;
}

json TokenIssuer::BaseClaims(std::vector<std::string> audiences, Timestamp now, Timestamp expires) const {
  return json{{"iss", options_.issuer},
              {"aud", std::move(audiences)},
              {"iat", now.seconds()},
              {"nbf", now.seconds()},
              {"exp", expires.seconds()},
              {"jti", Jtis().Next()}};
}

Result<IssuedToken> TokenIssuer::IssueServiceAccount(const ServiceAccountTokenRequest& request, Timestamp now) const {
  Duration expiration = request.expiration.value_or(kDefaultTokenExpiration);
  if (expiration < kMinTokenExpiration) {
    return Err(Status::InvalidArgument("spec.expirationSeconds: may not specify a duration less than 10 minutes"));
  }
  if (expiration > options_.max_expiration) expiration = options_.max_expiration;
  const Timestamp expires = Timestamp::FromSeconds((now + expiration).seconds());
  json claims = BaseClaims(request.audiences.empty() ? options_.api_audiences : request.audiences, now, expires);
  claims["sub"] = ServiceAccountUserName(request.ns, request.name);
  json k8s{{"namespace", request.ns}, {"serviceaccount", {{"name", request.name}, {"uid", request.uid}}}};
  if (request.pod) k8s["pod"] = {{"name", request.pod->name}, {"uid", request.pod->uid}};
  claims[kKubernetesClaim] = std::move(k8s);
  ASSIGN_OR_RETURN(std::string token, key_.Sign(claims));
  return IssuedToken{.token = std::move(token), .expires = expires};
}

Result<IssuedToken> TokenIssuer::IssueNode(std::string_view node, Duration expiration, Timestamp now) const {
  if (node.empty()) return Err(Status::InvalidArgument("a node credential needs the node's name"));
  if (expiration < kMinTokenExpiration) {
    return Err(Status::InvalidArgument("a node credential must be valid for at least 10 minutes"));
  }
  const Timestamp expires = Timestamp::FromSeconds((now + expiration).seconds());
  json claims = BaseClaims(options_.api_audiences, now, expires);
  claims["sub"] = NodeUserName(node);
  claims[kTesseraClaim] = {{"node", node}};
  ASSIGN_OR_RETURN(std::string token, key_.Sign(claims));
  return IssuedToken{.token = std::move(token), .expires = expires};
}

Result<std::string> TokenIssuer::IssueAgentCall(std::string_view node, Timestamp now) const {
  json claims = BaseClaims({AgentCallAudience(node)}, now, Timestamp::FromSeconds((now + kAgentCallTokenExpiration).seconds()));
  claims["sub"] = kApiServerUser;
  claims[kTesseraClaim] = {{"agentCall", node}};
  return key_.Sign(claims);
}

Result<IssuedToken> TokenIssuer::IssueProxySession(const UserInfo& user, std::string_view path, Duration expiration,
                                                   Timestamp now) const {
  if (user.name.empty() || path.empty()) {
    return Err(Status::InvalidArgument("a proxy session needs a user and a path"));
  }
  const Timestamp expires = Timestamp::FromSeconds((now + expiration).seconds());
  json claims = BaseClaims({std::string(kProxySessionAudience)}, now, expires);
  claims["sub"] = user.name;
  json extra = json::object();
  for (const auto& [k, values] : user.extra) extra[k] = values;
  claims[kTesseraClaim] = {
      {"proxySession", {{"path", path}, {"uid", user.uid}, {"groups", user.groups}, {"extra", std::move(extra)}}}};
  ASSIGN_OR_RETURN(std::string token, key_.Sign(claims));
  return IssuedToken{.token = std::move(token), .expires = expires};
}

Result<UserInfo> TokenIssuer::VerifyProxySession(std::string_view token, std::string_view path, Timestamp now) const {
  ASSIGN_OR_RETURN(Jwt jwt, VerifyJwt(token, public_keys_, kSupportedJwtAlgs));
  const json& c = jwt.claims;
  if (StringAt(c, "iss") != options_.issuer) return Err(Unauthenticated("session issuer is not this server"));
  RETURN_IF_ERROR(CheckTokenTimes(c, now, Duration::Seconds(0)));
  const std::string audience(kProxySessionAudience);
  RETURN_IF_ERROR(CheckTokenAudience(c, std::span<const std::string>(&audience, 1)));
  const json* tessera = ObjectAt(c, kTesseraClaim);
  const json* session = tessera ? ObjectAt(*tessera, "proxySession") : nullptr;
  if (session == nullptr || StringAt(c, "sub").empty()) return Err(Unauthenticated("token is not a proxy session"));
  if (StringAt(*session, "path") != path) return Err(Unauthenticated("the session is for another proxy path"));
  UserInfo user{.name = StringAt(c, "sub"), .uid = StringAt(*session, "uid")};
  if (auto g = session->find("groups"); g != session->end() && g->is_array()) {
    for (const json& group : *g) {
      if (group.is_string()) user.groups.push_back(group.get<std::string>());
    }
  }
  if (const json* extra = ObjectAt(*session, "extra")) {
    for (const auto& [k, values] : extra->items()) {
      if (!values.is_array()) continue;
      for (const json& v : values) {
        if (v.is_string()) user.extra[k].push_back(v.get<std::string>());
      }
    }
  }
  return user;
}

bool TokenIssuer::Issued(const Jwt& unverified) const { return StringAt(unverified.claims, "iss") == options_.issuer; }

Result<VerifiedCredential> TokenIssuer::Verify(std::string_view token, Timestamp now) const {
  ASSIGN_OR_RETURN(Jwt jwt, VerifyJwt(token, public_keys_, kSupportedJwtAlgs));
  const json& c = jwt.claims;
  if (StringAt(c, "iss") != options_.issuer) return Err(Unauthenticated("token issuer is not this server"));
  RETURN_IF_ERROR(CheckTokenTimes(c, now, Duration::Seconds(0)));
  RETURN_IF_ERROR(CheckTokenAudience(c, options_.api_audiences));
  VerifiedCredential v;
  v.jti = StringAt(c, "jti");
  // CheckTokenTimes found "exp", a number.
  const json& exp = *c.find("exp");
  v.expires = Timestamp::FromSeconds(exp.is_number_integer() || exp.is_number_unsigned()
                                         ? exp.get<int64_t>()
                                         : static_cast<int64_t>(exp.get<double>()));
  const std::string sub = StringAt(c, "sub");
  if (const json* k8s = ObjectAt(c, kKubernetesClaim)) {
    const json* sa = ObjectAt(*k8s, "serviceaccount");
    v.kind = VerifiedCredential::Kind::kServiceAccount;
    v.ns = StringAt(*k8s, "namespace");
    v.name = sa ? StringAt(*sa, "name") : "";
    v.uid = sa ? StringAt(*sa, "uid") : "";
    if (v.ns.empty() || v.name.empty() || sub != ServiceAccountUserName(v.ns, v.name)) {
      return Err(Unauthenticated("token claims are malformed: the subject does not name its service account"));
    }
    if (const json* pod = ObjectAt(*k8s, "pod")) v.pod = BoundPod{StringAt(*pod, "name"), StringAt(*pod, "uid")};
    return v;
  }
  if (const json* tessera = ObjectAt(c, kTesseraClaim); tessera && !StringAt(*tessera, "node").empty()) {
    v.kind = VerifiedCredential::Kind::kNode;
    v.name = StringAt(*tessera, "node");
    if (sub != NodeUserName(v.name)) {
      return Err(Unauthenticated("token claims are malformed: the subject does not name its node"));
    }
    return v;
  }
  return Err(Unauthenticated("token is not a service account or node credential"));
}

json TokenIssuer::DiscoveryDocument(std::string_view server_url) const {
  return json{{"issuer", options_.issuer},
              {"jwks_uri", fmt::format("{}/openid/v1/jwks", server_url)},
              {"response_types_supported", {"id_token"}},
              {"subject_types_supported", {"public"}},
              {"id_token_signing_alg_values_supported", {key_.alg()}}};
}

Status VerifyAgentCall(std::string_view token, const KeySet& server_keys, std::string_view issuer,
                       std::string_view node, Timestamp now) {
  ASSIGN_OR_RETURN(Jwt jwt, VerifyJwt(token, server_keys, kSupportedJwtAlgs));
  const json& c = jwt.claims;
  if (StringAt(c, "iss") != issuer) return Unauthenticated("token issuer is not this node's server");
  RETURN_IF_ERROR(CheckTokenTimes(c, now, Duration::Seconds(30)));
  const std::string audience = AgentCallAudience(node);
  RETURN_IF_ERROR(CheckTokenAudience(c, std::span<const std::string>(&audience, 1)));
  const json* tessera = ObjectAt(c, kTesseraClaim);
  if (StringAt(c, "sub") != kApiServerUser || !tessera || StringAt(*tessera, "agentCall") != node) {
    return Unauthenticated("token is not the server's call to this node");
  }
  return Status::Ok();
}

}  // namespace tessera
