// ApiHandler: the Kubernetes-style REST API over the Store.
//
// Paths (DESIGN.md section 3; request_info.h parses them):
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
// Every request, in order (DESIGN.md section 12):
//   1. authentication (auth/authenticator.h): 401 Unauthorized saying why. A
//      token that needs a network round trip first (an OIDC issuer's keys not
//      fetched yet) is authenticated, and its request served, on a worker
//      thread, answered through HttpResponse::deferred: an identity provider
//      that is slow or gone never holds an I/O thread. On a pods/proxy or
//      services/proxy path only, a browser's ?tessera-login= code is traded
//      for a session cookie, and without a bearer token that cookie
//      authenticates (proxy_login.h);
//   2. the user's request rate (user_rate_limiter.h): 429 with Retry-After;
//   3. authorization (authorization.h: system:masters, the node rules, RBAC):
//      403 Forbidden in Kubernetes' words; for a node's agent acting on a pod,
//      the pod must be bound to that node;
//   4. the request itself, where writes of RBAC objects are checked for
//      escalation, a create is stamped with who made it (the annotation
//      tessera.dev/created-by, which no client can set or change: usage
//      reports count by it), and status is written only through /status
//      (a PATCH of an object keeps its stored status, as PUT does); a Service
//      gets its defaults and its cluster IP (service_ip_allocator.h) before it
//      is written, and its address is freed when the write fails or the
//      Service is deleted; an update keeps the address (api/service.h);
//   5. the audit log (audit_log.h): every request that changes state, and
//      every refusal.
// Writes of RBAC objects and ServiceAccounts are applied to the AuthState
// before the answer, so that the next request is authorized by them.
//
// Thread-safe: called concurrently from the HTTP server's I/O threads.
#pragma once

#include <atomic>
#include <condition_variable>

#include <boost/asio/thread_pool.hpp>
#include <functional>
#include <mutex>
#include <memory>
#include <string>
#include <variant>

#include "api/convert.h"
#include "auth/authenticator.h"
#include "auth/service_account_tokens.h"
#include "http/http_server.h"
#include "http/reverse_proxy.h"
#include "server/api/api_errors.h"
#include "server/api/audit_log.h"
#include "server/api/claim_admission.h"
#include "server/api/proxy_login.h"
#include "server/auth_state.h"
#include "server/api/authorization.h"
#include "server/api/request_info.h"
#include "server/api/scheduling_review.h"
#include "server/api/service_ip_allocator.h"
#include "server/api/user_rate_limiter.h"
#include "server/api/table_output.h"
#include "server/api/watch_hub.h"
#include "store/store.h"

namespace tessera {

// The clock is a seam so that tests can pin creationTimestamp.
using WallClock = std::function<std::string()>;  // RFC 3339, UTC

std::string Rfc3339Now();

// What the handler authenticates, authorizes, limits and audits with. Every
// pointer but `audit` is required and must outlive the handler.
class ServiceTraffic;

struct ApiSecurity {
  Authenticator* authenticator = nullptr;
  AuthState* auth = nullptr;
  const TokenIssuer* issuer = nullptr;
  AuditLog* audit = nullptr;  // null: no audit log
  UserRateLimit rate;
};

class ApiHandler {
 public:
  ApiHandler(Store& store, WatchHub& watches, ApiSecurity security, WallClock clock = Rfc3339Now);

  // Waits for the writer's callbacks of every create still queued in the
  // store (creates are answered asynchronously, HttpResponse::deferred).
  ~ApiHandler();

  HttpResponse Handle(const HttpRequest& request);

  // Returns once every create already handed to the store has been answered.
  // Call after the HTTP server stopped, before what Written() reaches (the
  // watch hub, the OnWrite callback's target) goes away.
  void WaitForPendingWrites();

  // The URL clients reach this server at (the jwks_uri of the discovery document).
  void SetServerUrl(std::string url) { server_url_ = std::move(url); }

  // Gives each Service created its cluster IP from `ips` (service_ip_allocator.h),
  // and frees it when the Service is deleted. Call before serving; unset, a
  // Service that needs an address is refused. `ips` must outlive the handler.
  void SetServiceIps(ServiceIpAllocator* ips) { service_ips_ = ips; }
  // Counts the services proxy's in-flight requests and holds those to an
  // InferenceService at zero replicas (service_traffic.h); unset: neither.
  // `traffic` must outlive the handler.
  void SetServiceTraffic(ServiceTraffic* traffic) { traffic_ = traffic; }

  // Answers SchedulingReviews (scheduling_review.h); unset, they get a 503.
  void SetForecaster(Forecaster forecaster) { forecaster_ = std::move(forecaster); }

  // Called after every successful write (the scheduler loop hooks in here).
  void OnWrite(std::function<void()> callback) { on_write_ = std::move(callback); }
  // Serves GET /metrics (Prometheus text format) from `render`, without a token,
  // as kube-state-metrics and node exporters do; unset: /metrics is 404.
  // With `need_token`, /metrics asks for a bearer token like the API (Prometheus'
  // `authorization` scrape setting) and RBAC's nonResourceURL /metrics.
  void SetMetrics(std::function<std::string()> render, bool need_token = false) {
    metrics_ = std::move(render);
    metrics_need_token_ = need_token;
  }

