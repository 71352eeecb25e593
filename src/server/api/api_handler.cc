#include "server/api/api_handler.h"
#include "server/api/node_authorizer.h"

#include <boost/asio/post.hpp>

#include <fmt/chrono.h>
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <cctype>
#include <chrono>

#include "api/kinds.h"
#include "api/manifest.h"
#include "api/defaults.h"
#include "api/managed_fields.h"
#include "api/openapi.h"
#include "api/service.h"
#include "api/strategic_merge_patch.h"
#include "api/validation.h"
#include "common/time_format.h"
#include "common/uuid.h"
#include "server/api/approval_handler.h"
#include "server/api/auth_endpoints.h"
#include "server/api/discovery.h"
#include "server/api/protobuf_body.h"
#include "server/api/scale_subresource.h"
#include "server/api/table_output.h"
#include "server/api/scheduling_review.h"
#include "server/api/simulation_review.h"
#include "server/api/list_paging.h"
#include "server/metrics_registry.h"
#include "server/object_json.h"
#include "server/api/pod_exec.h"
#include "server/api/pod_logs.h"
#include "server/api/pod_security_admission.h"
#include "server/api/notebook_wake.h"
#include "server/api/port_forward.h"
#include "server/api/proxy.h"
#include "server/api/template_render.h"
#include "server/api/proxy_login.h"

