#include "cli/serve_commands.h"

#include <fmt/format.h>
#include <signal.h>
#include <spdlog/spdlog.h>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cctype>
#include <cstring>
#include <filesystem>

#include "agent/gpu_inventory.h"
#include "agent/node_registration.h"
#include "client/api_client.h"
#include "client/client_config.h"
#include "client/kubeconfig.h"
#include "http/serving_certs.h"
#include "common/atomic_file.h"
#include "common/time_format.h"
#include "server/api/api_handler.h"
#include "server/portal_files.h"

namespace tessera {
namespace {

// Blocks the calling thread until SIGINT or SIGTERM. The signals are blocked in
// every thread first (server threads inherit the mask), so only sigwait sees them.
void BlockTerminationSignals(sigset_t* set) {
  sigemptyset(set);
  sigaddset(set, SIGINT);
  sigaddset(set, SIGTERM);
  pthread_sigmask(SIG_BLOCK, set, nullptr);
}

int WaitForTermination(const sigset_t& set) {
  int sig = 0;
  sigwait(&set, &sig);
  return sig;
}

}  // namespace

void AddTlsServingFlags(CLI::App& command, HttpServerOptions& http) {
  command.add_option("--tls-cert-file", http.tls_cert_file, "PEM certificate chain: serve HTTPS")->type_name("FILE");
  command.add_option("--tls-private-key-file", http.tls_key_file, "PEM private key of --tls-cert-file")
      ->type_name("FILE");
}

void AddServerFlags(CLI::App& cmd, ServeOptions& o) {
  cmd.add_option("--listen", o.listen, "Address to serve the API on (HOST:PORT; port 0 picks a free one)");
  cmd.add_option("--data-dir", o.server.data_dir, "Where the store, the admin token and the signing key live");
  AddTlsServingFlags(cmd, o.server.http);
  cmd.add_option("--threads", o.server.http.threads, "HTTP I/O threads")->check(CLI::Range(1, 64));
  cmd.add_flag("--metrics-require-token", o.server.metrics_need_token,
               "GET /metrics asks for a bearer token and RBAC's get on /metrics (default: open)");
  cmd.add_option("--token-auth-file", o.server.token_auth_file,
                 "Users by token, one per line: token,user,uid,\"group1,group2\" (re-read when it changes)")
      ->type_name("FILE");
  cmd.add_option("--service-account-issuer", o.server.service_accounts.issuer,
                 "The iss of the tokens this server signs")
      ->capture_default_str();
  cmd.add_option("--api-audiences", o.api_audiences, "Audiences the API accepts in its tokens (default: the issuer)")
      ->type_name("A,B");
  cmd.add_option("--service-account-max-token-expiration", o.max_token_expiration,
                 "Longest validity a TokenRequest gets (24h, 720h); default: as asked")
      ->type_name("DURATION");
  cmd.add_option("--oidc-issuer-url", o.oidc.issuer_url, "Accept ID tokens of this OpenID Connect issuer (https://)")
      ->type_name("URL");
  cmd.add_option("--oidc-client-id", o.oidc.client_id, "The audience its tokens must have");
  cmd.add_option("--oidc-username-claim", o.oidc.username_claim, "The claim to take the user name from")
      ->capture_default_str();
  cmd.add_option("--oidc-username-prefix", o.oidc_username_prefix,
                 "Put before user names (default: the issuer URL and '#', but none for email; '-': none)");
  cmd.add_option("--oidc-groups-claim", o.oidc.groups_claim, "The claim to take the groups from");
  cmd.add_option("--oidc-groups-prefix", o.oidc.groups_prefix, "Put before each group");
  cmd.add_option("--oidc-required-claim", o.oidc_required_claims, "KEY=VALUE that every token must carry (repeatable)");
  cmd.add_option("--oidc-signing-algs", o.oidc_signing_algs, "Accepted algorithms (default RS256)")->type_name("A,B");
  cmd.add_option("--oidc-ca-file", o.oidc.ca_file, "CA to trust for the issuer's HTTPS")->type_name("FILE");
  cmd.add_option("--oidc-jwks-file", o.oidc.jwks_file, "The issuer's keys (JWKS), for sites that cannot reach it")
      ->type_name("FILE");
  cmd.add_option("--audit-log-path", o.server.audit.path, "Write the audit log here ('-': standard output)")
      ->type_name("FILE");
  cmd.add_option("--audit-log-maxsize", o.server.audit.max_size_mb, "Rotate the audit log at this many megabytes")
      ->check(CLI::NonNegativeNumber);
  cmd.add_option("--audit-log-maxbackup", o.server.audit.max_backups, "Rotated audit logs to keep (0: all)")
      ->check(CLI::NonNegativeNumber);
  cmd.add_option("--audit-log-maxage", o.server.audit.max_age_days, "Days to keep rotated audit logs (0: no limit)")
      ->check(CLI::NonNegativeNumber);
  cmd.add_option("--per-user-qps", o.server.rate.per_second, "Requests a second each user may send (0: no limit)")
      ->check(CLI::NonNegativeNumber)
      ->capture_default_str();
  cmd.add_option("--per-user-burst", o.server.rate.burst, "Requests a user may send at once after a quiet spell")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  cmd.add_option("--cluster-cidr", o.server.cluster_cidr, "The pod network: each Node's spec.podCIDR is cut from it")
      ->type_name("CIDR")
      ->capture_default_str();
  cmd.add_option("--node-cidr-mask-size", o.server.node_cidr_mask_size,
                 "The prefix length of each Node's range of --cluster-cidr")
      ->capture_default_str();
  cmd.add_option("--service-cluster-ip-range", o.server.service_cluster_ip_range,
                 "Services' cluster IPs are allocated from it (/12 to /29; apart from --cluster-cidr)")
      ->type_name("CIDR")
      ->capture_default_str();
  cmd.add_option("--volume-root", o.server.volume_root,
                 "The shared filesystem of PersistentVolumeClaims, as the agents mount it: deleted claims' data is "
                 "removed there (tessera up: DATA_DIR/volumes for both)")
      ->type_name("DIR");
  cmd.add_option("--ui-dir", o.server.ui_dir,
                 "The portal's build, served at /ui/ (default: ../share/tessera/ui beside this program, else the "
                 "source tree's web/dist)")
      ->type_name("DIR");
  cmd.preparse_callback([&o](size_t) { o.oidc_username_prefix_given = false; });
  cmd.get_option("--oidc-username-prefix")->each([&o](const std::string&) { o.oidc_username_prefix_given = true; });
}

namespace {

std::vector<std::string> SplitList(const std::string& text) {
  std::vector<std::string> out;
  for (size_t start = 0; start < text.size();) {
    size_t comma = text.find(',', start);
    if (comma == std::string::npos) comma = text.size();
    if (comma > start) out.push_back(text.substr(start, comma - start));
    start = comma + 1;
  }
  return out;
}

}  // namespace

Status FinishServeOptions(ServeOptions& o) {
  if (o.server.ui_dir.empty()) {
    o.server.ui_dir = PortalFiles::DefaultDir().string();
  } else if (std::error_code ec; !std::filesystem::exists(std::filesystem::path(o.server.ui_dir) / "index.html", ec)) {
    return Status::InvalidArgument(fmt::format(
        "--ui-dir {}: no index.html there; build the portal first (`npm ci && npm run build` in web/ writes web/dist)",
        o.server.ui_dir));
  }
  if (auto ranges = NodeCidrsOf(o.server); !ranges) return ranges.error();
  if (auto range = ServiceCidrOf(o.server); !range) return range.error();
  o.server.service_accounts.api_audiences = SplitList(o.api_audiences);
  if (!o.max_token_expiration.empty()) {
    auto d = ParseDuration(o.max_token_expiration);
    if (!d) return Status::InvalidArgument(fmt::format("--service-account-max-token-expiration: {}", d.error().message()));
    o.server.service_accounts.max_expiration = *d;
  }
  const bool oidc_flags = !o.oidc.client_id.empty() || !o.oidc.groups_claim.empty() || !o.oidc_required_claims.empty() ||
                          !o.oidc.jwks_file.empty();
  if (o.oidc.issuer_url.empty()) {
    if (oidc_flags) return Status::InvalidArgument("the --oidc-* flags need --oidc-issuer-url");
    return Status::Ok();
  }
  OidcOptions oidc = o.oidc;
  if (o.oidc_username_prefix_given) oidc.username_prefix = o.oidc_username_prefix;
  for (const std::string& kv : o.oidc_required_claims) {
    const size_t eq = kv.find('=');
    if (eq == std::string::npos || eq == 0) {
      return Status::InvalidArgument(fmt::format("--oidc-required-claim \"{}\": expected KEY=VALUE", kv));
    }
    oidc.required_claims[kv.substr(0, eq)] = kv.substr(eq + 1);
  }
  if (!o.oidc_signing_algs.empty()) oidc.signing_algs = SplitList(o.oidc_signing_algs);
  o.server.oidc = std::move(oidc);
  return Status::Ok();
}

bool ParseListen(const std::string& listen, HttpServerOptions& http, std::string* error) {
  const auto colon = listen.rfind(':');
  if (colon == std::string::npos || colon == 0) {
    *error = fmt::format("--listen \"{}\": expected HOST:PORT, such as 127.0.0.1:7070", listen);
    return false;
  }
  http.host = listen.substr(0, colon);
  try {
    const int port = std::stoi(listen.substr(colon + 1));
    if (port < 0 || port > 65535) throw std::out_of_range("port");
    http.port = static_cast<uint16_t>(port);
  } catch (const std::exception&) {
    *error = fmt::format("--listen \"{}\": the port must be a number from 0 to 65535", listen);
    return false;
  }
  return true;
}

namespace {

// Blocks the termination signals, then starts the server; on failure prints why
// and sets `exit_code` (2: a bad --listen, 1: the server could not start).
std::unique_ptr<Server> StartForeground(ServeOptions& options, sigset_t* set, int* exit_code) {
  BlockTerminationSignals(set);
  std::string error;
  if (!ParseListen(options.listen, options.server.http, &error)) {
    fmt::print(stderr, "error: {}\n", error);
    *exit_code = 2;
    return nullptr;
  }
  if (Status s = FinishServeOptions(options); !s.ok()) {
    fmt::print(stderr, "error: {}\n", s.message());
    *exit_code = 2;
    return nullptr;
  }
  auto server = Server::Start(options.server);
  if (!server) {
    fmt::print(stderr, "error: {}\n", server.error().message());
    *exit_code = 1;
    return nullptr;
  }
  return std::move(*server);
}

}  // namespace

int RunServerCommand(ServeOptions options) {
  sigset_t set;
  int rc = 0;
  std::unique_ptr<Server> server = StartForeground(options, &set, &rc);
  if (!server) return rc;
  // Scripts read this line to find the port when they ask for port 0.
  fmt::print("tessera server listening on {} (data directory {})\n", server->url(), options.server.data_dir);
  std::fflush(stdout);
  const int sig = WaitForTermination(set);
  spdlog::info("signal {}: shutting down", sig);
  server->Stop();
  return 0;
}

Status WriteSecretFile(const std::string& path, const std::string& secret) {
  return WriteFileAtomically(path, secret + "\n", 0600, {.create_parent = true});
}

std::string ThisNodeName() {
  char host[256] = {};
  gethostname(host, sizeof(host) - 1);
  std::string name = host[0] ? host : "localhost";
  for (char& c : name) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return name;
}

std::vector<std::string> FenceCommand(const std::string& data_dir, Duration lease) {
  std::error_code ec;
  const std::string self = std::filesystem::read_symlink("/proc/self/exe", ec).string();
  if (ec) return {};
  return {self, "agent-fence", "--data-dir", data_dir, "--lease-ms", std::to_string(lease.ms)};
}

void AddPodNetworkFlag(CLI::App& command, std::string& mode) {
  command
      .add_option("--pod-network", mode,
                  "bridge: each pod its own network namespace and an IP of the node's podCIDR (NetworkPolicy "
                  "applies); host: pods share the node's network")
      ->check(CLI::IsMember({"bridge", "host"}))
      ->capture_default_str();
}

void AddLogRetentionFlag(CLI::App& command, std::string& retention) {
  command.add_option("--log-retention", retention,
                     "How long the logs (and directory) of a pod gone from the node are kept, like 72h or 30m")
      ->type_name("DURATION")
      ->capture_default_str();
}

AgentOptions::PodNetworkMode PodNetworkMode(const std::string& mode) {
  return mode == "host" ? AgentOptions::PodNetworkMode::kHost : AgentOptions::PodNetworkMode::kBridge;
}

void AddAgentFlags(CLI::App& command, AgentCommandOptions& o) {
  command.add_option("--server", o.client.server, "Tessera API server URL (else TESSERA_SERVER)");
  command.add_option("--token-file", o.agent.token_file,
                     "The node's credential (`tessera create node-token NODE`), in a file only root reads")
      ->type_name("FILE");
  command.add_option("--certificate-authority", o.client.certificate_authority, "PEM file of the CA to trust")
      ->type_name("FILE");
  command.add_flag("--insecure-skip-tls-verify", o.client.insecure_skip_tls_verify, "Accept any server certificate");
  command.add_option("--node", o.agent.node_name, "Node name (default: this host's name)");
  command.add_option("--gpus", o.agent.gpus.simulated,
                     "Simulated GPU inventory when there is no NVIDIA driver: COUNTxMODEL-MEMORY, or a file");
  command.add_option("--data-dir", o.agent.data_dir, "Agent state, pod logs and working directories")
      ->type_name("DIR");
  command.add_option("--checkpoint-root", o.agent.checkpoint_root,
                     "Where TESSERA_CHECKPOINT_DIR lives (shared storage on a fleet; default DATA_DIR/checkpoints)")
      ->type_name("DIR");
  command.add_option("--volume-root", o.agent.volume_root,
                     "The node's mount of the shared filesystem PersistentVolumeClaims live on (NFS; none: no claims)")
      ->type_name("DIR");
  command.add_option("--address", o.agent.address, "How other nodes reach this one (MASTER_ADDR of gangs)");
  command.add_option("--lease-duration", o.lease_seconds, "Seconds without a renewal before the node is NotReady")
      ->check(CLI::Range(1, 3600));
  command.add_option("--usage-interval", o.usage_seconds,
                     "Seconds between GPU utilisation samples published on the Node (0: none)")
      ->check(CLI::Range(0, 3600));
  command.add_option("--label", o.labels, "Node label KEY=VALUE (flavor, rack); repeatable");
  command.add_option("--pod-user", o.agent.pod_user,
                     "UID[:GID] for pods that do not say (default: the first uid of their namespace's block)")
      ->type_name("UID[:GID]");
  command.add_option("--image-store", o.agent.image_store,
                     "The node's container images, shared by its pods (default DATA_DIR/images)")
      ->type_name("DIR");
  command.add_option("--runc", o.agent.runc, "The OCI runtime that runs container pods")->type_name("PATH");
  command.add_option("--device-root", o.agent.device_root,
                     "Where the GPUs' device nodes are (nvidia0, nvidiactl, nvidia-uvm), for GPU containers")
      ->type_name("DIR")
      ->capture_default_str();
  command.add_option("--insecure-registry", o.agent.insecure_registries,
                     "A registry (HOST[:PORT]) spoken to over plain HTTP; loopback ones always are; repeatable")
      ->type_name("HOST[:PORT]");
  AddPodNetworkFlag(command, o.pod_network);
  AddLogRetentionFlag(command, o.log_retention);
  command.add_option("--cluster-cidr", o.agent.cluster_cidr,
                     "The server's --cluster-cidr: pods' traffic beyond it is masqueraded")
      ->capture_default_str();
}

int RunAgentCommand(AgentCommandOptions o) {
  o.agent.pod_network = PodNetworkMode(o.pod_network);
  // The agent's server and TLS come from the flags or the environment, never
  // from a user's config file (whose token is a person's, not the node's).
  o.agent.server = !o.client.server.empty() ? o.client.server : "http://127.0.0.1:7070";
  if (o.client.server.empty()) {
    if (const char* env = std::getenv("TESSERA_SERVER"); env && *env) o.agent.server = env;
  }
  o.agent.tls = TlsClientOptions{.certificate_authority = o.client.certificate_authority,
                                 .insecure_skip_tls_verify = o.client.insecure_skip_tls_verify};
  if (o.agent.token_file.empty()) {
    if (const char* env = std::getenv("TESSERA_TOKEN_FILE"); env && *env) o.agent.token_file = env;
  }
  if (o.agent.token_file.empty()) {
    fmt::print(stderr,
               "error: the agent needs its node's credential: --token-file FILE (an admin makes one with `tessera "
               "create node-token NODE`)\n");
    return 2;
  }
  if (o.agent.node_name.empty()) o.agent.node_name = ThisNodeName();
  if (o.agent.data_dir.empty()) o.agent.data_dir = "./tessera-agent-" + o.agent.node_name;
  o.agent.lease_duration = Duration::Seconds(o.lease_seconds);
  o.agent.usage_interval = Duration::Seconds(o.usage_seconds);
  if (auto retention = ParseDuration(o.log_retention)) {
    o.agent.log_retention = *retention;
  } else {
    fmt::print(stderr, "error: --log-retention: {}\n", retention.error().message());
    return 2;
  }
  o.agent.data_dir = std::filesystem::absolute(o.agent.data_dir).lexically_normal().string();
  o.agent.fence_command = FenceCommand(o.agent.data_dir, o.agent.lease_duration);
  for (const std::string& kv : o.labels) {
    const auto eq = kv.find('=');
    if (eq == std::string::npos || eq == 0) {
      fmt::print(stderr, "error: --label \"{}\": expected KEY=VALUE\n", kv);
      return 2;
    }
    o.agent.labels[kv.substr(0, eq)] = kv.substr(eq + 1);
  }
  sigset_t set;
  BlockTerminationSignals(&set);
  auto agent = Agent::Start(o.agent);
  if (!agent) {
    fmt::print(stderr, "error: {}\n", agent.error().message());
    return 1;
  }
  // Scripts read this line to know the node is registered.
  fmt::print("tessera agent: node {} registered with {} ({})\n", o.agent.node_name, o.agent.server,
             (*agent)->inventory_summary());
  std::fflush(stdout);
  const int sig = WaitForTermination(set);
  spdlog::info("signal {}: stopping the agent; pods keep running", sig);
  (*agent)->Stop();
  return 0;
}

int RunUpCommand(ServeOptions options) {
  auto parsed_retention = ParseDuration(options.log_retention);
  if (!parsed_retention) {
    fmt::print(stderr, "error: --log-retention: {}\n", parsed_retention.error().message());
    return 2;
  }
  const Duration log_retention = *parsed_retention;
  if (options.server.audit.path.empty() && !options.no_audit_log) {
    // One machine's platform keeps who did what from the start; a server
    // (`tessera server`) keeps a log only when told where, as kube-apiserver.
    options.server.audit.path =
        (std::filesystem::absolute(options.server.data_dir) / "audit.log").lexically_normal().string();
    if (options.server.audit.max_size_mb == 0) options.server.audit.max_size_mb = 100;
    if (options.server.audit.max_backups == 0) options.server.audit.max_backups = 10;
  }
  // One machine: the server and its agent share one volume root for claims.
  if (options.server.volume_root.empty()) {
    options.server.volume_root =
        (std::filesystem::absolute(options.server.data_dir) / "volumes").lexically_normal().string();
  }
  // Without a certificate of its own, the port speaks HTTPS with a CA made on
  // first start (<data>/pki) and plain HTTP too: kubectl sends its token only
  // over TLS, and browsers and scripts keep the http:// URL (docs/api.md).
  std::string generated_ca;
  if (options.server.http.tls_cert_file.empty() && options.server.http.tls_key_file.empty()) {
    std::vector<std::string> names = {ThisNodeName()};
    if (const auto colon = options.listen.rfind(':'); colon != std::string::npos && colon > 0) {
      std::string host = options.listen.substr(0, colon);
      if (host.size() > 2 && host.front() == '[' && host.back() == ']') host = host.substr(1, host.size() - 2);
      names.push_back(host);
    }
    auto certs = EnsureServingCertificate(std::filesystem::path(options.server.data_dir) / "pki", names);
    if (!certs) {
      fmt::print(stderr, "error: {}\n", certs.error().message());
      return 1;
    }
    options.server.http.tls_cert_file = certs->cert;
    options.server.http.tls_key_file = certs->key;
    options.server.http.plain_http_too = true;
    generated_ca = std::filesystem::absolute(certs->ca_cert).lexically_normal().string();
  }
  sigset_t set;
  int rc = 0;
  std::unique_ptr<Server> server = StartForeground(options, &set, &rc);
  if (!server) return rc;
  const std::string url = server->url();
  const std::string data_dir = std::filesystem::absolute(options.server.data_dir).lexically_normal().string();
  const std::string config_path = DefaultConfigPath();
  TlsClientOptions tls;
  if (!generated_ca.empty()) {
    tls.certificate_authority = generated_ca;
  } else if (!options.server.http.tls_cert_file.empty()) {
    tls.certificate_authority = std::filesystem::absolute(options.server.http.tls_cert_file).lexically_normal().string();
  }
  // The embedded agent: this machine as a node that runs the pods bound to it,
  // with a node credential of its own (never the admin's), made now and kept
  // where only root reads it.
  const std::string node = ThisNodeName();
  const std::string agent_dir = (std::filesystem::path(data_dir) / "agent").string();
  const std::string node_token_file = agent_dir + "/node.token";
  auto node_token = server->issuer().IssueNode(node, Duration::Seconds(365 * 24 * 3600), SystemNow());
  if (!node_token) {
    fmt::print(stderr, "error: making this machine's node credential: {}\n", node_token.error().message());
    return 1;
  }
  if (Status s = WriteSecretFile(node_token_file, node_token->token); !s.ok()) {
    fmt::print(stderr, "error: {}\n", s.message());
    return 1;
  }
  AgentOptions agent_options{.server = url, .token_file = node_token_file, .tls = tls, .node_name = node,
                             .data_dir = agent_dir};
  agent_options.volume_root = options.server.volume_root;
  agent_options.hidden_paths = {data_dir};  // the store, the admin token and the signing key
  agent_options.gpus.simulated = options.gpus;
  agent_options.pod_network = PodNetworkMode(options.pod_network);
  agent_options.log_retention = log_retention;
  agent_options.fence_command = FenceCommand(agent_options.data_dir, agent_options.lease_duration);
  auto agent = Agent::Start(agent_options);
  if (!agent) {
    fmt::print(stderr, "error: starting this machine's agent: {}\n", agent.error().message());
    return 1;
  }
  const std::string node_summary = fmt::format("node {}: {}", agent_options.node_name, (*agent)->inventory_summary());
  const std::string https_url = server->https_url();
  auto wrote = AddContextIfMissing(config_path, ClientContext{.name = "admin",
                                                              .server = https_url.empty() ? url : https_url,
                                                              .token_file = data_dir + "/admin.token",
                                                              .tls = tls});
  // The admin's kubeconfig: the HTTPS side, its CA and the admin token.
  std::string kubeconfig_path;
  if (!https_url.empty()) {
    auto text = KubeconfigYaml(ClientConfig{.server = https_url, .token = server->admin_token(), .tls = tls},
                               {.name = "tessera-admin"});
    kubeconfig_path = data_dir + "/kubeconfig";
    Status s = text ? WriteFileAtomically(kubeconfig_path, *text, 0600) : text.error();
    if (!s.ok()) {
      fmt::print(stderr, "warning: the admin kubeconfig was not written: {}\n", s.message());
      kubeconfig_path.clear();
    }
  }
  fmt::print("Tessera is up at {}\n", url);
  if (!https_url.empty() && https_url != url) fmt::print("  and at {} (CA {})\n", https_url, tls.certificate_authority);
  fmt::print("  data directory: {}\n", data_dir);
  fmt::print("  admin token:    {}/admin.token\n", data_dir);
  if (!kubeconfig_path.empty()) fmt::print("  kubectl:        export KUBECONFIG={}\n", kubeconfig_path);
  if (!options.server.audit.path.empty()) fmt::print("  audit log:      {}\n", options.server.audit.path);
  fmt::print("  this machine:   {}\n", node_summary);
  if (wrote && *wrote) {
    fmt::print("  CLI config:     {} (context \"admin\" added)\n", config_path);
  } else {
    fmt::print("  CLI config:     {} has a context \"admin\" already and was left as it is; if it points\n"
               "                  elsewhere, use export TESSERA_SERVER={} TESSERA_TOKEN_FILE={}/admin.token\n",
               config_path, https_url.empty() ? url : https_url, data_dir);
    if (!tls.certificate_authority.empty()) {
      fmt::print("                  and pass --certificate-authority {}\n", tls.certificate_authority);
    }
  }
  fmt::print("\nTry, in another terminal:\n"
             "  tessera get clusterqueues\n"
             "  tessera get priorityclasses\n"
             "  tessera apply -f <manifests>\n"
             "  tessera submit hello --queue default --gpu 1 -- sh -c 'echo hi from GPU $CUDA_VISIBLE_DEVICES'\n"
             "  tessera logs hello\n"
             "Stop with Ctrl-C.\n");
  std::fflush(stdout);
  WaitForTermination(set);
  (*agent)->Stop();
  server->Stop();
  return 0;
}

}  // namespace tessera
