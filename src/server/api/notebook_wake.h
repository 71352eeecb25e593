// Opening a suspended notebook's URL resumes it. A services/proxy request to
// a notebook's Service (notebook-NAME, labelled tessera.dev/notebook=NAME by
// the Notebook controller) with no ready endpoint (its Notebook Suspended, or
// its pod not ready yet) is answered here instead of being proxied:
//
//   - a Suspended notebook is resumed when the caller may patch that Notebook
//     (RBAC, tessera.dev notebooks): spec.suspend false and the annotation
//     tessera.dev/resume-from = status.suspendedAt, as `tessera notebook
//     open` writes them (written once: a reload that finds them set writes
//     nothing);
//   - a browser (Accept: text/html) gets 200, Cache-Control: no-store, a small
//     "starting" page with the Notebook's phase and message that reloads itself
//     every 2 seconds, until the pod is ready and the same URL is proxied;
//   - anything else gets 503 ServiceUnavailable with Retry-After: 2, saying
//     what the notebook is doing.
// A caller who may not patch the Notebook is told so (the page, or the 503),
// and nothing is written.
//
// Thread-safety: functions of the store and the authorizer only.
#pragma once

#include <functional>
#include <optional>

#include "auth/user_info.h"
#include "http/http_server.h"
#include "server/api/authorization.h"
#include "server/api/request_info.h"
#include "store/store.h"

namespace tessera {

inline constexpr int kStartingPageRefreshSeconds = 2;

// The answer for a services/proxy request `info` while its notebook does not
// serve, or nullopt: the Service is no notebook's, or its notebook serves
// (proxy on). `backend_unavailable`: the proxy found no ready endpoint
// (false: nullopt at once, nothing looked up). `resumed` is called after the resume was written.
std::optional<HttpResponse> NotebookNotServing(Store& store, const RequestAuthorizer& authorizer, const UserInfo& user,
                                               const RequestInfo& info, const HttpRequest& request,
                                               bool backend_unavailable, const std::function<void()>& resumed);

// The starting page (HTML-escaped).
std::string StartingPage(std::string_view ns, std::string_view name, std::string_view phase, std::string_view message);

}  // namespace tessera
