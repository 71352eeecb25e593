#include "server/server.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <spdlog/spdlog.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <chrono>
#include <random>

#include "api/convert.h"
#include "api/service.h"
#include "auth/authenticator.h"
#include "auth/bootstrap_policy.h"
#include "server/default_templates.h"
#include "server/portal_files.h"
#include "auth/rbac.h"
#include "client/api_client.h"
#include "common/time_format.h"
#include "domain/priority_class.h"
#include "server/api/api_handler.h"
#include "server/auth_state.h"
#include "server/scheduler_loop.h"
#include "server/api/service_ip_allocator.h"
#include "server/api/service_traffic.h"
#include "server/api/watch_hub.h"
#include "server/object_json.h"
#include "store/sqlite_store.h"

namespace tessera {

struct Server::Parts {
  MetricsRegistry metrics;  // first: outlives everything that updates or serves it
  std::unique_ptr<Store> store;
  std::unique_ptr<TokenIssuer> issuer;
  std::unique_ptr<AuthState> auth;
  std::unique_ptr<Authenticator> authenticator;
  std::unique_ptr<AuditLog> audit;
  std::unique_ptr<ServiceIpAllocator> service_ips;
  std::unique_ptr<ServiceTraffic> traffic;  // the services proxy's load, held requests
  std::unique_ptr<WatchHub> watches;
  std::unique_ptr<ApiHandler> api;
  std::unique_ptr<PortalFiles> portal;
  std::unique_ptr<SchedulerLoop> scheduler;
  std::unique_ptr<HttpServer> http;
};

Result<std::string> LoadOrCreateAdminToken(const std::string& data_dir) {
  const std::string path = data_dir + "/admin.token";
  std::ifstream in(path);
  if (in) {
    std::string token;
    std::getline(in, token);
    if (!token.empty()) return token;
  }
  std::random_device rd;
  std::string token;
  for (int i = 0; i < 4; ++i) token += fmt::format("{:016x}", (uint64_t{rd()} << 32) | rd());
  const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
  if (fd < 0) return Err(Status::IoError(fmt::format("cannot write {}: {}", path, std::strerror(errno))));
  const std::string line = token + "\n";
  const bool ok = ::write(fd, line.data(), line.size()) == static_cast<ssize_t>(line.size()) && ::fsync(fd) == 0;
  ::close(fd);
  if (!ok) return Err(Status::IoError(fmt::format("cannot write {}", path)));
  ::chmod(path.c_str(), 0600);
  return token;
}

namespace {

// GETs an https:// URL (an OIDC issuer's discovery document and keys), trusting `ca_file` when set.
Result<std::string> FetchUrl(const std::string& url, const std::string& ca_file) {
  const size_t scheme = url.find("://");
  const size_t path = scheme == std::string::npos ? std::string::npos : url.find('/', scheme + 3);
  const std::string base = path == std::string::npos ? url : url.substr(0, path);
  const std::string target = path == std::string::npos ? "/" : url.substr(path);
  ApiClient client(base, "", TlsClientOptions{.certificate_authority = ca_file}, std::chrono::seconds(10));
  client.DescribePeer("the identity provider",
                      "pass --oidc-ca-file FILE with the CA certificate that signed the identity provider's");
  ASSIGN_OR_RETURN(ApiResponse r, client.Request("GET", target));
  if (r.status != 200) return Err(Status::Unavailable(fmt::format("GET {}: HTTP {}", url, r.status)));
  return std::move(r.body);
}

// Appends to `list` the items of `shipped` it does not hold. Returns whether it did.
bool AppendMissing(nlohmann::json& list, const nlohmann::json& shipped) {
  if (!list.is_array()) list = nlohmann::json::array();
  bool changed = false;
  for (const nlohmann::json& item : shipped) {
    if (std::find(list.begin(), list.end(), item) != list.end()) continue;
    list.push_back(item);
    changed = true;
  }
  return changed;
}

// The default RBAC objects (kube-apiserver's reconciliation at start): created
// when missing; otherwise given back what they lack of the shipped rules,
// aggregation selectors, subjects and labels, keeping what an admin added,
// unless an admin set rbac.authorization.kubernetes.io/autoupdate to "false".
// A binding whose roleRef was changed gets the shipped one back.
Status BootstrapRbac(Store& store, const std::string& now) {
  for (nlohmann::json obj : BootstrapRbacObjects()) {
    const std::string kind = "rbac.authorization.k8s.io/" + obj["kind"].get<std::string>();
    const std::string name = obj["metadata"]["name"];
    const ObjectKey key{kind, "", name};
    auto current = store.Get(key);
    if (current) {
      const nlohmann::json& stored = current->object;
      const std::string autoupdate = StringAt(stored, {"metadata", "annotations", kAutoupdateAnnotation});
      if (autoupdate == "false") continue;  // as kube-apiserver: only "false" opts out
      nlohmann::json next = stored;
      bool changed = false;
      if (obj.contains("aggregationRule")) {
        // An aggregated role's rules are the aggregation's: only its selectors are ours.
        changed |= AppendMissing(next["aggregationRule"]["clusterRoleSelectors"],
                                 obj["aggregationRule"]["clusterRoleSelectors"]);
      } else if (obj.contains("rules")) {
        auto held = PolicyRulesFromJson(next.value("rules", nlohmann::json::array()));
        if (!held) held = std::vector<PolicyRule>{};  // unreadable rules: add every shipped one
        for (const nlohmann::json& rule : obj["rules"]) {
          auto wanted = PolicyRulesFromJson(nlohmann::json::array({rule}));
          if (!wanted || UncoveredRules(*held, *wanted).empty()) continue;
          if (!next["rules"].is_array()) next["rules"] = nlohmann::json::array();
          next["rules"].push_back(rule);
          changed = true;
        }
      }
      if (obj.contains("roleRef") && next.value("roleRef", nlohmann::json()) != obj["roleRef"]) {
        next["roleRef"] = obj["roleRef"];
        changed = true;
      }
      if (obj.contains("subjects")) changed |= AppendMissing(next["subjects"], obj["subjects"]);
      for (const auto& [k, v] : obj["metadata"]["labels"].items()) {
        if (!next["metadata"]["labels"].contains(k)) {
          next["metadata"]["labels"][k] = v;
          changed = true;
        }
      }
      if (!changed) continue;
      auto updated = store.Update(key, std::move(next), current->revision);
      if (!updated && updated.error().code() != StatusCode::kConflict) return updated.error();
      continue;
    }
    obj["metadata"]["creationTimestamp"] = now;
    auto created = store.Create(key, std::move(obj));
    if (!created && created.error().code() != StatusCode::kAlreadyExists) return created.error();
  }
  return Status::Ok();
}

}  // namespace

Status BootstrapDefaults(Store& store, const std::string& now) {
  auto ensure = [&](const std::string& kind, const std::string& ns, nlohmann::json obj) -> Status {
    const std::string name = obj["metadata"]["name"];
    if (store.Get(ObjectKey{kind, ns, name})) return Status::Ok();
    obj["metadata"]["creationTimestamp"] = now;
    obj["metadata"]["generation"] = 1;
    obj["metadata"]["labels"]["tessera.dev/default"] = "true";
    auto created = store.Create(ObjectKey{kind, ns, name}, std::move(obj));
    if (!created && created.error().code() != StatusCode::kAlreadyExists) return created.error();
    return Status::Ok();
  };
  RETURN_IF_ERROR(ensure("/Namespace", "", {{"apiVersion", "v1"}, {"kind", "Namespace"}, {"metadata", {{"name", "default"}}},
                                                    {"status", {{"phase", "Active"}}}}));
  // Where agents keep their nodes' Leases (Kubernetes' kube-node-lease).
  RETURN_IF_ERROR(ensure("/Namespace", "",
                         {{"apiVersion", "v1"}, {"kind", "Namespace"}, {"metadata", {{"name", "tessera-node-lease"}}},
                          {"status", {{"phase", "Active"}}}}));
  for (const PriorityClass& pc : DefaultPriorityClasses()) {
    nlohmann::json obj{{"apiVersion", "scheduling.k8s.io/v1"},
                       {"kind", "PriorityClass"},
                       {"metadata", {{"name", pc.name}}},
                       {"value", pc.value},
                       {"globalDefault", pc.global_default},
                       {"preemptionPolicy", pc.preemption_policy == PreemptionPolicy::kNever ? "Never" : "PreemptLowerPriority"}};
    if (pc.non_preemptible) obj["metadata"]["annotations"][std::string(kPreemptibleAnnotation)] = "false";
    RETURN_IF_ERROR(ensure("scheduling.k8s.io/PriorityClass", "", std::move(obj)));
  }
  RETURN_IF_ERROR(ensure("kueue.x-k8s.io/ResourceFlavor", "",
                         {{"apiVersion", "kueue.x-k8s.io/v1beta1"}, {"kind", "ResourceFlavor"}, {"metadata", {{"name", "default"}}}}));
  // Nominal quota large enough that, until an admin sets real quotas, capacity is the only limit.
  RETURN_IF_ERROR(ensure(
      "kueue.x-k8s.io/ClusterQueue", "",
      {{"apiVersion", "kueue.x-k8s.io/v1beta1"},
       {"kind", "ClusterQueue"},
       {"metadata", {{"name", "default"}}},
       {"spec",
        {{"namespaceSelector", nlohmann::json::object()},
         {"preemption", {{"withinClusterQueue", "LowerPriority"}}},
         {"resourceGroups",
          {{{"coveredResources", {"cpu", "memory", "nvidia.com/gpu"}},
            {"flavors",
             {{{"name", "default"},
               {"resources",
                {{{"name", "cpu"}, {"nominalQuota", "100000"}},
                 {{"name", "memory"}, {"nominalQuota", "1000Ti"}},
                 {{"name", "nvidia.com/gpu"}, {"nominalQuota", "10000"}}}}}}}}}}}}}));
  RETURN_IF_ERROR(ensure("kueue.x-k8s.io/LocalQueue", "default",
                         {{"apiVersion", "kueue.x-k8s.io/v1beta1"},
                          {"kind", "LocalQueue"},
                          {"metadata", {{"name", "default"}, {"namespace", "default"}}},
                          {"spec", {{"clusterQueue", "default"}}}}));
  for (nlohmann::json t : DefaultTemplates()) RETURN_IF_ERROR(ensure("tessera.dev/Template", "", std::move(t)));
  return BootstrapRbac(store, now);
}

Server::~Server() { Stop(); }

Result<NodeCidrSet> NodeCidrsOf(const ServerOptions& options) {
  auto cluster = ParseIpv4Cidr(options.cluster_cidr);
  if (!cluster) return Err(Status::InvalidArgument(fmt::format("--cluster-cidr {}", cluster.error().message())));
  auto ranges = MakeNodeCidrSet(*cluster, options.node_cidr_mask_size);
  if (!ranges) {
    return Err(Status::InvalidArgument(
        fmt::format("--node-cidr-mask-size {}: {}", options.node_cidr_mask_size, ranges.error().message())));
  }
  return *ranges;
}

Result<Ipv4Cidr> ServiceCidrOf(const ServerOptions& options) {
  ASSIGN_OR_RETURN(const Ipv4Cidr range, ServiceIpAllocator::ParseRange(options.service_cluster_ip_range));
  auto cluster = ParseIpv4Cidr(options.cluster_cidr);
  if (cluster && cluster->Overlaps(range)) {
    return Err(Status::InvalidArgument(fmt::format(
        "--service-cluster-ip-range {} overlaps --cluster-cidr {}: Services' addresses and pods' must not meet; "
        "choose ranges apart (the defaults are 10.96.0.0/12 and 10.244.0.0/16)",
        range.ToString(), cluster->ToString())));
  }
  return range;
}

Result<std::unique_ptr<Server>> Server::Start(ServerOptions options) {
  ASSIGN_OR_RETURN(const NodeCidrSet node_cidrs, NodeCidrsOf(options));
  ASSIGN_OR_RETURN(const Ipv4Cidr service_range, ServiceCidrOf(options));
  std::error_code ec;
  std::filesystem::create_directories(options.data_dir, ec);
  if (ec) {
    return Err(Status::IoError(fmt::format("cannot create data directory {}: {}", options.data_dir, ec.message())));
  }
  // The store, the admin token and the signing key are the server's alone.
  if (::chmod(options.data_dir.c_str(), 0700) != 0) {
    return Err(Status::IoError(fmt::format("cannot make the data directory {} private (mode 0700): {}",
                                           options.data_dir, std::strerror(errno))));
  }
  std::unique_ptr<Server> server(new Server());
  server->parts_ = std::make_unique<Parts>();
  Parts& p = *server->parts_;
  ASSIGN_OR_RETURN(p.store, OpenSqliteStore(options.data_dir + "/tessera.db"));
  ::chmod((options.data_dir + "/tessera.db").c_str(), 0600);
  ASSIGN_OR_RETURN(server->admin_token_, LoadOrCreateAdminToken(options.data_dir));
  ASSIGN_OR_RETURN(SigningKey key, TokenIssuer::LoadOrCreateSigningKey(options.data_dir + "/service-account.key"));
  p.issuer = std::make_unique<TokenIssuer>(std::move(key), options.service_accounts);
  RETURN_IF_ERROR(BootstrapDefaults(*p.store, Rfc3339Now()));
  p.auth = std::make_unique<AuthState>(*p.store);
  RETURN_IF_ERROR(p.auth->Start());
  std::unique_ptr<TokenFileAuthenticator> token_file;
  if (!options.token_auth_file.empty()) {
    ASSIGN_OR_RETURN(token_file, TokenFileAuthenticator::Open(options.token_auth_file));
  }
  std::unique_ptr<OidcAuthenticator> oidc;
  if (options.oidc) {
    const std::string ca = options.oidc->ca_file;
    ASSIGN_OR_RETURN(oidc, OidcAuthenticator::Create(*options.oidc, [ca](const std::string& url) { return FetchUrl(url, ca); }));
  }
  AuthState* auth = p.auth.get();
  p.authenticator = std::make_unique<Authenticator>(
      server->admin_token_, std::move(token_file), p.issuer.get(), std::move(oidc),
      Authenticator::Lookups{
          .service_account_exists = [auth](std::string_view ns, std::string_view name,
                                           std::string_view uid) { return auth->ServiceAccountExists(ns, name, uid); },
          .pod_exists = [auth](std::string_view ns, std::string_view name,
                               std::string_view uid) { return auth->PodExists(ns, name, uid, SystemNow()); }});
  if (!options.audit.path.empty()) {
    ASSIGN_OR_RETURN(p.audit, AuditLog::Open(options.audit));
  }
  // The Services' addresses held are those the stored Services hold.
  p.service_ips = std::make_unique<ServiceIpAllocator>(service_range);
  {
    ASSIGN_OR_RETURN(ListResult services, p.store->List(kServiceKind, ""));
    std::vector<nlohmann::json> objects;
    objects.reserve(services.items.size());
    for (StoredObject& o : services.items) objects.push_back(std::move(o.object));
    p.service_ips->Restore(objects);
  }
  p.watches = std::make_unique<WatchHub>(*p.store);
  p.api = std::make_unique<ApiHandler>(*p.store, *p.watches,
                                       ApiSecurity{.authenticator = p.authenticator.get(),
                                                   .auth = p.auth.get(),
                                                   .issuer = p.issuer.get(),
                                                   .audit = p.audit.get(),
                                                   .rate = options.rate});
  p.api->SetServiceIps(p.service_ips.get());
  WatchHub* watches = p.watches.get();
  p.scheduler = std::make_unique<SchedulerLoop>(*p.store, SchedulerConfig{}, SystemNow, [watches] { watches->Notify(); });
  SchedulerLoop* scheduler = p.scheduler.get();
  p.api->OnWrite([scheduler] { scheduler->Kick(); });
  p.traffic = std::make_unique<ServiceTraffic>([scheduler] { scheduler->Kick(); });
  p.api->SetServiceTraffic(p.traffic.get());
  p.scheduler->SetServiceTraffic(p.traffic.get());
  p.api->SetForecaster([scheduler](nlohmann::json object) {
    return scheduler->Forecast(std::move(object), std::chrono::seconds(10));
  });
  p.scheduler->SetAggregatedRules([auth](const std::string& name) { return auth->rbac().RoleRules("", name); });
  // Who may approve in a namespace: whom RBAC lets update approvalrequests/approval there.
  p.scheduler->SetApprovers([auth](const std::string& ns) {
    std::vector<std::string> out;
    const RbacAttributes approve{.verb = "update", .api_group = "tessera.dev", .resource = "approvalrequests",
                                 .subresource = "approval", .ns = ns};
    for (const RbacSubject& s : auth->rbac().SubjectsAllowed(approve)) {
      const char* kind = s.kind == RbacSubject::Kind::kUser    ? "user"
                         : s.kind == RbacSubject::Kind::kGroup ? "group"
                                                               : "serviceaccount";
      out.push_back(s.kind == RbacSubject::Kind::kServiceAccount ? fmt::format("{} {}/{}", kind, s.ns, s.name)
                                                                  : fmt::format("{} {}", kind, s.name));
    }
    return out;
  });
  p.scheduler->SetNodeCidrs(node_cidrs);
  if (!options.volume_root.empty()) p.scheduler->SetVolumeRoot(options.volume_root);
  p.scheduler->SetMetrics(&p.metrics);
  p.traffic->SetMetrics(&p.metrics);
  MetricsRegistry* metrics = &p.metrics;
  p.api->SetMetrics([metrics, scheduler] { return metrics->Render(scheduler->Gauges()); }, options.metrics_need_token);
  p.scheduler->Start();
  p.scheduler->Kick();
  ApiHandler* api = p.api.get();
  nlohmann::json portal_config = {{"oidc", nullptr}};
  if (options.oidc) {
    portal_config["oidc"] = {{"issuerUrl", options.oidc->issuer_url}, {"clientId", options.oidc->client_id}};
  }
  p.portal = std::make_unique<PortalFiles>(options.ui_dir, std::move(portal_config));
  const PortalFiles* portal = p.portal.get();
  p.http = std::make_unique<HttpServer>(options.http, [api, portal](const HttpRequest& r) {
    return PortalFiles::Owns(r.path) ? portal->Serve(r) : api->Handle(r);
  });
  RETURN_IF_ERROR(p.http->Start());
  // A port that serves both is named by its plain-HTTP URL (what browsers and
  // scripts were given); https_url() names its TLS side.
  server->scheme_ = p.http->tls() && !options.http.plain_http_too ? "https" : "http";
  server->tls_ = p.http->tls();
  server->host_ = options.http.host;
  p.api->SetServerUrl(server->url());
  return server;
}

void Server::Stop() {
  if (!parts_) return;
  if (parts_->traffic) parts_->traffic->Stop();  // held requests answered while the HTTP server runs
  if (parts_->http) parts_->http->Stop();
  // Creates still in the store's queue call back into the API handler, the
  // watch hub and the scheduler: let them finish while all three exist.
  if (parts_->api) parts_->api->WaitForPendingWrites();
  if (parts_->scheduler) parts_->scheduler->Stop();
  parts_->scheduler.reset();
  parts_->traffic.reset();
  parts_->watches.reset();
  parts_->api.reset();
  parts_->service_ips.reset();
  parts_->http.reset();
  parts_->audit.reset();  // writes what is still queued
  parts_->authenticator.reset();
  if (parts_->auth) parts_->auth->Stop();
  parts_->auth.reset();
  parts_->store.reset();
  parts_.reset();
}

uint16_t Server::port() const { return parts_ && parts_->http ? parts_->http->port() : 0; }

std::string Server::url() const { return fmt::format("{}://{}:{}", scheme_, host_, port()); }

std::string Server::https_url() const { return tls_ ? fmt::format("https://{}:{}", host_, port()) : ""; }

const TokenIssuer& Server::issuer() const { return *parts_->issuer; }

}  // namespace tessera
