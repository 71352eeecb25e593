// `tessera server` and `tessera up`: run the control plane in the foreground
// until SIGINT or SIGTERM.
#pragma once

#include <CLI/CLI.hpp>

#include <string>

#include "agent/agent.h"
#include "auth/oidc.h"
#include "client/client_config.h"
#include "server/server.h"

namespace tessera {

struct ServeOptions {
  ServerOptions server;
  std::string listen = "127.0.0.1:7070";  // HOST:PORT
  std::string gpus = "8xH100-80GB";       // `up`: the simulated inventory when there is no driver
  bool no_audit_log = false;              // `up`: no <data-dir>/audit.log by default
  std::string pod_network = "bridge";     // `up`: --pod-network bridge|host of its agent
  std::string log_retention = "72h";      // `up`: --log-retention of its agent
  // As the flags give them, turned into `server`'s by AddServerFlags' parse.
  std::string api_audiences;              // --api-audiences A,B
  std::string max_token_expiration;       // --service-account-max-token-expiration DURATION
  OidcOptions oidc;                       // --oidc-*: used when --oidc-issuer-url is given
  std::string oidc_username_prefix;
  bool oidc_username_prefix_given = false;
  std::vector<std::string> oidc_required_claims;  // KEY=VALUE
  std::string oidc_signing_algs;                  // A,B
};

// The server's flags, kube-apiserver's names where it has them: --listen,
// --data-dir, TLS, --threads, --metrics-require-token, --token-auth-file,
// --service-account-*, --api-audiences, --oidc-*, --audit-log-*,
// --per-user-qps and --per-user-burst, --service-cluster-ip-range;
// kube-controller-manager's --cluster-cidr and --node-cidr-mask-size.
void AddServerFlags(CLI::App& command, ServeOptions& options);
// Turns the flags' text into ServerOptions; InvalidArgument naming the flag.
Status FinishServeOptions(ServeOptions& options);

// kube-apiserver's flags for serving HTTPS: --tls-cert-file (PEM certificate
// chain) and --tls-private-key-file (its PEM key). `up` also trusts that
// certificate when it registers this machine and writes it into the CLI config
// as certificate-authority, which is right for a self-signed certificate.
void AddTlsServingFlags(CLI::App& command, HttpServerOptions& http);

// Parses HOST:PORT into `options.server.http`; false with a message when malformed.
bool ParseListen(const std::string& listen, HttpServerOptions& http, std::string* error);

int RunServerCommand(ServeOptions options);

// `tessera agent`: this machine as a node of a Tessera server, running the pods
// bound to it until SIGINT or SIGTERM (which leave them running for the next agent).
struct AgentCommandOptions {
  ClientFlags client;  // --server and TLS; the credential comes from --token-file alone
  AgentOptions agent;
  int64_t lease_seconds = 40;
  int64_t usage_seconds = 10;
  std::vector<std::string> labels;  // KEY=VALUE
  std::string pod_network = "bridge";  // --pod-network bridge|host
  std::string log_retention = "72h";   // --log-retention DURATION
};
void AddAgentFlags(CLI::App& command, AgentCommandOptions& options);
int RunAgentCommand(AgentCommandOptions options);

// argv of this binary's hidden `agent-fence` subcommand (src/agent/fence.h).
std::vector<std::string> FenceCommand(const std::string& data_dir, Duration lease);

// --pod-network: "bridge" (a network namespace and an IP of the node's
// podCIDR per pod) or "host" (pods share the node's network).
void AddPodNetworkFlag(CLI::App& command, std::string& mode);

// --log-retention DURATION: how long an agent keeps the directory (logs
// included) of a pod its node no longer has (AgentOptions::log_retention).
void AddLogRetentionFlag(CLI::App& command, std::string& retention);
AgentOptions::PodNetworkMode PodNetworkMode(const std::string& mode);

// Writes a credential to `path`, mode 0600, in a directory made mode 0700.
Status WriteSecretFile(const std::string& path, const std::string& secret);

// This machine's name as a node name: the host name, lower-cased.
std::string ThisNodeName();
// The server plus the user's set-up: prints how to use the CLI and writes the
// CLI config when there is none.
int RunUpCommand(ServeOptions options);

}  // namespace tessera
