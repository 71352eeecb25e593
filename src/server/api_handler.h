// ApiHandler: the Kubernetes-style REST API over the Store.
//
// Paths (DESIGN.md section 3):
//   /api/v1/{plural}[/{name}]                          cluster-scoped kinds, or all namespaces
//   /api/v1/namespaces/{ns}/{plural}[/{name}[/status]] namespaced core kinds
//   /apis/{group}/{version}/... the same for other groups
//   /healthz, /readyz, /livez (no token needed)
// Verbs: GET (get; list with ?labelSelector= and paging with ?limit=&continue=,
// list_paging.h; watch with ?watch=true&resourceVersion=N),
// POST (create), PUT (update; 409 when metadata.resourceVersion is stale),
// PATCH (JSON merge patch), DELETE. Bodies are JSON or YAML. Every error is a
// Kubernetes Status object whose message says what to fix; nothing is stored
// when a request fails. Errors about one object use Kubernetes' own words and
// Status.details: `pods "foo" not found`, `pods "foo" already exists`,
// `Operation cannot be fulfilled on pods "foo": the object has been modified; ...`.
//
// Authentication: `Authorization: Bearer <token>`; every request carries an
// Identity (the seam for per-team RBAC).
//
// Thread-safe: called concurrently from the HTTP server's I/O threads.
#pragma once

#include <atomic>
#include <condition_variable>
#include <functional>
#include <mutex>
#include <memory>
#include <string>

#include "http/http_server.h"
#include "server/watch_hub.h"
#include "store/store.h"

namespace tessera {

struct Identity {
  std::string user;
  std::vector<std::string> groups;
  bool admin = false;
};

// Maps a bearer token to an identity; nullopt when the token is unknown.
using Authenticator = std::function<std::optional<Identity>(const std::string& token)>;

// The clock is a seam so that tests can pin creationTimestamp.
using WallClock = std::function<std::string()>;  // RFC 3339, UTC

std::string Rfc3339Now();

class ApiHandler {
 public:
  ApiHandler(Store& store, WatchHub& watches, Authenticator authenticate, WallClock clock = Rfc3339Now);

  // Waits for the writer's callbacks of every create still queued in the
  // store (creates are answered asynchronously, HttpResponse::deferred).
  ~ApiHandler();

  HttpResponse Handle(const HttpRequest& request);

  // Returns once every create already handed to the store has been answered.
  // Call after the HTTP server stopped, before what Written() reaches (the
  // watch hub, the OnWrite callback's target) goes away.
  void WaitForPendingWrites();

  // The token the server presents to agents when it proxies pod logs.
  void SetAgentToken(std::string token) { agent_token_ = std::move(token); }

  // Called after every successful write (the scheduler loop hooks in here).
  void OnWrite(std::function<void()> callback) { on_write_ = std::move(callback); }
  // Serves GET /metrics (Prometheus text format) from `render`, without a token,
  // as kube-state-metrics and node exporters do; unset: /metrics is 404.
  // With `need_token`, /metrics asks for a bearer token like the API (Prometheus'
  // `authorization` scrape setting).
  void SetMetrics(std::function<std::string()> render, bool need_token = false) {
    metrics_ = std::move(render);
    metrics_need_token_ = need_token;
  }

 private:
  struct Route;
  HttpResponse Get(const Route& r, const HttpRequest& req);
  HttpResponse List(const Route& r, const HttpRequest& req);
  HttpResponse Watch(const Route& r, const HttpRequest& req);
  HttpResponse Create(const Route& r, const HttpRequest& req);
  HttpResponse Update(const Route& r, const HttpRequest& req);
  HttpResponse Patch(const Route& r, const HttpRequest& req);
  HttpResponse Delete(const Route& r, const HttpRequest& req);
  void Written();

  Store& store_;
  std::string agent_token_;
  WatchHub& watches_;
  Authenticator authenticate_;
  WallClock clock_;
  std::function<void()> on_write_;
  std::function<std::string()> metrics_;
  bool metrics_need_token_ = false;
  // Creates handed to the store and not yet answered.
  std::atomic<int64_t> pending_writes_{0};
  std::mutex pending_mu_;
  std::condition_variable pending_cv_;  // notified (under pending_mu_) when pending_writes_ reaches 0
};

// An error as an HTTP response carrying a Kubernetes Status object; `details`
// (Status.details: name, group, kind) only when it is a non-empty object.
HttpResponse StatusResponse(int http_code, std::string_view reason, std::string_view message,
                            const nlohmann::json& details = nlohmann::json());
HttpResponse ErrorResponse(const Status& status);

}  // namespace tessera