namespace tessera {

struct ApiHandler::Call {
  const HttpRequest& http;
  RequestInfo info;
  UserInfo user;
  AuthorizationDecision decision;
  Timestamp received;
  std::vector<std::pair<std::string, std::string>> audit_annotations;
  std::string created_name;  // a create's object (the audit record names it)
  bool dry_run = false;      // ?dryRun=All: checked and answered, not written
  std::vector<std::string> warnings;  // sent as Warning headers, which kubectl prints
};

namespace {

// Every Namespace carries kubernetes.io/metadata.name: NAME, set by the server
// on create and update as Kubernetes does, so that selectors (a ClusterQueue's
// or a NetworkPolicy's namespaceSelector) can pick namespaces by name.
void SetNamespaceNameLabel(nlohmann::json& ns) {
  nlohmann::json& meta = ns["metadata"];
  if (!meta["labels"].is_object()) meta["labels"] = nlohmann::json::object();
  meta["labels"][std::string(kNamespaceNameLabel)] = meta.value("name", "");
}

using nlohmann::json;

constexpr int kConflictRetries = 5;

HttpResponse Json(int code, const json& body) {
  HttpResponse r;
  r.status = code;
  r.body = body.dump(-1, ' ', false, json::error_handler_t::replace);
  return r;
}

int64_t ParseRevision(const json& obj) {
  auto meta = obj.find("metadata");
  if (meta == obj.end() || !meta->is_object()) return 0;
  auto rv = meta->find("resourceVersion");
  if (rv == meta->end() || !rv->is_string()) return 0;
  try {
    return std::stoll(rv->get<std::string>());
  } catch (const std::exception&) {
    return -1;
  }
}

// The body's format from its Content-Type; sniffed when absent.
ManifestFormat BodyFormat(const HttpRequest& req) {
  const std::string type = req.Header("content-type");
  if (type.find("yaml") != std::string::npos) return ManifestFormat::kYaml;
  if (type.find("json") != std::string::npos) return ManifestFormat::kJson;
  return ManifestFormat::kAuto;
}

// What a group/version serves, or which group/versions there are, for the 404
// of a path naming an unknown resource.
std::string ServedResources(std::string_view group, std::string_view version) {
  std::vector<std::string_view> plurals, api_versions;
  for (const KindInfo& k : AllKinds()) {
    if (k.group == group && k.version == version) plurals.push_back(k.plural);
    if (std::find(api_versions.begin(), api_versions.end(), k.api_version) == api_versions.end()) {
      api_versions.push_back(k.api_version);
    }
  }
  if (!plurals.empty()) return fmt::format("it serves {}", fmt::join(plurals, ", "));
  return fmt::format("the API groups are {}", fmt::join(api_versions, ", "));
}

// "application/merge-patch+json" of "Application/Merge-Patch+JSON; charset=utf-8".
std::string MediaTypeOf(std::string_view content_type) {
  std::string type(content_type.substr(0, content_type.find(';')));
  while (!type.empty() && type.back() == ' ') type.pop_back();
  for (char& c : type) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return type;
}

// The subresources a kind answers to (discovery.h), and the proxy's login.
bool ServesSubresource(const KindInfo& kind, std::string_view subresource) {
  if (subresource.empty()) return true;
  if (subresource == kProxyLoginSubresource) return kind.store_key == "/Pod" || kind.store_key == "/Service";
  return std::ranges::any_of(SubresourcesOf(kind), [&](const Subresource& s) { return s.name == subresource; });
}

UserInfo Anonymous() {
  return UserInfo{.name = std::string(kUserAnonymous), .groups = {std::string(kGroupUnauthenticated)}};
}

UuidGenerator& AuditIds() {
  static UuidGenerator ids;
  return ids;
}

std::string NameInBody(const std::string& body) {
  auto parsed = ParseSingleObject(body);
  if (!parsed || !parsed->is_object()) return "";
  auto meta = parsed->find("metadata");
  if (meta == parsed->end() || !meta->is_object()) return "";
  return std::string(StringField(*meta, "name"));
}

// The server's own annotations on an update: who created the object as the
// stored one says (never what a client sent), and a Namespace's uid range
// unless an admin sets another.
void KeepServerAnnotations(json& next, const json& current, bool masters) {
  const json* annotations = nullptr;
  if (auto meta = current.find("metadata"); meta != current.end() && meta->is_object()) {
    if (auto a = meta->find("annotations"); a != meta->end() && a->is_object()) annotations = &*a;
  }
  json& meta = next["metadata"];
  for (std::string_view annotation : kServerAnnotations) {
    const std::string key(annotation);
    const bool sent = meta.contains("annotations") && meta["annotations"].is_object() && meta["annotations"].contains(key);
    if (masters && annotation == kUidRangeAnnotation && sent) continue;
    auto stored = annotations ? annotations->find(key) : json::const_iterator();
    if (annotations && stored != annotations->end()) {
      meta["annotations"][key] = *stored;
    } else if (sent) {
      meta["annotations"].erase(key);
      if (meta["annotations"].empty()) meta.erase("annotations");
    }
  }
}

// A node's agent acting on a pod: only on one bound to it.
bool BoundToNode(const json& pod, std::string_view node) { return StringAt(pod, {"spec", "nodeName"}) == node; }

}  // namespace

std::string Rfc3339Now() { return FormatRfc3339(Timestamp::FromMillis(SystemNow().ms / 1000 * 1000)); }

ApiHandler::ApiHandler(Store& store, WatchHub& watches, ApiSecurity security, WallClock clock)
    : store_(store),
      watches_(watches),
      security_(security),
      authorizer_(security.auth->rbac()),
      rate_(security.rate),
      clock_(std::move(clock)) {}

ApiHandler::~ApiHandler() {
  slow_auth_.stop();  // what it has not started is never answered: the HTTP server has stopped
  slow_auth_.join();
  simulations_.stop();
  simulations_.join();
  WaitForPendingWrites();
}

void ApiHandler::WaitForPendingWrites() {
  std::unique_lock lock(pending_mu_);
  pending_cv_.wait(lock, [this] { return pending_writes_.load() == 0; });
}

void ApiHandler::Written() {
  watches_.Notify();
  if (on_write_) on_write_();
}

void ApiHandler::WrittenObject(const StoredObject& object) {
  if (AuthState::Follows(object.key.kind)) security_.auth->Apply(object);
  Written();
}

HttpResponse ApiHandler::Handle(const HttpRequest& req) {
  if (req.path == "/healthz" || req.path == "/readyz" || req.path == "/livez") {
    HttpResponse r;
    r.content_type = "text/plain";
    r.body = "ok";
    return r;
  }
  if (req.path == "/metrics" && metrics_ && !metrics_need_token_) return Metrics();
  return Serve(req, /*may_block=*/false);
}

HttpResponse ApiHandler::Metrics() const {
  HttpResponse r;
  r.content_type = kPrometheusContentType;
  r.body = metrics_();
  return r;
}

HttpResponse ApiHandler::Serve(const HttpRequest& req, bool may_block) {
  // The reviews kubectl sends as protobuf are read as the JSON they encode.
  if (!req.body.empty() && MediaTypeOf(req.Header("content-type")) == kProtobufMediaType) {
    if (auto decoded = ProtobufBodyToJson(req.body)) {
      HttpRequest as_json = req;
      as_json.body = decoded->dump(-1, ' ', false, json::error_handler_t::replace);
      as_json.headers["content-type"] = "application/json";
      return Serve(as_json, may_block);
    }
  }
  const Timestamp received = SystemNow();
  Call call{.http = req, .info = ParseRequestInfo(req), .received = received};
  const std::string auth = req.Header("authorization");
  const std::string_view token = auth.rfind("Bearer ", 0) == 0 ? std::string_view(auth).substr(7) : std::string_view();
  // A browser on a proxy path: a login code to trade for a session cookie,
  // or that cookie (proxy_login.h); never on any other path.
  const bool proxied = IsProxyRequest(call.info);
  if (proxied && req.query.contains(std::string(kProxyLoginQuery))) {
    UserInfo user = Anonymous();
    HttpResponse answer = RedeemProxyLogin(proxy_logins_, *security_.issuer, call.info, req, received,
                                           req.tls || server_url_.starts_with("https://"), user);
    call.user = std::move(user);
    const bool refused = answer.status != 303;
    return Finish(call, std::move(answer), refused);
  }
  Result<UserInfo> who = Err(Status::NotFound("no session"));
  bool by_session = false;
  if (token.empty() && proxied) {
    who = SessionUser(*security_.issuer, call.info, req, received);
    by_session = who.has_value() || who.error().code() != StatusCode::kNotFound;
  }
  if (!by_session) who = security_.authenticator->Authenticate(token, received, may_block);
  if (!who && who.error().code() == StatusCode::kUnavailable && !may_block) {
    // The identity provider must be asked first: on the worker, and answered from there.
    HttpResponse later;
    later.deferred = [this, copy = req](std::function<void(HttpResponse)> respond) mutable {
      boost::asio::post(slow_auth_, [this, copy = std::move(copy), respond = std::move(respond)] {
        respond(Serve(copy, /*may_block=*/true));
      });
    };
    return later;
  }
  if (!who) {
    call.user = Anonymous();
    return Finish(call, ErrorResponse(who.error()), /*refused=*/true);
  }
  call.user = std::move(*who);
  if (!rate_.Admit(call.user, received)) {
    HttpResponse r = StatusResponse(
        429, "TooManyRequests",
        fmt::format("too many requests from user \"{}\": each user may send {} a second ({} at once); retry after 1s",
                    call.user.name, rate_.limit().per_second, rate_.limit().burst),
        json{{"retryAfterSeconds", 1}});
    r.headers.emplace_back("Retry-After", "1");
    return Finish(call, std::move(r), /*refused=*/true);
  }
  const std::string field_selector = req.Query("fieldSelector");  // the facts hold views into it
  NodeRequestFacts facts{.field_selector = field_selector};
  std::string body_name;
  if (call.info.verb == "create" && call.user.InGroup(kGroupNodes)) {
    body_name = NameInBody(req.body);
    facts.body_name = body_name;
  }
  // A proxy login is for whoever may get that proxy.
  RequestInfo asked = call.info;
  if (IsProxyLoginRequest(asked)) {
    asked.subresource = "proxy";
    asked.verb = "get";
  }
  call.decision = authorizer_.Authorize(call.user, asked, facts);
  if (!call.decision.allowed) return Finish(call, ForbiddenResponse(call.user, asked), /*refused=*/true);
  if (req.path == "/metrics" && metrics_) return Metrics();
  return Finish(call, Dispatch(call));
}

bool ApiHandler::Audited(const Call& call, bool refused) const {
  return security_.audit != nullptr &&
         (refused || (call.info.mutating() && (call.info.kind == nullptr || call.info.kind->stored)));
}

HttpResponse ApiHandler::Finish(const Call& call, HttpResponse response, bool refused) {
  if (!call.warnings.empty()) {
    // RFC 7234's form, as kube-apiserver sends them: 299 - "text".
    std::vector<std::pair<std::string, std::string>> headers;
    for (const std::string& warning : call.warnings) {
      headers.emplace_back("Warning", fmt::format("299 - {}", json(warning).dump()));
    }
    if (response.deferred) {
      response.deferred = [deferred = std::move(response.deferred), headers](std::function<void(HttpResponse)> respond) {
        deferred([respond = std::move(respond), headers](HttpResponse answer) {
          answer.headers.insert(answer.headers.end(), headers.begin(), headers.end());
          respond(std::move(answer));
        });
      };
    } else {
      response.headers.insert(response.headers.end(), headers.begin(), headers.end());
    }
  }
  // A proxied request is recorded when the backend answers (Proxy).
  if (!Audited(call, refused) || response.upgrade) return response;
  AuditEvent event = StartAudit(call);
  if (!response.deferred) {
    CompleteAudit(std::move(event), response);
    return response;
  }
  // A create answered later, when the request may be gone: what the record
  // needs of it is in `event` already.
  auto deferred = std::move(response.deferred);
  response.deferred = [this, deferred = std::move(deferred), event = std::move(event)](
                          std::function<void(HttpResponse)> respond) mutable {
    deferred([this, event = std::move(event), respond = std::move(respond)](HttpResponse answer) mutable {
      CompleteAudit(std::move(event), answer);
      respond(std::move(answer));
    });
  };
  return response;
}

AuditEvent ApiHandler::StartAudit(const Call& call) const {
  const RequestInfo& r = call.info;
  AuditEvent e{.audit_id = AuditIds().Next(),  // only for what is audited: a UUID costs a lock and a draw
               .request_uri = call.http.path,
               .verb = r.verb,
               .user = call.user,
               .user_agent = call.http.Header("user-agent"),
               .received = call.received};
  char separator = '?';
  for (const auto& [k, v] : call.http.query) {
    e.request_uri += fmt::format("{}{}={}", separator, k, v);
    separator = '&';
  }
  if (const auto colon = call.http.remote.rfind(':'); colon != std::string::npos) {
    e.source_ips.push_back(call.http.remote.substr(0, colon));
  }
  if (r.resource_request) {
    e.resource = r.resource;
    e.ns = r.ns;
    e.name = r.name.empty() ? call.created_name : r.name;
    e.api_group = r.api_group;
    e.api_version = r.api_version;
    e.subresource = r.subresource;
  }
  if (!call.decision.reason.empty() || !call.decision.allowed) {
    e.annotations.emplace_back("authorization.k8s.io/decision", call.decision.allowed ? "allow" : "forbid");
    e.annotations.emplace_back("authorization.k8s.io/reason", call.decision.reason);
  }
  for (const auto& a : call.audit_annotations) e.annotations.push_back(a);
  return e;
}

void ApiHandler::CompleteAudit(AuditEvent e, const HttpResponse& response) {
  e.code = response.status;
  e.completed = SystemNow();
  if (response.status >= 400) {
    const json status = json::parse(response.body, nullptr, false);
    if (status.is_object()) {
      e.status_reason = std::string(StringField(status, "reason"));
      e.status_message = std::string(StringField(status, "message"));
    }
  }
  security_.audit->Record(std::move(e));
}

ProxyAnswered ApiHandler::AuditWhenAnswered(Call& call) {
  if (!Audited(call, /*refused=*/false)) return nullptr;
  // The record is made when the backend answers, after the request is gone.
  return [this, event = StartAudit(call)](int status, const std::string& error) mutable {
    HttpResponse answer;
    answer.status = status;
    if (!error.empty()) answer.body = ProxyStatusJson(status, "ServiceUnavailable", error);
    CompleteAudit(std::move(event), answer);
  };
}

HttpResponse ApiHandler::Proxy(Call& call) {
  ProxyAnswered answered = AuditWhenAnswered(call);
  {
    auto backend = ResolveProxyBackend(store_, call.info);
    auto* refused = std::get_if<HttpResponse>(&backend);
    // A notebook's Service: a suspended notebook resumes, a starting one says so.
    if (auto starting = NotebookNotServing(store_, authorizer_, call.user, call.info, call.http,
                                           refused != nullptr && refused->status == 503, [this] { Written(); })) {
      return std::move(*starting);
    }
  }
  return ProxyResponse(store_, call.info, call.http, std::move(answered), traffic_);
}

HttpResponse ApiHandler::Exec(Call& call) {
  // As a proxied request: recorded when the agent has answered the upgrade.
  ProxyAnswered answered = AuditWhenAnswered(call);
  return PodExecResponse(store_, *security_.issuer, call.info.ns, call.info.name, call.http, std::move(answered));
}

HttpResponse ApiHandler::NonResource(Call& call) {
  const std::string& path = call.http.path;
  if (call.http.method == "GET" && path == "/.well-known/openid-configuration") {
    return OpenIdConfiguration(*security_.issuer, server_url_);
  }
  if (call.http.method == "GET" && path == "/openid/v1/jwks") return OpenIdKeys(*security_.issuer);
  if (auto discovery = DiscoveryResponse(call.http.method, path, call.http.Header("accept"))) return std::move(*discovery);
  if (call.http.method == "GET" && (path == "/openapi/v3" || path == "/openapi/v3/")) {
    HttpResponse r;
    r.body = OpenApiIndex();
    return r;
  }
  if (call.http.method == "GET" && path.starts_with("/openapi/v3/")) {
    const std::string_view gv = std::string_view(path).substr(std::string_view("/openapi/v3/").size());
    if (const std::string* doc = OpenApiDocument(gv)) {
      const std::string hash = OpenApiHash(gv);
      const std::string asked = call.http.Query("hash");
      HttpResponse r;
      if (!asked.empty() && asked != hash) {
        // As kube-apiserver: an old hash is sent to the current version.
        r.status = 301;
        r.headers.emplace_back("Location", fmt::format("{}?hash={}", path, hash));
        return r;
      }
      r.body = *doc;
      // Only a URL with the hash names this version for good.
      r.headers.emplace_back("Cache-Control", asked.empty() ? "no-cache, private" : "public, immutable");
      return r;
    }
  }
  if (path == "/api" || path.starts_with("/api/") || path == "/apis" || path.starts_with("/apis/")) {
    return StatusResponse(404, "NotFound",
                          fmt::format("{} names no resource; paths look like /api/v1/namespaces/NS/pods or "
                                      "/apis/GROUP/VERSION/namespaces/NS/PLURAL",
                                      path));
  }
  return StatusResponse(404, "NotFound",
                        fmt::format("no API at {}; paths look like /api/v1/namespaces/NS/pods or "
                                    "/apis/GROUP/VERSION/namespaces/NS/PLURAL",
                                    path));
}

HttpResponse ApiHandler::Dispatch(Call& call) {
  const RequestInfo& r = call.info;
  const HttpRequest& req = call.http;
  if (!r.resource_request) return NonResource(call);
  if (r.resource.empty()) return StatusResponse(404, "NotFound", fmt::format("{}: no such resource path", req.path));
  if (r.kind == nullptr) {
    return StatusResponse(404, "NotFound",
                          fmt::format("the server does not serve {} in {}/{}; {}", r.resource,
                                      r.api_group.empty() ? "core" : r.api_group, r.api_version,
                                      ServedResources(r.api_group, r.api_version)));
  }
  // What Serve could not read as protobuf (protobuf_body.h).
  if (!req.body.empty() && MediaTypeOf(req.Header("content-type")) == kProtobufMediaType) {
    return StatusResponse(415, "UnsupportedMediaType",
                          "the body of the request was in an unknown format - accepted media types include: "
                          "application/json, application/yaml");
  }
  if (req.query.contains("dryRun")) {
    const std::string dry = req.Query("dryRun");
    if (dry != "All") {
      return StatusResponse(400, "BadRequest",
                            fmt::format("dryRun: Unsupported value: \"{}\": supported values: \"All\"", dry));
    }
    // Never a write a client asked not to make: only creates are dry-run here.
    if (req.method != "POST" || !r.subresource.empty()) {
      return StatusResponse(400, "BadRequest",
                            fmt::format("dryRun=All is served for creates (POST to a collection) only; {} {} would "
                                        "change the object: send it without dryRun, or create it with dryRun to check it",
                                        req.method, req.path));
    }
    call.dry_run = true;
  }
  if (!ServesSubresource(*r.kind, r.subresource)) {
    return StatusResponse(404, "NotFound", fmt::format("{}: unknown subresource", req.path));
  }
  if (!r.kind->namespaced && r.namespace_in_path) {
    return StatusResponse(404, "NotFound",
                          fmt::format("{} is cluster-scoped: drop /namespaces/{} from the path", r.kind->kind, r.ns));
  }
  const std::string_view key = r.kind->store_key;
  if (!r.kind->stored) {
    if (req.method != "POST" || !r.name.empty()) {
      return StatusResponse(405, "MethodNotAllowed",
                            fmt::format("{} are only created (POST to {}); they are answered, not stored",
                                        r.kind->plural, req.path));
    }
    const std::string now = clock_();
    if (key == "authorization.k8s.io/SelfSubjectAccessReview") {
      return SelfSubjectAccessReview(authorizer_, store_, call.user, req, now);
    }
    if (key == "authorization.k8s.io/SelfSubjectRulesReview") return SelfSubjectRulesReview(authorizer_, call.user, req, now);
    if (key == "tessera.dev/SchedulingReview") return AnswerSchedulingReview(forecaster_, r, req, now);
    if (key == "tessera.dev/SimulationReview") {
      HttpResponse later;
      later.deferred = [this, copy = req, kind = r.kind, now](std::function<void(HttpResponse)> respond) mutable {
        boost::asio::post(simulations_, [this, copy = std::move(copy), kind, now, respond = std::move(respond)] {
          auto at = ParseRfc3339(now);
          respond(AnswerSimulationReview(store_, *kind, copy, now, at ? *at : SystemNow()));
        });
      };
      return later;
    }
    return SelfSubjectReview(call.user, req, now);
  }
  if (r.subresource == "log") {
    if (req.method != "GET") return StatusResponse(405, "MethodNotAllowed", "pod logs are read with GET");
    return PodLogResponse(store_, *security_.issuer, r.ns, r.name, req);
  }
  if (r.subresource == "proxy") return Proxy(call);
  if (r.subresource == "render") return AnswerTemplateRender(store_, r, req);
  if (r.subresource == "portforward") return PortForwardResponse(store_, r, req);
  if (r.subresource == kProxyLoginSubresource) {
    return AnswerProxyLogin(proxy_logins_, call.user, r, req, call.received);
  }
  if (r.subresource == "exec") {
    if (req.method != "GET" && req.method != "POST") {
      return StatusResponse(405, "MethodNotAllowed", "exec is a WebSocket upgrade of GET (or POST)");
    }
    return Exec(call);
  }
  if (r.subresource == "token") {
    if (req.method != "POST") return StatusResponse(405, "MethodNotAllowed", "tokens are requested with POST");
    if (key == "/Node") return AnswerNodeToken(*security_.issuer, r, req, call.received);
    return AnswerServiceAccountToken(store_, *security_.issuer, r, req,
                                      call.decision.only_bound_to_node ? call.decision.node : "", call.received);
  }
  if (r.subresource == "scale") return Scale(call);
  if (r.subresource == "approval") {
    if (req.method == "GET") return Get(call);  // the request, as a subresource shows its object
    if (req.method != "PUT" && req.method != "PATCH") {
      return StatusResponse(405, "MethodNotAllowed", "approvals are given with PUT or PATCH (tessera approve NAME)");
    }
    std::string decision;
    HttpResponse answer = AnswerApproval(store_, call.user, r, req, call.received, &decision);
    if (answer.status == 200) {
      call.audit_annotations.emplace_back("tessera.dev/approval", decision);
      Written();
    }
    return answer;
  }
  if (req.method == "GET") {
    if (r.verb == "get") return Get(call);
    if (r.verb == "watch") return Watch(call);
    return List(call);
  }
  if (req.method == "POST" && r.name.empty()) return Create(call);
  if (req.method == "PUT" && !r.name.empty()) return Update(call);
  if (req.method == "PATCH" && !r.name.empty()) return Patch(call);
  if (req.method == "DELETE" && !r.name.empty()) return Delete(call);
  return StatusResponse(405, "MethodNotAllowed", fmt::format("{} is not allowed on {}", req.method, req.path));
}

std::optional<HttpResponse> ApiHandler::EscalationError(const Call& call, const json& object) const {
  Status s = authorizer_.CheckNoEscalation(call.user, *call.info.kind, object);
  if (s.ok()) return std::nullopt;
  if (s.code() != StatusCode::kPermissionDenied) return ErrorResponse(s);
  return ForbiddenObjectResponse(*call.info.kind, StringAt(object, {"metadata", "name"}), s.message());
}

std::optional<HttpResponse> ApiHandler::NodeNameChangeError(const Call& call, const json& stored,
                                                             const json& next) const {
  if (call.info.kind->store_key != "/Pod" || call.user.InGroup(kGroupMasters)) return std::nullopt;
  const std::string_view node = StringAt(next, {"spec", "nodeName"});
  if (node.empty() || node == StringAt(stored, {"spec", "nodeName"})) return std::nullopt;
  // A pod with a node would run there at once, past queues and quota: only
  // the scheduler binds pods.
  return StatusResponse(422, "Invalid",
                        "spec.nodeName: Forbidden: only the scheduler binds pods to nodes; leave it empty, or "
                        "submit a Job (tessera submit) so that the pod is queued and admitted");
}

HttpResponse ApiHandler::Get(Call& call) {
  const RequestInfo& r = call.info;
  if (r.kind->namespaced && r.ns.empty()) {
    return StatusResponse(404, "NotFound", fmt::format("{} is namespaced: use /namespaces/NS/ in the path", r.kind->kind));
  }
  const bool named_by_pods = r.kind->store_key == "/Secret" || r.kind->store_key == "/ConfigMap" ||
                             r.kind->store_key == "/PersistentVolumeClaim";
  if (call.decision.only_bound_to_node && named_by_pods && !tessera::BoundToNode(store_, r, call.decision.node)) {
    // Asked before it is read: a node learns nothing of an object its pods do not name.
    return ForbiddenResponse(call.user, r,
                             fmt::format("no pod bound to node \"{}\" names {} \"{}\" (imagePullSecrets, env, envFrom or volumes)",
                                         call.decision.node, r.kind->singular, r.name));
  }
  auto table = TableAsked(call);
  if (!table) return StatusResponse(400, "BadRequest", table.error().message());
  auto got = store_.Get(r.Key());
  if (!got) return ObjectErrorResponse(got.error(), *r.kind, r.name);
  if (call.decision.only_bound_to_node && !named_by_pods &&
      !BoundToNode(got->object, call.decision.node)) {
    return ForbiddenResponse(call.user, r, fmt::format("the pod is not bound to node \"{}\"", call.decision.node));
  }
  if (*table) return Json(200, ObjectTable(*r.kind, got->object, **table));
  return Json(200, got->object);
}

// What a node's agent sees of the pods not bound to it (node_authorizer.h).
std::function<json(const json&)> ApiHandler::NodeProjection(const Call& call) const {
  if (!call.user.InGroup(kGroupNodes) || !call.user.name.starts_with(kNodeUserPrefix)) return {};
  const std::string node = call.user.name.substr(kNodeUserPrefix.size());
  if (!NodeSeesNetworkViewOnly(node, call.info, call.http.Query("fieldSelector"))) return {};
  return [](const json& pod) { return PodNetworkView(pod); };
}

HttpResponse ApiHandler::List(Call& call) {
  const RequestInfo& r = call.info;
  const HttpRequest& req = call.http;
  auto selector = LabelSelector::Parse(req.Query("labelSelector"));
  if (!selector) return StatusResponse(400, "BadRequest", selector.error().message());
  auto fields = FieldSelector::Parse(req.Query("fieldSelector"));
  if (!fields) return StatusResponse(400, "BadRequest", fields.error().message());
  auto limit = ParseListLimit(req.Query("limit"));
  if (!limit) return StatusResponse(400, "BadRequest", limit.error().message());
  std::optional<ContinueToken> after;
  if (const std::string text = req.Query("continue"); !text.empty()) {
    auto token = DecodeContinueToken(text);
    if (!token) return StatusResponse(400, "BadRequest", token.error().message());
    if (token->kind != r.kind->store_key || token->ns != r.ns) {
      return StatusResponse(400, "BadRequest",
                            "the continue token belongs to another list; send it with the same path it came with");
    }
    // The pages report the first page's revision for a watch to start from; once
    // the event log no longer reaches back to it, that watch is impossible.
    if (auto events = store_.EventsSince(token->revision, 1);
        !events && events.error().code() == StatusCode::kGone) {
      return StatusResponse(410, "Expired",
                            "The provided continue parameter is too old to display a consistent list result. You "
                            "can start a new list without the continue parameter.");
    }
    after = std::move(*token);
  }
  auto table = TableAsked(call);
  if (!table) return StatusResponse(400, "BadRequest", table.error().message());
  if (!after && *limit == 0 && selector->empty() && fields->empty() && !*table && !NodeProjection(call)) {
    return WholeList(*r.kind, r.ns);
  }
  auto list = store_.List(std::string(r.kind->store_key), r.ns);
  if (!list) return ErrorResponse(list.error());
  if (after && after->revision > list->revision) {
    return StatusResponse(400, "BadRequest", "the continue token names a revision this server has not reached");
  }
  const int64_t revision = after ? after->revision : list->revision;
  if (!fields->empty()) std::erase_if(list->items, [&](const StoredObject& o) { return !fields->Matches(o.object); });
  ListPage page = CutListPage(std::move(list->items), *selector, after, *limit, revision, r.kind->store_key, r.ns);
  if (const auto project = NodeProjection(call)) {
    for (json& item : page.items) item = project(item);
  }
  json metadata{{"resourceVersion", std::to_string(revision)}};
  if (page.next) {
    metadata["continue"] = EncodeContinueToken(*page.next);
    metadata["remainingItemCount"] = page.remaining;
  }
  if (*table) return Json(200, ObjectsTable(*r.kind, page.items, std::move(metadata), **table));
  return Json(200, json{{"apiVersion", std::string(r.kind->api_version)},
                        {"kind", std::string(r.kind->kind) + "List"},
                        {"metadata", std::move(metadata)},
                        {"items", std::move(page.items)}});
}

Result<std::optional<TableOptions>> ApiHandler::TableAsked(const Call& call) {
  std::optional<std::string> version = TableVersionAsked(call.http.Header("accept"));
  if (!version) return std::optional<TableOptions>();
  ASSIGN_OR_RETURN(std::string include, ParseIncludeObject(call.http.Query("includeObject")));
  TableOptions options{.version = std::move(*version),
                       .include_object = std::move(include),
                       .now = call.received.seconds()};
  if (call.info.kind->store_key == "kueue.x-k8s.io/Workload") options.default_priority = DefaultPriority();
  return std::optional<TableOptions>(std::move(options));
}

// The globalDefault PriorityClass's value (0: none), which a workload that
// names no class runs at.
int64_t ApiHandler::DefaultPriority() {
  auto classes = store_.List("scheduling.k8s.io/PriorityClass", "");
  if (!classes) return 0;
  for (const StoredObject& c : classes->items) {
    if (c.object.value("globalDefault", false) && c.object.contains("value") && c.object["value"].is_number_integer()) {
      return c.object["value"].get<int64_t>();
    }
  }
  return 0;
}

// Every object of a kind in a namespace, as stored: the documents are passed on
// as text, neither parsed nor encoded again (for 5,000 Workloads, 2.4 MB, that
// was most of the answer's time).
HttpResponse ApiHandler::WholeList(const KindInfo& kind, const std::string& ns) {
  auto list = store_.ListTexts(std::string(kind.store_key), ns);
  if (!list) return ErrorResponse(list.error());
  size_t size = 160;
  for (const std::string& text : list->texts) size += text.size() + 1;
  HttpResponse r;
  r.status = 200;
  r.body.reserve(size);
  r.body += json{{"apiVersion", std::string(kind.api_version)},
                 {"kind", std::string(kind.kind) + "List"},
                 {"metadata", {{"resourceVersion", std::to_string(list->revision)}}}}
                .dump();
  r.body.pop_back();  // the closing brace: the items follow
  r.body += R"(,"items":[)";
  for (size_t i = 0; i < list->texts.size(); ++i) {
    if (i > 0) r.body += ',';
    r.body += list->texts[i];
  }
  r.body += "]}";
  return r;
}

HttpResponse ApiHandler::Watch(Call& call) {
  const RequestInfo& r = call.info;
  const HttpRequest& req = call.http;
  auto selector = LabelSelector::Parse(req.Query("labelSelector"));
  if (!selector) return StatusResponse(400, "BadRequest", selector.error().message());
  auto fields = FieldSelector::Parse(req.Query("fieldSelector"));
  if (!fields) return StatusResponse(400, "BadRequest", fields.error().message());
  const std::string rv_text = req.Query("resourceVersion");
  int64_t from = 0;
  if (!rv_text.empty()) {
    try {
      from = std::stoll(rv_text);
    } catch (const std::exception&) {
      return StatusResponse(400, "BadRequest", fmt::format("resourceVersion \"{}\" is not a number", rv_text));
    }
  }
  auto table = TableAsked(call);
  if (!table) return StatusResponse(400, "BadRequest", table.error().message());
  // What the watcher sees of each object: a node's view of others' pods; a
  // one-row Table when kubectl asked for tables (`kubectl get -w`).
  std::function<json(const json&)> project = NodeProjection(call);
  if (*table) {
    project = [node_view = std::move(project), kind = r.kind, options = **table](const json& object) {
      TableOptions at_event = options;
      at_event.now = SystemNow().seconds();  // ages as of each event
      return ObjectTable(*kind, node_view ? node_view(object) : object, at_event);
    };
  }
  // resourceVersion unset or 0: the current objects as ADDED events, then changes.
  std::vector<std::string> initial;
  if (from == 0) {
    auto list = store_.List(std::string(r.kind->store_key), r.ns);
    if (!list) return ErrorResponse(list.error());
    for (StoredObject& o : list->items) {
      if (!selector->MatchesObject(o.object) || !fields->Matches(o.object)) continue;
      if (project) o.object = project(o.object);
      initial.push_back(WatchHub::EncodeEvent(StoreEvent{o.revision, EventType::kAdded, std::move(o)}));
    }
    from = list->revision;
  } else {
    // Fail before streaming when the revision is compacted away: the client relists.
    auto probe = store_.EventsSince(from, 1);
    if (!probe) return ErrorResponse(probe.error());
  }
  WatchFilter filter{.kind = std::string(r.kind->store_key),
                     .ns = r.ns,
                     .selector = std::move(*selector),
                     .fields = std::move(*fields),
                     .project = std::move(project)};
  HttpResponse resp;
  resp.content_type = "application/json";
  resp.stream = [this, filter = std::move(filter), from, initial = std::move(initial)](
                    std::shared_ptr<StreamSink> sink) mutable {
    for (std::string& e : initial) sink->Write(std::move(e));
    Status s = watches_.Subscribe(std::move(filter), from, sink);
    if (!s.ok()) {
      sink->Write(json{{"type", "ERROR"}, {"object", json::parse(ErrorResponse(s).body)}}.dump() + "\n");
      sink->Close();
    }
  };
  return resp;
}

Result<std::optional<uint32_t>> ApiHandler::AssignClusterIp(json& service) {
  DefaultService(service);
  json& spec = service["spec"];
  const std::string asked = spec.value("clusterIP", "");
  if (asked == kHeadlessClusterIp) return std::optional<uint32_t>();
  if (service_ips_ == nullptr) {
    return Err(Status::Internal("this server allocates no cluster IPs (no --service-cluster-ip-range)"));
  }
  uint32_t ip = 0;
  if (asked.empty()) {
    ASSIGN_OR_RETURN(ip, service_ips_->AllocateNext());
  } else {
    const std::optional<uint32_t> parsed = ParseIpv4Address(asked);
    if (!parsed) return Err(Status::InvalidArgument(fmt::format("spec.clusterIP: Invalid value: \"{}\"", asked)));
    RETURN_IF_ERROR(service_ips_->Allocate(*parsed));
    ip = *parsed;
  }
  spec["clusterIP"] = FormatIpv4(ip);
  spec["clusterIPs"] = json::array({FormatIpv4(ip)});
  return std::optional<uint32_t>(ip);
}

HttpResponse ApiHandler::Create(Call& call) {
  const RequestInfo& r = call.info;
  const HttpRequest& req = call.http;
  auto parsed = ParseSingleObject(req.body, BodyFormat(req));
  if (!parsed) return StatusResponse(400, "BadRequest", parsed.error().message());
  json obj = std::move(*parsed);
  if (StringField(obj, "kind") != r.kind->kind || StringField(obj, "apiVersion") != r.kind->api_version) {
    return StatusResponse(400, "BadRequest",
                          fmt::format("the body is apiVersion \"{}\" kind \"{}\", but the path is for {} {}",
                                      StringField(obj, "apiVersion"), StringField(obj, "kind"), r.kind->api_version,
                                      r.kind->kind));
  }
  if (!obj.contains("metadata") || !obj["metadata"].is_object()) obj["metadata"] = json::object();
  DefaultObject(*r.kind, obj);
  json& meta = obj["metadata"];
  if (r.kind->namespaced) {
    if (r.ns.empty()) {
      return StatusResponse(400, "BadRequest",
                            fmt::format("{} is namespaced: POST to /namespaces/NS/{}", r.kind->kind, r.kind->plural));
    }
    const std::string body_ns(StringField(meta, "namespace"));
    if (!body_ns.empty() && body_ns != r.ns) {
      return StatusResponse(400, "BadRequest",
                            fmt::format("metadata.namespace is {} but the path is for namespace {}", body_ns, r.ns));
    }
    meta["namespace"] = r.ns;
  }
  std::optional<ObjectKey> ns_key;
  if (r.kind->namespaced) ns_key = ObjectKey{"/Namespace", "", r.ns};
  const KindInfo& ns_kind = *FindKindByStoreKey("/Namespace");
  if (auto refused = ApplyFieldValidation(call, obj)) return std::move(*refused);
  if (Status v = ValidateObject(*r.kind, obj); !v.ok()) {
    // A missing namespace is the first thing to fix, as before validation.
    if (ns_key) {
      if (auto ns = store_.Get(*ns_key); !ns) return ObjectErrorResponse(ns.error(), ns_kind, r.ns);
    }
    return InvalidObjectResponse(*r.kind, StringField(obj["metadata"], "name"), v);
  }
  if (auto refused = EscalationError(call, obj)) return std::move(*refused);
  const bool masters = call.user.InGroup(kGroupMasters);
  if (auto refused = NodeNameChangeError(call, json::object(), obj)) return std::move(*refused);
  // The namespace's pod security level (api/pod_security.h), for pods and pod templates.
  if (auto refused = PodSecurityAdmission(store_, *r.kind, obj)) return std::move(*refused);
  // What only the server writes (who made it, a namespace's uid block) is
  // not taken from a client's body (an admin may set the uid block).
  KeepServerAnnotations(obj, json::object(), masters);
  // Status is written by controllers and agents; on create only nodes (by
  // their agents) and pods made by an admin bring theirs.
  if (r.kind->kind != "Node" && !(r.kind->kind == "Pod" && masters)) obj.erase("status");
  if (r.kind->store_key == "/Namespace") obj["status"] = {{"phase", "Active"}};  // as kube-apiserver sets it
  // Last before the write, so that no refusal after it leaves an address held.
  std::optional<uint32_t> service_ip;
  if (r.kind->store_key == kServiceKind) {
    auto assigned = AssignClusterIp(obj);
    if (!assigned) {
      if (ns_key) {  // a missing namespace first, as for validation
        if (auto ns = store_.Get(*ns_key); !ns) return ObjectErrorResponse(ns.error(), ns_kind, r.ns);
      }
      return ErrorResponse(assigned.error());
    }
    service_ip = *assigned;
    obj["status"] = {{"loadBalancer", json::object()}};
  }
  if (r.kind->store_key == "/Namespace") SetNamespaceNameLabel(obj);
  if (!obj["metadata"].contains("managedFields")) TrackFields(call, json(), obj);  // an apply's own are kept
  meta.erase("resourceVersion");
  meta["creationTimestamp"] = clock_();
  meta["generation"] = 1;
  // Who made it, where no client can forge it (usage is reported by it).
  meta["annotations"][std::string(kCreatedByAnnotation)] = call.user.name;
  std::string name(StringField(meta, "name"));
  call.created_name = name;
  // A claim is bound at once and counted against its namespace's quotas (claim_admission.h).
  int64_t claim_bytes = -1;  // reserved until the store answers; -1: not a claim
  if (r.kind->store_key == "/PersistentVolumeClaim") {
    auto admitted = claims_.Admit(store_, obj);
    if (!admitted && admitted.error().code() == StatusCode::kPermissionDenied) {
      return ForbiddenObjectResponse(*r.kind, name, admitted.error().message());
    }
    if (!admitted) return ErrorResponse(admitted.error());
    claim_bytes = *admitted;
  }
  ObjectKey key{std::string(r.kind->store_key), r.ns, name};
  // ?dryRun=All (kubectl's --dry-run=server): every check a create makes, and the
  // object as it would be stored, but nothing is written or kept (the cluster IP
  // and the claim's reservation are given back at once).
  if (call.dry_run) {
    if (service_ip) service_ips_->Release(*service_ip);
    if (claim_bytes >= 0) claims_.Release(r.ns, claim_bytes);
    if (ns_key) {
      if (auto ns = store_.Get(*ns_key); !ns) return ObjectErrorResponse(ns.error(), ns_kind, r.ns);
    }
    if (auto existing = store_.Get(key); existing) {
      return ObjectErrorResponse(Status::AlreadyExists(fmt::format("{} already exists", name)), *r.kind, name);
    }
    HttpResponse dry;
    dry.status = 201;
    dry.body = obj.dump();
    return dry;
  }
  // The write waits in the store's queue to share a commit with others; the
  // I/O thread serves other connections meanwhile. The namespace must exist
  // when the object is written (checked in the same transaction).
  HttpResponse resp;
  resp.deferred = [this, key = std::move(key), obj = std::move(obj), ns_key = std::move(ns_key), kind = r.kind,
                   &ns_kind, service_ip, claim_bytes](std::function<void(HttpResponse)> respond) mutable {
    pending_writes_.fetch_add(1);
    store_.CreateAsync(key, std::move(obj), std::move(ns_key),
                       [this, kind, &ns_kind, key, service_ip, claim_bytes, respond = std::move(respond)](
                           Result<int64_t> created, std::string_view text) {
                         if (claim_bytes >= 0) claims_.Release(key.ns, claim_bytes);
                         if (!created) {
                           if (service_ip) service_ips_->Release(*service_ip);  // nothing holds it
                           const Status& error = created.error();
                           // Only the namespace check makes a create fail with NotFound.
                           if (error.code() == StatusCode::kNotFound && kind->namespaced) {
                             respond(ObjectErrorResponse(error, ns_kind, key.ns));
                           } else {
                             respond(ObjectErrorResponse(error, *kind, key.name));
                           }
                         } else {
                           if (AuthState::Follows(key.kind)) {
                             security_.auth->Apply(StoredObject{key, *created, json::parse(text, nullptr, false)});
                           }
                           Written();
                           // The stored text is the object's compact JSON: no second dump.
                           HttpResponse r;
                           r.status = 201;
                           r.body = std::string(text);
                           respond(std::move(r));
                         }
                         if (pending_writes_.fetch_sub(1) == 1) {
                           std::lock_guard lock(pending_mu_);
                           pending_cv_.notify_all();
                         }
                       });
  };
  return resp;
}

std::optional<HttpResponse> ApiHandler::AdmitChange(const Call& call, const json& stored, json& next) const {
  const RequestInfo& r = call.info;
  if (r.subresource == "status") return std::nullopt;
  if (r.kind->store_key == "/Namespace") SetNamespaceNameLabel(next);
  if (r.kind->store_key == kServiceKind) {
    KeepAllocatedServiceFields(next, stored);
    DefaultService(next);
  }
  if (Status v = ValidateUpdate(*r.kind, stored, next); !v.ok()) return ErrorResponse(v);
  if (auto refused = NodeNameChangeError(call, stored, next)) return refused;
  if (auto refused = EscalationError(call, next)) return refused;
  return PodSecurityAdmission(store_, *r.kind, next, &stored);
}

HttpResponse ApiHandler::Update(Call& call) {
  const RequestInfo& r = call.info;
  auto parsed = ParseSingleObject(call.http.body, BodyFormat(call.http));
  if (!parsed) return StatusResponse(400, "BadRequest", parsed.error().message());
  json obj = std::move(*parsed);
  if (!obj.contains("metadata") || !obj["metadata"].is_object()) obj["metadata"] = json::object();
  if (!StringField(obj["metadata"], "name").empty() && StringField(obj["metadata"], "name") != r.name) {
    return StatusResponse(400, "BadRequest", "metadata.name does not match the name in the path");
  }
  obj["metadata"]["name"] = r.name;
  if (r.kind->namespaced) obj["metadata"]["namespace"] = r.ns;
  if (r.subresource.empty()) DefaultObject(*r.kind, obj);
  const int64_t expected = ParseRevision(obj);
  if (expected < 0) return StatusResponse(400, "BadRequest", "metadata.resourceVersion must be a number");
  if (r.kind->store_key == kServiceKind && r.subresource.empty()) {
    // What the server allocated is kept when the body leaves it out (a manifest applied again).
    if (auto stored = store_.Get(r.Key())) KeepAllocatedServiceFields(obj, stored->object);
  }
  if (auto refused = ApplyFieldValidation(call, obj)) return std::move(*refused);
  if (Status v = ValidateObject(*r.kind, obj); !v.ok()) return InvalidObjectResponse(*r.kind, r.name, v);
  // Without a resourceVersion the update is unconditional: a write that came
  // between the read and this one is read again, as kube-apiserver's
  // GuaranteedUpdate does, instead of a 409 the client could not avoid.
  for (int attempt = 0;; ++attempt) {
    auto current = store_.Get(r.Key());
    if (!current) return ObjectErrorResponse(current.error(), *r.kind, r.name);
    if (call.decision.only_bound_to_node && !BoundToNode(current->object, call.decision.node)) {
      return ForbiddenResponse(call.user, r, fmt::format("the pod is not bound to node \"{}\"", call.decision.node));
    }
    json& stored = current->object;  // a stored object always has metadata
    // As in Kubernetes: /status writes only status; the object itself keeps the stored status.
    json next = r.subresource == "status" ? stored : obj;
    if (r.subresource == "status") {
      next["status"] = obj.value("status", json::object());
    } else if (stored.contains("status")) {
      next["status"] = stored["status"];
    } else {
      next.erase("status");
    }
    for (const char* f : {"uid", "creationTimestamp"}) {
      if (stored["metadata"].contains(f)) next["metadata"][f] = stored["metadata"][f];
    }
    KeepServerAnnotations(next, stored, call.user.InGroup(kGroupMasters));
    TrackFields(call, stored, next);
    if (auto refused = AdmitChange(call, stored, next)) return std::move(*refused);
    const int64_t generation = stored["metadata"].value("generation", 1);
    const bool spec_changed = r.subresource != "status" && next.value("spec", json()) != stored.value("spec", json());
    next["metadata"]["generation"] = generation + (spec_changed ? 1 : 0);
    auto updated = store_.Update(r.Key(), std::move(next), expected == 0 ? current->revision : expected);
    if (!updated && updated.error().code() == StatusCode::kConflict && expected == 0 && attempt + 1 < kConflictRetries) {
      continue;
    }
    if (!updated) return ObjectErrorResponse(updated.error(), *r.kind, r.name);
    WrittenObject(*updated);
    return Json(200, updated->object);
  }
}

HttpResponse ApiHandler::Patch(Call& call) {
  const RequestInfo& r = call.info;
  const std::string type = MediaTypeOf(call.http.Header("content-type"));
  const bool json_patch = type == "application/json-patch+json";
  const bool strategic = type == "application/strategic-merge-patch+json";
  if (type == "application/apply-patch+yaml") return ServerSideApply(call);
  if (!json_patch && !strategic && type != "application/merge-patch+json" && type != "application/json" && !type.empty()) {
    return StatusResponse(415, "UnsupportedMediaType",
                          fmt::format("the body of the request was in an unknown format - accepted media types "
                                      "include: application/json-patch+json, application/merge-patch+json, "
                                      "application/apply-patch+yaml{}",
                                      TakesStrategicMergePatch(*r.kind) ? ", application/strategic-merge-patch+json" : ""));
  }
  if (strategic && !TakesStrategicMergePatch(*r.kind)) {
    return StatusResponse(415, "UnsupportedMediaType",
                          fmt::format("the body of the request was in an unknown format - accepted media types "
                                      "include: application/json-patch+json, application/merge-patch+json, "
                                      "application/apply-patch+yaml (strategic merge patch is for Kubernetes' "
                                      "built-in kinds; {} is a custom resource there)",
                                      QualifiedResource(*r.kind)));
  }
  json patch = json::parse(call.http.body, nullptr, /*allow_exceptions=*/false);
  if (patch.is_discarded()) return StatusResponse(400, "BadRequest", "the patch is not valid JSON");
  if (json_patch ? !patch.is_array() : !patch.is_object()) {
    return StatusResponse(400, "BadRequest",
                          json_patch ? "a JSON patch (application/json-patch+json) is a list of operations: "
                                       "[{\"op\": \"replace\", \"path\": \"/spec/x\", \"value\": 1}]"
                                     : "a merge patch is a JSON object holding the fields to change");
  }
  const int64_t pinned = json_patch ? 0 : ParseRevision(patch);
  return ChangeObject(call, pinned, /*track_fields=*/true,
                      [&](const json& stored) -> std::variant<json, HttpResponse> {
                        json patched = stored;
                        if (json_patch) {
                          try {
                            patched = stored.patch(patch);
                          } catch (const json::exception& e) {
                            return StatusResponse(422, "Invalid",
                                                  fmt::format("the JSON patch cannot be applied: {}", e.what()));
                          }
                        } else if (strategic) {
                          auto merged = StrategicMergePatch(stored, patch);
                          if (!merged) return StatusResponse(422, "Invalid", merged.error().message());
                          patched = std::move(*merged);
                        } else {
                          patched.merge_patch(patch);
                        }
                        return patched;
                      });
}

HttpResponse ApiHandler::ChangeObject(Call& call, int64_t pinned, bool track_fields,
                                      const std::function<std::variant<json, HttpResponse>(const json&)>& change,
                                      const std::function<json(const json&)>& answer) {
  const RequestInfo& r = call.info;
  for (int attempt = 0; attempt < kConflictRetries; ++attempt) {
    auto current = store_.Get(r.Key());
    if (!current) return ObjectErrorResponse(current.error(), *r.kind, r.name);
    if (call.decision.only_bound_to_node && !BoundToNode(current->object, call.decision.node)) {
      return ForbiddenResponse(call.user, r, fmt::format("the pod is not bound to node \"{}\"", call.decision.node));
    }
    json& stored = current->object;  // a stored object always has metadata
    if (pinned > 0 && pinned != current->revision) return ObjectConflict(*r.kind, r.name);
    std::variant<json, HttpResponse> changed = change(stored);
    if (auto* refused = std::get_if<HttpResponse>(&changed)) return std::move(*refused);
    json patched = std::move(std::get<json>(changed));
    if (!patched.is_object() || !patched.contains("metadata") || !patched["metadata"].is_object()) {
      return StatusResponse(422, "Invalid", "the patch would leave the object without its metadata");
    }
    json next;
    if (r.subresource == "status") {
      // Only status changes through /status.
      next = stored;
      if (patched.contains("status")) {
        next["status"] = patched["status"];
      } else {
        next.erase("status");
      }
    } else {
      next = std::move(patched);
      DefaultObject(*r.kind, next);
      // As PUT does: status changes only through /status.
      if (stored.contains("status")) {
        next["status"] = stored["status"];
      } else {
        next.erase("status");
      }
    }
    for (const char* f : {"name", "namespace", "uid", "creationTimestamp"}) {
      if (stored["metadata"].contains(f)) next["metadata"][f] = stored["metadata"][f];
    }
    KeepServerAnnotations(next, stored, call.user.InGroup(kGroupMasters));
    next["metadata"]["resourceVersion"] = std::to_string(current->revision);
    if (r.kind->store_key == kServiceKind && r.subresource != "status") KeepAllocatedServiceFields(next, stored);
    call.warnings.clear();  // (another attempt prunes again)
    if (auto refused = ApplyFieldValidation(call, next)) return std::move(*refused);
    if (track_fields) TrackFields(call, stored, next);
    if (Status v = ValidateObject(*r.kind, next); !v.ok()) return InvalidObjectResponse(*r.kind, r.name, v);
    if (auto refused = AdmitChange(call, stored, next)) return std::move(*refused);
    if (next.value("spec", json()) != stored.value("spec", json())) {
      next["metadata"]["generation"] = stored["metadata"].value("generation", 1) + 1;
    }
    auto updated = store_.Update(r.Key(), std::move(next), current->revision);
    if (updated) {
      WrittenObject(*updated);
      return Json(200, answer ? answer(updated->object) : updated->object);
    }
    if (updated.error().code() != StatusCode::kConflict) return ObjectErrorResponse(updated.error(), *r.kind, r.name);
  }
  return ObjectConflict(*r.kind, r.name);  // it kept changing under the patch
}

// ?fieldValidation= as kube-apiserver takes it: Strict (here also the default)
// refuses unknown fields, in validation; Warn and Ignore drop them first, Warn
// saying so in a Warning header. nullopt, or the refusal of a bad value.
std::optional<HttpResponse> ApiHandler::ApplyFieldValidation(Call& call, json& object) const {
  const std::string mode = call.http.Query("fieldValidation");
  if (mode.empty() || mode == "Strict") return std::nullopt;
  if (mode != "Warn" && mode != "Ignore") {
    return StatusResponse(400, "BadRequest",
                          fmt::format("fieldValidation: Unsupported value: \"{}\": supported values: \"Ignore\", "
                                      "\"Strict\", \"Warn\"",
                                      mode));
  }
  for (const std::string& field : PruneUnknownFields(*call.info.kind, object)) {
    if (mode == "Warn") call.warnings.push_back(fmt::format("unknown field \"{}\"", field));
  }
  return std::nullopt;
}

// Who owns which field (api/managed_fields.h), kept for objects that someone
// applied server-side and for writes that name their fieldManager (kubectl's
// all do); other writes (controllers, the portal) leave managedFields alone,
// so that the bulk of writes carries no bookkeeping.
void ApiHandler::TrackFields(const Call& call, const json& previous, json& next) const {
  const std::string manager = call.http.Query("fieldManager");
  const bool tracked = previous.is_object() && previous.contains("metadata") &&
                       previous["metadata"].contains("managedFields");
  if (manager.empty() && !tracked) return;
  next = RecordUpdate(previous, std::move(next), ManagerOf(manager, call.http.Header("user-agent")),
                      call.info.kind->api_version, clock_());
}

// GET, PUT or PATCH .../NAME/scale (scale_subresource.h): what `kubectl scale` sends.
HttpResponse ApiHandler::Scale(Call& call) {
  const RequestInfo& r = call.info;
  const HttpRequest& req = call.http;
  const KindInfo& kind = *r.kind;
  if (req.method == "GET") {
    auto got = store_.Get(r.Key());
    if (!got) return ObjectErrorResponse(got.error(), kind, r.name);
    return Json(200, ScaleOf(kind, got->object));
  }
  if (req.method != "PUT" && req.method != "PATCH") {
    return StatusResponse(405, "MethodNotAllowed", "a scale is read with GET and set with PUT or PATCH");
  }
  json body = json::parse(req.body, nullptr, /*allow_exceptions=*/false);
  if (!body.is_object()) return StatusResponse(400, "BadRequest", "the body is not a JSON object (a Scale, or a patch of one)");
  const int64_t pinned = req.method == "PUT" ? ParseRevision(body) : 0;
  return ChangeObject(
      call, pinned, /*track_fields=*/true,
      [&](const json& stored) -> std::variant<json, HttpResponse> {
        json scale = ScaleOf(kind, stored);
        if (req.method == "PUT") {
          scale = body;
        } else {
          scale.merge_patch(body);
        }
        auto replicas = ReplicasAsked(scale);
        if (!replicas) return ErrorResponse(replicas.error());
        auto next = WithReplicas(kind, stored, *replicas);
        if (!next) return ErrorResponse(next.error());
        return std::move(*next);
      },
      [&](const json& updated) { return ScaleOf(kind, updated); });
}

// Server-side apply (api/managed_fields.h): PATCH with application/apply-patch+yaml,
// ?fieldManager= (required) and ?force=true; creates the object when it is not there.
HttpResponse ApiHandler::ServerSideApply(Call& call) {
  const RequestInfo& r = call.info;
  const std::string manager = call.http.Query("fieldManager");
  const std::string force_text = call.http.Query("force");
  if (force_text != "" && force_text != "true" && force_text != "false") {
    return StatusResponse(400, "BadRequest", fmt::format("force: Invalid value: \"{}\": use true or false", force_text));
  }
  auto parsed = ParseSingleObject(call.http.body, ManifestFormat::kYaml);
  if (!parsed) return StatusResponse(400, "BadRequest", parsed.error().message());
  json applied = std::move(*parsed);
  if (StringField(applied, "kind") != r.kind->kind || StringField(applied, "apiVersion") != r.kind->api_version) {
    return StatusResponse(400, "BadRequest",
                          fmt::format("the apply patch is apiVersion \"{}\" kind \"{}\", but the path is for {} {}",
                                      StringField(applied, "apiVersion"), StringField(applied, "kind"),
                                      r.kind->api_version, r.kind->kind));
  }
  if (!applied.contains("metadata") || !applied["metadata"].is_object()) applied["metadata"] = json::object();
  const std::string body_name(StringField(applied["metadata"], "name"));
  if (!body_name.empty() && body_name != r.name) {
    return StatusResponse(400, "BadRequest", "metadata.name does not match the name in the path");
  }
  applied["metadata"]["name"] = r.name;
  const ApplyRequest request{.manager = manager, .force = force_text == "true",
                             .api_version = std::string(r.kind->api_version), .now = clock_(),
                             .status = r.subresource == "status"};
  auto conflict = [&](const std::vector<ApplyConflict>& conflicts) {
    json details = ObjectDetails(*r.kind, r.name);
    details["causes"] = ConflictCauses(conflicts);
    return StatusResponse(409, "Conflict", ConflictMessage(conflicts), details);
  };
  if (auto exists = store_.Get(r.Key()); !exists && exists.error().code() == StatusCode::kNotFound) {
    if (!r.subresource.empty()) return ObjectNotFound(*r.kind, r.name);  // a status apply needs its object
    // Not there yet: a create, which needs the right to create.
    RequestInfo as_create = r;
    as_create.verb = "create";
    if (!authorizer_.Authorize(call.user, as_create, NodeRequestFacts{.body_name = r.name}).allowed) {
      return ForbiddenResponse(call.user, as_create);
    }
    auto outcome = tessera::ServerSideApply(json(), applied, request);
    if (!outcome) return ErrorResponse(outcome.error());
    if (!outcome->conflicts.empty()) return conflict(outcome->conflicts);
    json object = std::move(outcome->object);
    object["apiVersion"] = std::string(r.kind->api_version);
    object["kind"] = std::string(r.kind->kind);
    HttpRequest create = call.http;
    create.method = "POST";
    create.body = object.dump();
    create.headers["content-type"] = "application/json";
    Call creating{.http = create, .info = as_create, .user = call.user, .decision = call.decision,
                  .received = call.received};
    HttpResponse created = Create(creating);
    call.created_name = creating.created_name;
    call.warnings = std::move(creating.warnings);
    call.audit_annotations = std::move(creating.audit_annotations);
    return created;
  }
  return ChangeObject(call, /*pinned=*/0, /*track_fields=*/false,
                      [&](const json& stored) -> std::variant<json, HttpResponse> {
                        auto outcome = tessera::ServerSideApply(stored, applied, request);
                        if (!outcome) return ErrorResponse(outcome.error());
                        if (!outcome->conflicts.empty()) return conflict(outcome->conflicts);
                        return std::move(outcome->object);
                      });
}

HttpResponse ApiHandler::Delete(Call& call) {
  const RequestInfo& r = call.info;
  int64_t expected = 0;
  if (!call.http.body.empty()) {
    auto options = ParseSingleObject(call.http.body);  // DeleteOptions, with preconditions.resourceVersion
    if (options) {
      const auto& pre = options->value("preconditions", json::object());
      if (pre.is_object() && pre.contains("resourceVersion")) {
        expected = ParseRevision(json{{"metadata", {{"resourceVersion", pre["resourceVersion"]}}}});
        if (expected < 0) return StatusResponse(400, "BadRequest", "preconditions.resourceVersion must be a number");
      }
    }
  }
  if (call.decision.only_bound_to_node) {
    // Deleted only as it is now, and only while bound to the agent's node.
    auto current = store_.Get(r.Key());
    if (!current) return ObjectErrorResponse(current.error(), *r.kind, r.name);
    if (!BoundToNode(current->object, call.decision.node)) {
      return ForbiddenResponse(call.user, r, fmt::format("the pod is not bound to node \"{}\"", call.decision.node));
    }
    if (expected == 0) expected = current->revision;
  }
  auto deleted = store_.Delete(r.Key(), expected);
  if (!deleted && deleted.error().code() == StatusCode::kConflict) {
    auto current = store_.Get(r.Key());
    if (!current) return ObjectErrorResponse(current.error(), *r.kind, r.name);
    return ObjectConflict(*r.kind, r.name,
                          fmt::format("the ResourceVersion in the precondition ({}) does not match the ResourceVersion "
                                      "in record ({}). The object might have been modified",
                                      expected, current->revision));
  }
  if (!deleted) return ObjectErrorResponse(deleted.error(), *r.kind, r.name);
  if (AuthState::Follows(deleted->key.kind)) security_.auth->Remove(deleted->key, deleted->revision);
  if (deleted->key.kind == "/Pod") security_.auth->ForgetPod(deleted->key.ns, deleted->key.name);  // its tokens end now
  if (deleted->key.kind == kServiceKind && service_ips_ != nullptr) {
    if (auto ip = ParseIpv4Address(StringAt(deleted->object, {"spec", "clusterIP"}))) service_ips_->Release(*ip);
  }
  Written();
  return Json(200, deleted->object);
}

}  // namespace tessera
