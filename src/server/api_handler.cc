#include "server/api_handler.h"

#include <fmt/chrono.h>
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <chrono>

#include "api/kinds.h"
#include "common/time_format.h"
#include "api/manifest.h"
#include "api/validation.h"
#include "server/list_paging.h"
#include "server/metrics_registry.h"
#include "server/object_json.h"
#include "server/pod_logs.h"

namespace tessera {

// What a path names: a kind, a namespace (maybe empty), a name (maybe empty) and
// an optional subresource ("status").
struct ApiHandler::Route {
  const KindInfo* kind = nullptr;
  std::string ns;
  std::string name;
  std::string subresource;
  ObjectKey Key() const { return ObjectKey{std::string(kind->store_key), ns, name}; }
};

namespace {

constexpr int kConflictRetries = 5;

std::vector<std::string_view> SplitPath(std::string_view path) {
  std::vector<std::string_view> out;
  while (!path.empty()) {
    if (path.front() == '/') {
      path.remove_prefix(1);
      continue;
    }
    const auto slash = path.find('/');
    out.push_back(path.substr(0, slash));
    if (slash == std::string_view::npos) break;
    path.remove_prefix(slash);
  }
  return out;
}

HttpResponse Json(int code, const nlohmann::json& body) {
  HttpResponse r;
  r.status = code;
  r.body = body.dump();
  return r;
}

int64_t ParseRevision(const nlohmann::json& obj) {
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

// RFC 7386 JSON merge patch.
void MergePatch(nlohmann::json& target, const nlohmann::json& patch) {
  if (!patch.is_object()) {
    target = patch;
    return;
  }
  if (!target.is_object()) target = nlohmann::json::object();
  for (const auto& [k, v] : patch.items()) {
    if (v.is_null()) {
      target.erase(k);
    } else {
      MergePatch(target[k], v);
    }
  }
}

// How Kubernetes names a resource in messages: plural, then group when there is
// one ("pods", "jobs.batch", "clusterqueues.kueue.x-k8s.io").
std::string QualifiedResource(const KindInfo& kind) {
  return kind.group.empty() ? std::string(kind.plural) : fmt::format("{}.{}", kind.plural, kind.group);
}

// Status.details for an error about one object, as Kubernetes fills it: the
// name, the group (omitted for the core API) and, in `kind`, the resource.
nlohmann::json ObjectDetails(const KindInfo& kind, std::string_view name) {
  nlohmann::json details{{"name", name}, {"kind", kind.plural}};
  if (!kind.group.empty()) details["group"] = kind.group;
  return details;
}

// Kubernetes' words for the errors about one object (apimachinery's
// NewNotFound, NewAlreadyExists, NewConflict), so that scripts and users see
// what kubectl shows: `pods "foo" not found`.
HttpResponse ObjectNotFound(const KindInfo& kind, std::string_view name) {
  return StatusResponse(404, "NotFound", fmt::format("{} \"{}\" not found", QualifiedResource(kind), name),
                        ObjectDetails(kind, name));
}

HttpResponse ObjectAlreadyExists(const KindInfo& kind, std::string_view name) {
  return StatusResponse(409, "AlreadyExists", fmt::format("{} \"{}\" already exists", QualifiedResource(kind), name),
                        ObjectDetails(kind, name));
}

constexpr std::string_view kObjectModified =
    "the object has been modified; please apply your changes to the latest version and try again";

HttpResponse ObjectConflict(const KindInfo& kind, std::string_view name, std::string_view why = kObjectModified) {
  return StatusResponse(409, "Conflict",
                        fmt::format("Operation cannot be fulfilled on {} \"{}\": {}", QualifiedResource(kind), name,
                                    why),
                        ObjectDetails(kind, name));
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

// A store error about one object: NotFound, AlreadyExists and Conflict in
// Kubernetes' words; anything else as it is.
HttpResponse ObjectErrorResponse(const Status& s, const KindInfo& kind, std::string_view name) {
  switch (s.code()) {
    case StatusCode::kNotFound: return ObjectNotFound(kind, name);
    case StatusCode::kAlreadyExists: return ObjectAlreadyExists(kind, name);
    case StatusCode::kConflict: return ObjectConflict(kind, name);
    default: return ErrorResponse(s);
  }
}

}  // namespace

std::string Rfc3339Now() { return FormatRfc3339(Timestamp::FromMillis(SystemNow().ms / 1000 * 1000)); }

HttpResponse StatusResponse(int http_code, std::string_view reason, std::string_view message,
                            const nlohmann::json& details) {
  nlohmann::json status{{"kind", "Status"},
                        {"apiVersion", "v1"},
                        {"metadata", nlohmann::json::object()},
                        {"status", "Failure"},
                        {"message", message},
                        {"reason", reason},
                        {"code", http_code}};
  if (details.is_object() && !details.empty()) status["details"] = details;
  return Json(http_code, status);
}

HttpResponse ErrorResponse(const Status& s) {
  switch (s.code()) {
    case StatusCode::kInvalidArgument: return StatusResponse(422, "Invalid", s.message());
    case StatusCode::kNotFound: return StatusResponse(404, "NotFound", s.message());
    case StatusCode::kAlreadyExists: return StatusResponse(409, "AlreadyExists", s.message());
    case StatusCode::kConflict: return StatusResponse(409, "Conflict", s.message());
    case StatusCode::kGone: return StatusResponse(410, "Expired", s.message());
    case StatusCode::kUnauthenticated: return StatusResponse(401, "Unauthorized", s.message());
    case StatusCode::kPermissionDenied: return StatusResponse(403, "Forbidden", s.message());
    case StatusCode::kUnavailable: return StatusResponse(503, "ServiceUnavailable", s.message());
    default: return StatusResponse(500, "InternalError", s.message());
  }
}

ApiHandler::ApiHandler(Store& store, WatchHub& watches, Authenticator authenticate, WallClock clock)
    : store_(store), watches_(watches), authenticate_(std::move(authenticate)), clock_(std::move(clock)) {}

ApiHandler::~ApiHandler() { WaitForPendingWrites(); }

void ApiHandler::WaitForPendingWrites() {
  std::unique_lock lock(pending_mu_);
  pending_cv_.wait(lock, [this] { return pending_writes_.load() == 0; });
}

void ApiHandler::Written() {
  watches_.Notify();
  if (on_write_) on_write_();
}

HttpResponse ApiHandler::Handle(const HttpRequest& req) {
  const auto parts = SplitPath(req.path);
  if (req.path == "/healthz" || req.path == "/readyz" || req.path == "/livez") {
    HttpResponse r;
    r.content_type = "text/plain";
    r.body = "ok";
    return r;
  }
  auto metrics = [&] {
    HttpResponse r;
    r.content_type = kPrometheusContentType;
    r.body = metrics_();
    return r;
  };
  if (req.path == "/metrics" && metrics_ && !metrics_need_token_) return metrics();

  const std::string auth = req.Header("authorization");
  const std::string token = auth.rfind("Bearer ", 0) == 0 ? auth.substr(7) : std::string();
  const std::optional<Identity> who = token.empty() ? std::nullopt : authenticate_(token);
  if (!who) {
    return StatusResponse(401, "Unauthorized",
                          token.empty() ? "no bearer token: pass --token, set TESSERA_TOKEN, or use the config written "
                                          "by `tessera up` (the admin token is in <data-dir>/admin.token)"
                                        : "the bearer token is not valid for this server");
  }
  if (req.path == "/metrics" && metrics_) return metrics();

  // /api/v1/... or /apis/{group}/{version}/...
  size_t i = 0;
  std::string group, version;
  if (!parts.empty() && parts[0] == "api" && parts.size() >= 2) {
    version = std::string(parts[1]);
    i = 2;
  } else if (!parts.empty() && parts[0] == "apis" && parts.size() >= 3) {
    group = std::string(parts[1]);
    version = std::string(parts[2]);
    i = 3;
  } else {
    return StatusResponse(404, "NotFound", fmt::format("no API at {}; paths look like /api/v1/namespaces/NS/pods or "
                                                       "/apis/GROUP/VERSION/namespaces/NS/PLURAL", req.path));
  }
  Route route;
  if (i + 1 < parts.size() && parts[i] == "namespaces" && parts.size() > i + 2) {
    route.ns = std::string(parts[i + 1]);
    i += 2;
  }
  if (i >= parts.size()) return StatusResponse(404, "NotFound", fmt::format("{} names no resource", req.path));
  route.kind = FindKindByResource(group, version, parts[i]);
  if (route.kind == nullptr) {
    return StatusResponse(404, "NotFound",
                          fmt::format("the server does not serve {} in {}/{}; {}", parts[i],
                                      group.empty() ? "core" : group, version, ServedResources(group, version)));
  }
  if (i + 1 < parts.size()) route.name = std::string(parts[i + 1]);
  if (i + 2 < parts.size()) route.subresource = std::string(parts[i + 2]);
  const bool pod_log = route.kind->kind == "Pod" && route.subresource == "log";
  if (i + 3 < parts.size() || (!route.subresource.empty() && route.subresource != "status" && !pod_log)) {
    return StatusResponse(404, "NotFound", fmt::format("{}: unknown subresource", req.path));
  }
  if (!route.kind->namespaced && !route.ns.empty()) {
    return StatusResponse(404, "NotFound", fmt::format("{} is cluster-scoped: drop /namespaces/{} from the path",
                                                       route.kind->kind, route.ns));
  }

  if (pod_log) {
    if (req.method != "GET") return StatusResponse(405, "MethodNotAllowed", "pod logs are read with GET");
    return PodLogResponse(store_, agent_token_, route.ns, route.name, req);
  }
  if (req.method == "GET") {
    if (!route.name.empty()) return Get(route, req);
    const std::string watch = req.Query("watch");
    if (watch == "true" || watch == "1") return Watch(route, req);
    return List(route, req);
  }
  if (req.method == "POST" && route.name.empty()) return Create(route, req);
  if (req.method == "PUT" && !route.name.empty()) return Update(route, req);
  if (req.method == "PATCH" && !route.name.empty()) return Patch(route, req);
  if (req.method == "DELETE" && !route.name.empty()) return Delete(route, req);
  return StatusResponse(405, "MethodNotAllowed",
                        fmt::format("{} is not allowed on {}", req.method, req.path));
}

HttpResponse ApiHandler::Get(const Route& r, const HttpRequest&) {
  if (r.kind->namespaced && r.ns.empty()) {
    return StatusResponse(404, "NotFound", fmt::format("{} is namespaced: use /namespaces/NS/ in the path", r.kind->kind));
  }
  auto got = store_.Get(r.Key());
  if (!got) return ObjectErrorResponse(got.error(), *r.kind, r.name);
  return Json(200, got->object);
}

HttpResponse ApiHandler::List(const Route& r, const HttpRequest& req) {
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
  auto list = store_.List(std::string(r.kind->store_key), r.ns);
  if (!list) return ErrorResponse(list.error());
  if (after && after->revision > list->revision) {
    return StatusResponse(400, "BadRequest", "the continue token names a revision this server has not reached");
  }
  const int64_t revision = after ? after->revision : list->revision;
  if (!fields->empty()) std::erase_if(list->items, [&](const StoredObject& o) { return !fields->Matches(o.object); });
  ListPage page = CutListPage(std::move(list->items), *selector, after, *limit, revision, r.kind->store_key, r.ns);
  nlohmann::json metadata{{"resourceVersion", std::to_string(revision)}};
  if (page.next) {
    metadata["continue"] = EncodeContinueToken(*page.next);
    metadata["remainingItemCount"] = page.remaining;
  }
  return Json(200, nlohmann::json{{"apiVersion", std::string(r.kind->api_version)},
                                  {"kind", std::string(r.kind->kind) + "List"},
                                  {"metadata", std::move(metadata)},
                                  {"items", std::move(page.items)}});
}

HttpResponse ApiHandler::Watch(const Route& r, const HttpRequest& req) {
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
  // resourceVersion unset or 0: the current objects as ADDED events, then changes.
  std::vector<std::string> initial;
  if (from == 0) {
    auto list = store_.List(std::string(r.kind->store_key), r.ns);
    if (!list) return ErrorResponse(list.error());
    for (StoredObject& o : list->items) {
      if (!selector->MatchesObject(o.object) || !fields->Matches(o.object)) continue;
      initial.push_back(WatchHub::EncodeEvent(StoreEvent{o.revision, EventType::kAdded, std::move(o)}));
    }
    from = list->revision;
  } else {
    // Fail before streaming when the revision is compacted away: the client relists.
    auto probe = store_.EventsSince(from, 1);
    if (!probe) return ErrorResponse(probe.error());
  }
  WatchFilter filter{
      .kind = std::string(r.kind->store_key), .ns = r.ns, .selector = std::move(*selector), .fields = std::move(*fields)};
  HttpResponse resp;
  resp.content_type = "application/json";
  resp.stream = [this, filter = std::move(filter), from, initial = std::move(initial)](
                    std::shared_ptr<StreamSink> sink) mutable {
    for (std::string& e : initial) sink->Write(std::move(e));
    Status s = watches_.Subscribe(std::move(filter), from, sink);
    if (!s.ok()) {
      sink->Write(nlohmann::json{{"type", "ERROR"},
                                 {"object", nlohmann::json::parse(ErrorResponse(s).body)}}.dump() + "\n");
      sink->Close();
    }
  };
  return resp;
}

HttpResponse ApiHandler::Create(const Route& r, const HttpRequest& req) {
  auto parsed = ParseSingleObject(req.body, BodyFormat(req));
  if (!parsed) return StatusResponse(400, "BadRequest", parsed.error().message());
  nlohmann::json obj = std::move(*parsed);
  if (StringField(obj, "kind") != r.kind->kind || StringField(obj, "apiVersion") != r.kind->api_version) {
    return StatusResponse(400, "BadRequest",
                          fmt::format("the body is apiVersion \"{}\" kind \"{}\", but the path is for {} {}",
                                      StringField(obj, "apiVersion"), StringField(obj, "kind"), r.kind->api_version,
                                      r.kind->kind));
  }
  if (!obj.contains("metadata") || !obj["metadata"].is_object()) obj["metadata"] = nlohmann::json::object();
  nlohmann::json& meta = obj["metadata"];
  if (r.kind->namespaced) {
    if (r.ns.empty()) {
      return StatusResponse(400, "BadRequest", fmt::format("{} is namespaced: POST to /namespaces/NS/{}", r.kind->kind,
                                                           r.kind->plural));
    }
    const std::string body_ns(StringField(meta, "namespace"));
    if (!body_ns.empty() && body_ns != r.ns) {
      return StatusResponse(400, "BadRequest", fmt::format("metadata.namespace is {} but the path is for namespace {}",
                                                           body_ns, r.ns));
    }
    meta["namespace"] = r.ns;
  }
  std::optional<ObjectKey> ns_key;
  if (r.kind->namespaced) ns_key = ObjectKey{"/Namespace", "", r.ns};
  const KindInfo& ns_kind = *FindKindByStoreKey("/Namespace");
  if (Status v = ValidateObject(*r.kind, obj); !v.ok()) {
    // A missing namespace is the first thing to fix, as before validation.
    if (ns_key) {
      if (auto ns = store_.Get(*ns_key); !ns) return ObjectErrorResponse(ns.error(), ns_kind, r.ns);
    }
    return ErrorResponse(v);
  }
  // Status is written by controllers and agents; on create only nodes and pods
  // (registered by agents, bound by the scheduler) bring theirs.
  if (r.kind->kind != "Node" && r.kind->kind != "Pod") obj.erase("status");
  meta.erase("resourceVersion");
  meta["creationTimestamp"] = clock_();
  meta["generation"] = 1;
  std::string name(StringField(meta, "name"));
  // The write waits in the store's queue to share a commit with others; the
  // I/O thread serves other connections meanwhile. The namespace must exist
  // when the object is written (checked in the same transaction).
  ObjectKey key{std::string(r.kind->store_key), r.ns, name};
  HttpResponse resp;
  resp.deferred = [this, key = std::move(key), obj = std::move(obj), ns_key = std::move(ns_key), kind = r.kind,
                   &ns_kind](std::function<void(HttpResponse)> respond) mutable {
    pending_writes_.fetch_add(1);
    store_.CreateAsync(key, std::move(obj), std::move(ns_key),
                       [this, kind, &ns_kind, ns = key.ns, name = key.name, respond = std::move(respond)](
                           Result<int64_t> created, std::string_view text) {
                         if (!created) {
                           const Status& error = created.error();
                           // Only the namespace check makes a create fail with NotFound.
                           if (error.code() == StatusCode::kNotFound && kind->namespaced) {
                             respond(ObjectErrorResponse(error, ns_kind, ns));
                           } else {
                             respond(ObjectErrorResponse(error, *kind, name));
                           }
                         } else {
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

HttpResponse ApiHandler::Update(const Route& r, const HttpRequest& req) {
  auto parsed = ParseSingleObject(req.body, BodyFormat(req));
  if (!parsed) return StatusResponse(400, "BadRequest", parsed.error().message());
  nlohmann::json obj = std::move(*parsed);
  if (!obj.contains("metadata") || !obj["metadata"].is_object()) obj["metadata"] = nlohmann::json::object();
  if (!StringField(obj["metadata"], "name").empty() && StringField(obj["metadata"], "name") != r.name) {
    return StatusResponse(400, "BadRequest", "metadata.name does not match the name in the path");
  }
  obj["metadata"]["name"] = r.name;
  if (r.kind->namespaced) obj["metadata"]["namespace"] = r.ns;
  const int64_t expected = ParseRevision(obj);
  if (expected < 0) return StatusResponse(400, "BadRequest", "metadata.resourceVersion must be a number");
  if (Status v = ValidateObject(*r.kind, obj); !v.ok()) return ErrorResponse(v);
  auto current = store_.Get(r.Key());
  if (!current) return ObjectErrorResponse(current.error(), *r.kind, r.name);
  // Immutable metadata comes from the stored object; /status writes only status.
  // As in Kubernetes: /status writes only status; the object itself keeps the stored status.
  nlohmann::json next = r.subresource == "status" ? current->object : obj;
  if (r.subresource == "status") {
    next["status"] = obj.value("status", nlohmann::json::object());
  } else if (current->object.contains("status")) {
    next["status"] = current->object["status"];
  } else {
    next.erase("status");
  }
  for (const char* f : {"uid", "creationTimestamp"}) {
    if (current->object["metadata"].contains(f)) next["metadata"][f] = current->object["metadata"][f];
  }
  const int64_t generation = current->object["metadata"].value("generation", 1);
  const bool spec_changed = r.subresource != "status" && next.value("spec", nlohmann::json()) !=
                                                             current->object.value("spec", nlohmann::json());
  next["metadata"]["generation"] = generation + (spec_changed ? 1 : 0);
  auto updated = store_.Update(r.Key(), std::move(next), expected == 0 ? current->revision : expected);
  if (!updated) return ObjectErrorResponse(updated.error(), *r.kind, r.name);
  Written();
  return Json(200, updated->object);
}

HttpResponse ApiHandler::Patch(const Route& r, const HttpRequest& req) {
  const std::string type = req.Header("content-type");
  if (!type.empty() && type.find("merge-patch") == std::string::npos && type.find("application/json") == std::string::npos) {
    return StatusResponse(415, "UnsupportedMediaType",
                          fmt::format("patch type {} is not supported; use application/merge-patch+json", type));
  }
  auto parsed = ParseSingleObject(req.body, ManifestFormat::kJson);
  if (!parsed) return StatusResponse(400, "BadRequest", parsed.error().message());
  const nlohmann::json& patch = *parsed;
  const int64_t pinned = ParseRevision(patch);
  for (int attempt = 0; attempt < kConflictRetries; ++attempt) {
    auto current = store_.Get(r.Key());
    if (!current) return ObjectErrorResponse(current.error(), *r.kind, r.name);
    if (pinned > 0 && pinned != current->revision) return ObjectConflict(*r.kind, r.name);
    nlohmann::json next = current->object;
    if (r.subresource == "status") {
      MergePatch(next["status"], patch.value("status", nlohmann::json::object()));
    } else {
      MergePatch(next, patch);
    }
    for (const char* f : {"name", "namespace", "uid", "creationTimestamp"}) {
      if (current->object["metadata"].contains(f)) next["metadata"][f] = current->object["metadata"][f];
    }
    next["metadata"]["resourceVersion"] = std::to_string(current->revision);
    if (Status v = ValidateObject(*r.kind, next); !v.ok()) return ErrorResponse(v);
    if (next.value("spec", nlohmann::json()) != current->object.value("spec", nlohmann::json())) {
      next["metadata"]["generation"] = current->object["metadata"].value("generation", 1) + 1;
    }
    auto updated = store_.Update(r.Key(), std::move(next), current->revision);
    if (updated) {
      Written();
      return Json(200, updated->object);
    }
    if (updated.error().code() != StatusCode::kConflict) return ObjectErrorResponse(updated.error(), *r.kind, r.name);
  }
  return ObjectConflict(*r.kind, r.name);  // it kept changing under the patch
}

HttpResponse ApiHandler::Delete(const Route& r, const HttpRequest& req) {
  int64_t expected = 0;
  if (!req.body.empty()) {
    auto options = ParseSingleObject(req.body);  // DeleteOptions, with preconditions.resourceVersion
    if (options) {
      const auto& pre = options->value("preconditions", nlohmann::json::object());
      if (pre.is_object() && pre.contains("resourceVersion")) {
        expected = ParseRevision(nlohmann::json{{"metadata", {{"resourceVersion", pre["resourceVersion"]}}}});
        if (expected < 0) return StatusResponse(400, "BadRequest", "preconditions.resourceVersion must be a number");
      }
    }
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
  Written();
  return Json(200, deleted->object);
}

}  // namespace tessera
