#include "server/api/auth_endpoints.h"

#include <fmt/format.h>

#include <optional>

#include "api/kinds.h"
#include "api/manifest.h"
#include "api/validation.h"
#include "common/time_format.h"
#include "server/api/api_errors.h"

namespace tessera {
namespace {

using nlohmann::json;

constexpr Duration kNodeTokenExpiration = Duration::Seconds(365 * 24 * 3600);

HttpResponse Created(const json& body) {
  HttpResponse r;
  r.status = 201;
  r.body = body.dump(-1, ' ', false, json::error_handler_t::replace);
  return r;
}

std::string StringOf(const json& obj, std::string_view key) {
  if (!obj.is_object()) return "";
  auto it = obj.find(key);
  return it != obj.end() && it->is_string() ? it->get<std::string>() : "";
}

const json& ObjectOf(const json& obj, std::string_view key) {
  static const json kEmpty = json::object();
  if (!obj.is_object()) return kEmpty;
  auto it = obj.find(key);
  return it != obj.end() && it->is_object() ? *it : kEmpty;
}

// The review body, parsed and validated as its kind; `error` is set (400 for
// a body that does not parse, 422 for one that does not validate) otherwise.
json ReviewBody(const HttpRequest& request, std::string_view store_key, std::optional<HttpResponse>& error) {
  auto parsed = ParseSingleObject(request.body);
  if (!parsed) {
    error = StatusResponse(400, "BadRequest", parsed.error().message());
    return json();
  }
  if (Status v = ValidateObject(*FindKindByStoreKey(store_key), *parsed); !v.ok()) {
    error = ErrorResponse(v);
    return json();
  }
  return std::move(*parsed);
}

json Answer(json body, std::string_view now) {
  body["metadata"] = {{"creationTimestamp", now}};
  return body;
}

}  // namespace

bool PodSpecNames(const json& spec, std::string_view resource, std::string_view name) {
  const bool secrets = resource == "secrets", config_maps = resource == "configmaps";
  if (secrets) {
    for (const json& ref : spec.value("imagePullSecrets", json::array())) {
      if (ref.is_object() && StringOf(ref, "name") == name) return true;
    }
  }
  if (secrets || config_maps) {
    const char* key_ref = secrets ? "secretKeyRef" : "configMapKeyRef";
    const char* source_ref = secrets ? "secretRef" : "configMapRef";
    for (const char* list : {"containers", "initContainers"}) {
      for (const json& c : spec.value(list, json::array())) {
        if (!c.is_object()) continue;
        for (const json& e : c.value("env", json::array())) {
          if (StringOf(ObjectOf(ObjectOf(e, "valueFrom"), key_ref), "name") == name) return true;
        }
        for (const json& from : c.value("envFrom", json::array())) {
          if (StringOf(ObjectOf(from, source_ref), "name") == name) return true;
        }
      }
    }
  }
  for (const json& v : spec.value("volumes", json::array())) {
    if (secrets && StringOf(ObjectOf(v, "secret"), "secretName") == name) return true;
    if (config_maps && StringOf(ObjectOf(v, "configMap"), "name") == name) return true;
    if (resource == "persistentvolumeclaims" && StringOf(ObjectOf(v, "persistentVolumeClaim"), "claimName") == name) {
      return true;
    }
  }
  return false;
}

bool BoundToNode(Store& store, const RequestInfo& r, std::string_view node) {
  if (r.name.empty()) return false;
  if (r.resource == "pods") {
    auto pod = store.Get(ObjectKey{"/Pod", r.ns, r.name});
    return pod && StringOf(ObjectOf(pod->object, "spec"), "nodeName") == node;
  }
  auto pods = store.List("/Pod", r.ns);
  if (!pods) return false;
  for (const auto& pod : pods->items) {
    const json& spec = ObjectOf(pod.object, "spec");
    if (StringOf(spec, "nodeName") != node) continue;
    if (r.resource == "secrets" || r.resource == "configmaps" || r.resource == "persistentvolumeclaims") {
      if (PodSpecNames(spec, r.resource, r.name)) return true;
      continue;
    }
    const std::string sa = StringOf(spec, "serviceAccountName");
    if ((sa.empty() ? "default" : sa) == r.name) return true;
  }
  return false;
}

namespace {

json UserInfoJson(const UserInfo& user) {
  json info{{"username", user.name}, {"groups", user.groups}};
  if (!user.uid.empty()) info["uid"] = user.uid;
  if (!user.extra.empty()) info["extra"] = user.extra;
  return info;
}

}  // namespace

HttpResponse SelfSubjectAccessReview(const RequestAuthorizer& authorizer, Store& store, const UserInfo& user,
                                     const HttpRequest& request, std::string_view now) {
  std::optional<HttpResponse> error;
  const json body = ReviewBody(request, "authorization.k8s.io/SelfSubjectAccessReview", error);
  if (error) return std::move(*error);
  const json& spec = ObjectOf(body, "spec");
  // The request the review asks about, answered by the whole chain a real
  // request meets (system:masters, the node rules, RBAC).
  RequestInfo asked;
  if (spec.contains("resourceAttributes")) {
    const json& a = ObjectOf(spec, "resourceAttributes");
    asked.resource_request = true;
    asked.verb = StringOf(a, "verb");
    asked.api_group = StringOf(a, "group");
    asked.api_version = StringOf(a, "version");
    asked.resource = StringOf(a, "resource");
    asked.subresource = StringOf(a, "subresource");
    asked.ns = StringOf(a, "namespace");
    asked.name = StringOf(a, "name");
    asked.kind = asked.api_version.empty() ? FindKindByGroupResource(asked.api_group, asked.resource)
                                           : FindKindByResource(asked.api_group, asked.api_version, asked.resource);
  } else {
    const json& a = ObjectOf(spec, "nonResourceAttributes");
    asked.verb = StringOf(a, "verb");
    asked.path = StringOf(a, "path");
  }
  const AuthorizationDecision decision = authorizer.Authorize(user, asked);
  bool allowed = decision.allowed;
  if (allowed && decision.only_bound_to_node) allowed = BoundToNode(store, asked, decision.node);
  json answer = Answer(body, now);
  answer["status"] = {{"allowed", allowed}};
  if (allowed) {
    answer["status"]["reason"] = decision.reason == kGroupMasters ? "system:masters"
                                 : decision.reason == "node"      ? "allowed by the node rules"
                                                                  : "allowed by RBAC";
  }
  return Created(answer);
}

HttpResponse SelfSubjectRulesReview(const RequestAuthorizer& authorizer, const UserInfo& user,
                                    const HttpRequest& request, std::string_view now) {
  std::optional<HttpResponse> error;
  const json body = ReviewBody(request, "authorization.k8s.io/SelfSubjectRulesReview", error);
  if (error) return std::move(*error);
  const std::string ns = StringOf(ObjectOf(body, "spec"), "namespace");
  std::vector<PolicyRule> rules = authorizer.rbac().RulesFor(user, ns);
  if (user.InGroup(kGroupMasters)) {
    rules.push_back(PolicyRule{.verbs = {"*"}, .api_groups = {"*"}, .resources = {"*"}});
    rules.push_back(PolicyRule{.verbs = {"*"}, .non_resource_urls = {"*"}});
  }
  json resource_rules = json::array(), non_resource_rules = json::array();
  for (const PolicyRule& r : rules) {
    if (!r.non_resource_urls.empty()) {
      non_resource_rules.push_back({{"verbs", r.verbs}, {"nonResourceURLs", r.non_resource_urls}});
    }
    if (!r.resources.empty()) {
      json rule{{"verbs", r.verbs}, {"apiGroups", r.api_groups}, {"resources", r.resources}};
      if (!r.resource_names.empty()) rule["resourceNames"] = r.resource_names;
      resource_rules.push_back(std::move(rule));
    }
  }
  json answer = Answer(body, now);
  answer["status"] = {{"resourceRules", std::move(resource_rules)},
                      {"nonResourceRules", std::move(non_resource_rules)},
                      {"incomplete", false}};
  return Created(answer);
}

HttpResponse SelfSubjectReview(const UserInfo& user, const HttpRequest& request, std::string_view now) {
  json body = json{{"apiVersion", "authentication.k8s.io/v1"}, {"kind", "SelfSubjectReview"}};
  if (!request.body.empty()) {
    std::optional<HttpResponse> error;
    body = ReviewBody(request, "authentication.k8s.io/SelfSubjectReview", error);
    if (error) return std::move(*error);
  }
  json answer = Answer(std::move(body), now);
  answer["status"] = {{"userInfo", UserInfoJson(user)}};
  return Created(answer);
}

// The TokenRequest sent (an empty one when the body is empty) into `body`, its
// spec an object; or the 400 or 422 that says what is wrong with it.
std::optional<HttpResponse> ReadTokenRequest(const HttpRequest& http, json& body) {
  body = json{{"apiVersion", "authentication.k8s.io/v1"}, {"kind", "TokenRequest"}, {"spec", json::object()}};
  if (!http.body.empty()) {
    auto parsed = ParseSingleObject(http.body);
    if (!parsed) return StatusResponse(400, "BadRequest", parsed.error().message());
    if (Status v = ValidateTokenRequest(*parsed); !v.ok()) return ErrorResponse(v);
    body = std::move(*parsed);
  }
  if (!body["spec"].is_object()) body["spec"] = json::object();
  return std::nullopt;
}

// The answer to a TokenRequest: what was asked, as granted, with the token.
HttpResponse IssuedTokenResponse(json body, json metadata, std::vector<std::string> audiences,
                                 const IssuedToken& issued, Timestamp now) {
  const Timestamp second = Timestamp::FromSeconds(now.seconds());
  json& spec = body["spec"];
  spec["audiences"] = std::move(audiences);
  spec["expirationSeconds"] = (issued.expires - second).seconds();
  metadata["creationTimestamp"] = FormatRfc3339(second);
  body["metadata"] = std::move(metadata);
  body["status"] = {{"token", issued.token}, {"expirationTimestamp", FormatRfc3339(issued.expires)}};
  return Created(body);
}

HttpResponse AnswerServiceAccountToken(Store& store, const TokenIssuer& issuer, const RequestInfo& r,
                                        const HttpRequest& http, std::string_view node, Timestamp now) {
  json body;
  if (auto error = ReadTokenRequest(http, body)) return std::move(*error);
  const KindInfo& sa_kind = *FindKindByStoreKey("/ServiceAccount");
  auto sa = store.Get(ObjectKey{"/ServiceAccount", r.ns, r.name});
  if (!sa) return ObjectErrorResponse(sa.error(), sa_kind, r.name);
  ServiceAccountTokenRequest request{.ns = r.ns, .name = r.name,
                                     .uid = StringOf(ObjectOf(sa->object, "metadata"), "uid")};
  json& spec = body["spec"];
  if (auto a = spec.find("audiences"); a != spec.end() && a->is_array()) {
    for (const json& audience : *a) request.audiences.push_back(audience.get<std::string>());
  }
  if (auto e = spec.find("expirationSeconds"); e != spec.end() && e->is_number_integer()) {
    request.expiration = Duration::Seconds(e->get<int64_t>());
  }
  const json& bound = ObjectOf(spec, "boundObjectRef");
  if (!bound.empty()) {
    if (StringOf(bound, "kind") != "Pod") {
      return StatusResponse(422, "Invalid",
                            "spec.boundObjectRef.kind: Unsupported value: only Pod is supported here (tokens bound "
                            "to a Secret or Node are not)");
    }
    const std::string pod_name = StringOf(bound, "name");
    auto pod = store.Get(ObjectKey{"/Pod", r.ns, pod_name});
    if (!pod) return ObjectErrorResponse(pod.error(), *FindKindByStoreKey("/Pod"), pod_name);
    const std::string pod_uid = StringOf(ObjectOf(pod->object, "metadata"), "uid");
    if (const std::string want = StringOf(bound, "uid"); !want.empty() && want != pod_uid) {
      return StatusResponse(409, "Conflict",
                            fmt::format("the UID in the bound object reference ({}) does not match the UID in record "
                                        "({}). The object might have been deleted and then recreated",
                                        want, pod_uid));
    }
    const json& pod_spec = ObjectOf(pod->object, "spec");
    std::string pod_sa = StringOf(pod_spec, "serviceAccountName");
    if (pod_sa.empty()) pod_sa = "default";
    if (!node.empty()) {
      // The node rules first (kube-apiserver's Node authorizer refuses before
      // admission looks at the body): its own pod's own ServiceAccount only.
      if (StringOf(pod_spec, "nodeName") != node || pod_sa != r.name) {
        return ForbiddenResponse(UserInfo{.name = NodeUserName(node)}, r,
                                 fmt::format("node \"{}\" may request tokens only for pods bound to it, for their own "
                                             "service account",
                                             node));
      }
    }
    if (pod_sa != r.name) {
      // kube-apiserver's words: a token bound to a pod is that pod's identity.
      return StatusResponse(400, "BadRequest",
                            fmt::format("cannot bind token for serviceaccount \"{}\" to pod running with different "
                                        "serviceaccount name.",
                                        r.name));
    }
    request.pod = BoundPod{.name = pod_name, .uid = pod_uid};
    spec["boundObjectRef"]["uid"] = pod_uid;
    spec["boundObjectRef"]["apiVersion"] = "v1";
  } else if (!node.empty()) {
    return ForbiddenResponse(UserInfo{.name = NodeUserName(node)}, r,
                             "a node may request only tokens bound to one of its pods (spec.boundObjectRef)");
  }
  auto issued = issuer.IssueServiceAccount(request, now);
  if (!issued) return ErrorResponse(issued.error());
  std::vector<std::string> audiences = request.audiences.empty() ? issuer.api_audiences() : request.audiences;
  return IssuedTokenResponse(std::move(body), {{"name", r.name}, {"namespace", r.ns}}, std::move(audiences), *issued,
                             now);
}

HttpResponse AnswerNodeToken(const TokenIssuer& issuer, const RequestInfo& r, const HttpRequest& http, Timestamp now) {
  json body;
  if (auto error = ReadTokenRequest(http, body)) return std::move(*error);
  if (Status v = ValidateName(NameRule::kDns1123Subdomain, r.name); !v.ok()) {
    return StatusResponse(422, "Invalid", fmt::format("metadata.name: {}", v.message()));
  }
  json& spec = body["spec"];
  Duration expiration = kNodeTokenExpiration;
  if (auto e = spec.find("expirationSeconds"); e != spec.end() && e->is_number_integer()) {
    expiration = Duration::Seconds(e->get<int64_t>());
  }
  auto issued = issuer.IssueNode(r.name, expiration, now);
  if (!issued) return ErrorResponse(issued.error());
  return IssuedTokenResponse(std::move(body), {{"name", r.name}}, issuer.api_audiences(), *issued, now);
}

HttpResponse OpenIdConfiguration(const TokenIssuer& issuer, std::string_view server_url) {
  HttpResponse r;
  r.body = issuer.DiscoveryDocument(server_url).dump();
  return r;
}

HttpResponse OpenIdKeys(const TokenIssuer& issuer) {
  HttpResponse r;
  r.content_type = "application/jwk-set+json";
  r.body = issuer.public_keys().ToJwks().dump();
  return r;
}

}  // namespace tessera