 private:
  struct Call;  // one request, once authenticated and authorized
  // Handle, after /healthz and the open /metrics; `may_block`: may wait for an
  // identity provider (on the worker only).
  HttpResponse Serve(const HttpRequest& req, bool may_block);
  HttpResponse Metrics() const;
  HttpResponse Dispatch(Call& call);
  HttpResponse NonResource(Call& call);
  HttpResponse Get(Call& call);
  HttpResponse List(Call& call);
  HttpResponse WholeList(const KindInfo& kind, const std::string& ns);
  // The Table kubectl asks for (Accept: ...;as=Table;g=meta.k8s.io), nullopt
  // when none; InvalidArgument for a bad ?includeObject=.
  Result<std::optional<TableOptions>> TableAsked(const Call& call);
  int64_t DefaultPriority();
  std::function<nlohmann::json(const nlohmann::json&)> NodeProjection(const Call& call) const;
  HttpResponse Watch(Call& call);
  HttpResponse Create(Call& call);
  HttpResponse Update(Call& call);
  HttpResponse Patch(Call& call);
  HttpResponse ServerSideApply(Call& call);
  // Reads the object, makes its next state with `change` (or the refusal to
  // answer), and writes it as a patch does (status kept, validation, admission,
  // generation), again on a conflicting write; `pinned`: a resourceVersion the
  // client required (0: none).
  // `answer`: what to answer with the written object (default: the object itself).
  HttpResponse ChangeObject(Call& call, int64_t pinned, bool track_fields,
                            const std::function<std::variant<nlohmann::json, HttpResponse>(const nlohmann::json&)>& change,
                            const std::function<nlohmann::json(const nlohmann::json&)>& answer = {});
  HttpResponse Scale(Call& call);
  void TrackFields(const Call& call, const nlohmann::json& previous, nlohmann::json& next) const;
  std::optional<HttpResponse> ApplyFieldValidation(Call& call, nlohmann::json& object) const;
  HttpResponse Delete(Call& call);
  // pods/proxy and services/proxy (proxy.h).
  // What a relayed request (proxy, exec) calls when its backend answers: its audit record.
  ProxyAnswered AuditWhenAnswered(Call& call);
  HttpResponse Proxy(Call& call);
  HttpResponse Exec(Call& call);  // pods/exec: server/api/pod_exec.h
  // Whether the call goes into the audit log: every refusal, and every change.
  bool Audited(const Call& call, bool refused) const;
  // Records an answered call in the audit log when it changed state or was
  // refused (a deferred answer when it comes).
  HttpResponse Finish(const Call& call, HttpResponse response, bool refused = false);
  AuditEvent StartAudit(const Call& call) const;  // what the request says
  void CompleteAudit(AuditEvent event, const HttpResponse& response);  // and its answer
  // After a successful write: watchers, the scheduler, and (for the kinds it
  // follows) the AuthState.
  void Written();
  void WrittenObject(const StoredObject& object);
  // The answer to a write the user's own permissions forbid (escalation), or nullopt.
  std::optional<HttpResponse> EscalationError(const Call& call, const nlohmann::json& object) const;
  // A Service's defaults (api/service.h) and its cluster IP: the next free
  // one, or the one asked for when it is in the range and free. The address
  // now held for it (the caller frees it when the create fails); nullopt for a
  // headless Service. InvalidArgument or Internal in kube-apiserver's words.
  Result<std::optional<uint32_t>> AssignClusterIp(nlohmann::json& service);
  // What an update or a patch of an object (not its status) must pass, in
  // order: a Service keeps its allocated fields and gets its defaults, the
  // kind's update rules, node binding, escalation, pod security. The refusal,
  // or nullopt.
  std::optional<HttpResponse> AdmitChange(const Call& call, const nlohmann::json& stored, nlohmann::json& next) const;
  // The answer to a write that would bind a pod to a node (or move it) by
  // anyone but system:masters, or nullopt.
  std::optional<HttpResponse> NodeNameChangeError(const Call& call, const nlohmann::json& stored,
                                                  const nlohmann::json& next) const;

  Store& store_;
  WatchHub& watches_;
  ApiSecurity security_;
  RequestAuthorizer authorizer_;
  UserRateLimiter rate_;
  WallClock clock_;
  std::string server_url_;
  std::function<void()> on_write_;
  ServiceIpAllocator* service_ips_ = nullptr;
  ServiceTraffic* traffic_ = nullptr;
  Forecaster forecaster_;
  std::function<std::string()> metrics_;
  bool metrics_need_token_ = false;
  // Creates handed to the store and not yet answered.
  std::atomic<int64_t> pending_writes_{0};
  ClaimAdmission claims_;  // PersistentVolumeClaims: bound and charged on create
  ProxyLogins proxy_logins_;  // the proxy's login codes not yet used (proxy_login.h)
  std::mutex pending_mu_;
  std::condition_variable pending_cv_;  // notified (under pending_mu_) when pending_writes_ reaches 0
  // Serves the requests whose token needs an identity provider first.
  boost::asio::thread_pool slow_auth_{1};
  // Replays SimulationReviews (seconds of CPU each), one at a time, off the I/O threads.
  boost::asio::thread_pool simulations_{1};
};

}  // namespace tessera
