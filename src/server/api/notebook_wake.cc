#include "server/api/notebook_wake.h"

#include <fmt/format.h>

#include "server/api/api_errors.h"
#include "server/controllers/notebook_controller.h"
#include "server/object_json.h"

namespace tessera {
namespace {

using nlohmann::json;

constexpr int kResumeAttempts = 5;

std::string HtmlEscape(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  for (char c : s) {
    switch (c) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      case '\'': out += "&#39;"; break;
      default: out += c;
    }
  }
  return out;
}

bool Suspended(const json& nb) {
  const json& spec = ObjectAt(nb, {"spec"});
  return spec.value("suspend", false) || StringAt(nb, {"status", "phase"}) == "Suspended";
}

// spec.suspend false and resume-from = status.suspendedAt, unless they are so
// already. OK when written or nothing to write.
Status WriteResume(Store& store, const ObjectKey& key, bool& wrote) {
  wrote = false;
  for (int attempt = 0; attempt < kResumeAttempts; ++attempt) {
    auto got = store.Get(key);
    if (!got) return got.error();
    json next = got->object;
    bool change = false;
    if (ObjectAt(next, {"spec"}).value("suspend", false)) {
      next["spec"]["suspend"] = false;
      change = true;
    }
    const std::string suspended_at = StringAt(next, {"status", "suspendedAt"});
    if (!suspended_at.empty() &&
        StringAt(next, {"metadata", "annotations", kNotebookResumeAnnotation}) != suspended_at) {
      next["metadata"]["annotations"][kNotebookResumeAnnotation] = suspended_at;
      change = true;
    }
    if (!change) return Status::Ok();
    auto updated = store.Update(key, std::move(next), got->revision);
    if (updated) {
      wrote = true;
      return Status::Ok();
    }
    if (updated.error().code() != StatusCode::kConflict) return updated.error();
  }
  return Status::Conflict("the notebook kept changing; reload to try again");
}

}  // namespace

std::string StartingPage(std::string_view ns, std::string_view name, std::string_view phase, std::string_view message) {
  return fmt::format(
      "<!doctype html>\n<html><head><meta charset=\"utf-8\">"
      "<meta http-equiv=\"refresh\" content=\"{}\">"
      "<title>Starting notebook {}</title></head>\n"
      "<body style=\"font-family:sans-serif;margin:3em\"><h1>Notebook {} is starting</h1>\n"
      "<p>Namespace: {} &middot; phase: <b id=\"phase\">{}</b></p>\n<p id=\"message\">{}</p>\n"
      "<p>This page reloads itself until the notebook serves.</p></body></html>\n",
      kStartingPageRefreshSeconds, HtmlEscape(name), HtmlEscape(name), HtmlEscape(ns), HtmlEscape(phase),
      HtmlEscape(message));
}

std::optional<HttpResponse> NotebookNotServing(Store& store, const RequestAuthorizer& authorizer, const UserInfo& user,
                                               const RequestInfo& info, const HttpRequest& request,
                                               bool backend_unavailable, const std::function<void()>& resumed) {
  // A ready endpoint: the notebook serves (a suspended one has no pod, so no
  // endpoint), and the proxy's hot path costs no lookups here.
  if (!backend_unavailable || info.kind == nullptr || info.kind->store_key != "/Service") return std::nullopt;
  const std::string service = info.name.substr(0, info.name.find(':'));
  // http:NAME:PORT: the scheme first.
  std::string svc_name = service;
  if (service == "http" || service == "https") {
    const std::string rest = info.name.substr(info.name.find(':') + 1);
    svc_name = rest.substr(0, rest.find(':'));
  }
  if (!svc_name.starts_with("notebook-")) return std::nullopt;
  auto svc = store.Get(ObjectKey{"/Service", info.ns, svc_name});
  if (!svc) return std::nullopt;
  const std::string nb_name = StringAt(svc->object, {"metadata", "labels", kNotebookLabel});
  if (nb_name.empty()) return std::nullopt;
  const ObjectKey nb_key{kNotebookKind, info.ns, nb_name};
  auto nb = store.Get(nb_key);
  if (!nb) return std::nullopt;
  const bool suspended = Suspended(nb->object);

  std::string phase = StringAt(nb->object, {"status", "phase"});
  if (phase.empty()) phase = "Pending";
  std::string message = StringAt(nb->object, {"status", "message"});
  if (suspended) {
    const RbacAttributes patch{.verb = "patch",
                               .api_group = "tessera.dev",
                               .resource = "notebooks",
                               .ns = info.ns,
                               .name = nb_name};
    if (!authorizer.Allowed(user, patch)) {
      message = fmt::format(
          "notebook \"{}\" is suspended, and User \"{}\" cannot patch resource \"notebooks\" in API group "
          "\"tessera.dev\" in the namespace \"{}\": someone who may edit it must resume it (tessera notebook resume {})",
          nb_name, user.name, info.ns, nb_name);
    } else {
      bool wrote = false;
      if (Status s = WriteResume(store, nb_key, wrote); !s.ok()) return ErrorResponse(s);
      if (wrote && resumed) resumed();
      phase = "Resuming";
      message = "resuming: its pod is queued again and starts when admitted";
    }
  } else if (message.empty()) {
    message = "its pod is not ready yet";
  }
  if (request.Header("accept").find("text/html") != std::string::npos) {
    HttpResponse page;
    page.content_type = "text/html; charset=utf-8";
    page.body = StartingPage(info.ns, nb_name, phase, message);
    page.headers.emplace_back("Cache-Control", "no-store");
    return page;
  }
  HttpResponse r = StatusResponse(
      503, "ServiceUnavailable",
      fmt::format("notebook \"{}\" is not serving yet (phase {}: {}); retry after {}s", nb_name, phase, message,
                  kStartingPageRefreshSeconds));
  r.headers.emplace_back("Retry-After", std::to_string(kStartingPageRefreshSeconds));
  return r;
}

}  // namespace tessera
