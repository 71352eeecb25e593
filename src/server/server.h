// Server: the control plane process (`tessera server`, and the core of `tessera up`):
// the store under the data directory, the admin token and the service account
// signing key, first-start defaults (with the default RBAC roles), the
// authenticators, the watch hub, the REST API, the audit log and the HTTP listener.
//
// The data directory is made mode 0700 and holds, besides the store, the
// admin token (admin.token) and the signing key (service-account.key), both
// mode 0600: nothing else on the machine, pods included, can read them.
#pragma once

#include <memory>
#include <optional>
#include <string>

#include "auth/oidc.h"
#include "auth/service_account_tokens.h"
#include "common/result.h"
#include "domain/ipv4_cidr.h"
#include "http/http_server.h"
#include "server/api/audit_log.h"
#include "server/api/user_rate_limiter.h"

namespace tessera {

struct ServerOptions {
  std::string data_dir = "./tessera-data";
  HttpServerOptions http;  // listen address, threads, TLS
  bool metrics_need_token = false;  // GET /metrics without a token unless set
  // Identities (kube-apiserver's flags): --token-auth-file, the service account
  // issuer (--service-account-issuer, --api-audiences,
  // --service-account-max-token-expiration), OIDC (--oidc-*).
  std::string token_auth_file;
  TokenIssuerOptions service_accounts;
  std::optional<OidcOptions> oidc;
  AuditLogOptions audit;  // empty path: no audit log
  UserRateLimit rate;
  // Each Node's spec.podCIDR is cut from this range (kube-controller-manager's
  // --cluster-cidr and --node-cidr-mask-size, with the defaults of kubeadm's
  // flannel setups: 10.244.0.0/16 in /24s, 256 nodes of 254 pod addresses).
  std::string cluster_cidr = "10.244.0.0/16";
  int node_cidr_mask_size = 24;
  // Services' cluster IPs are allocated from this range (kube-apiserver's
  // --service-cluster-ip-range and its default); it may not overlap cluster_cidr.
  std::string service_cluster_ip_range = "10.96.0.0/12";
  // The shared filesystem PersistentVolumeClaims live on, as the agents mount it
  // (their --volume-root): the directories of deleted claims are removed from it
  // (claim_reclaimer.h). Empty: the server leaves them (Retain, in effect).
  std::string volume_root;
  // The portal's build (web/dist), served at /ui/ (portal_files.h); empty: none.
  std::string ui_dir;
};

// The node ranges `options` asks for; InvalidArgument naming the flag
// (--cluster-cidr, --node-cidr-mask-size) and what to write instead.
Result<NodeCidrSet> NodeCidrsOf(const ServerOptions& options);
// The Services' range `options` asks for (service_ip_allocator.h); InvalidArgument
// naming --service-cluster-ip-range, also when it overlaps --cluster-cidr.
Result<Ipv4Cidr> ServiceCidrOf(const ServerOptions& options);

class Server {
 public:
  ~Server();
  // Opens (or creates) the data directory and starts serving.
  static Result<std::unique_ptr<Server>> Start(ServerOptions options);
  void Stop();

  uint16_t port() const;
  std::string url() const;
  // The URL of its HTTPS side ("" without TLS): url() itself, or, when the port
  // serves plain HTTP too (`tessera up`), the same port as https://.
  std::string https_url() const;
  const std::string& admin_token() const { return admin_token_; }
  // The service account issuer: node credentials for `tessera up`'s own agent.
  const TokenIssuer& issuer() const;

 private:
  Server() = default;
  struct Parts;
  std::unique_ptr<Parts> parts_;
  std::string admin_token_;
  std::string scheme_;
  bool tls_ = false;
  std::string host_;
};

// Reads <dir>/admin.token, creating it (random, mode 0600) when missing.
Result<std::string> LoadOrCreateAdminToken(const std::string& data_dir);

// The objects a new installation starts with, so that a user can submit at once:
// namespace default, the four priority classes of DESIGN.md, a default flavor,
// ClusterQueue and LocalQueue, and the default RBAC roles and bindings
// (auth/bootstrap_policy.h). Creates only what is missing, and brings the
// RBAC defaults back to their shipped rules unless an admin annotated them
// rbac.authorization.kubernetes.io/autoupdate: "false" (kube-apiserver's rule).
Status BootstrapDefaults(class Store& store, const std::string& now);

}  // namespace tessera
