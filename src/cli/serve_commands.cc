#include "cli/serve_commands.h"

#include <fmt/format.h>
#include <signal.h>
#include <spdlog/spdlog.h>

#include <unistd.h>

#include <cctype>
#include <filesystem>

#include "agent/gpu_inventory.h"
#include "agent/node_registration.h"
#include "client/api_client.h"
#include "client/client_config.h"
#include "server/api_handler.h"

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

void AddAgentFlags(CLI::App& command, AgentCommandOptions& o) {
  command.add_option("--server", o.client.server, "Tessera API server URL (else TESSERA_SERVER, else the config file)");
  command.add_option("--token", o.client.token, "Bearer token (else TESSERA_TOKEN, else the config file)");
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
  command.add_option("--address", o.agent.address, "How other nodes reach this one (MASTER_ADDR of gangs)");
  command.add_option("--lease-duration", o.lease_seconds, "Seconds without a renewal before the node is NotReady")
      ->check(CLI::Range(1, 3600));
  command.add_option("--usage-interval", o.usage_seconds,
                     "Seconds between GPU utilisation samples published on the Node (0: none)")
      ->check(CLI::Range(0, 3600));
  command.add_option("--label", o.labels, "Node label KEY=VALUE (flavor, rack); repeatable");
}

int RunAgentCommand(AgentCommandOptions o) {
  const ClientConfig api = ResolveClientConfig(o.client);
  o.agent.server = api.server;
  o.agent.token = api.token;
  o.agent.tls = api.tls;
  if (o.agent.node_name.empty()) o.agent.node_name = ThisNodeName();
  if (o.agent.data_dir.empty()) o.agent.data_dir = "./tessera-agent-" + o.agent.node_name;
  o.agent.lease_duration = Duration::Seconds(o.lease_seconds);
  o.agent.usage_interval = Duration::Seconds(o.usage_seconds);
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
  fmt::print("tessera agent: node {} registered with {} ({})\n", o.agent.node_name, api.server,
             (*agent)->inventory_summary());
  std::fflush(stdout);
  const int sig = WaitForTermination(set);
  spdlog::info("signal {}: stopping the agent; pods keep running", sig);
  (*agent)->Stop();
  return 0;
}

int RunUpCommand(ServeOptions options) {
  sigset_t set;
  int rc = 0;
  std::unique_ptr<Server> server = StartForeground(options, &set, &rc);
  if (!server) return rc;
  const std::string url = server->url();
  const std::string data_dir = std::filesystem::absolute(options.server.data_dir).lexically_normal().string();
  const std::string config_path = DefaultConfigPath();
  ClientConfig api{.server = url, .token = server->admin_token()};
  if (!options.server.http.tls_cert_file.empty()) {
    api.tls.certificate_authority =
        std::filesystem::absolute(options.server.http.tls_cert_file).lexically_normal().string();
  }
  // The embedded agent: this machine as a node that runs the pods bound to it.
  AgentOptions agent_options{.server = url, .token = api.token, .tls = api.tls, .node_name = ThisNodeName(),
                             .data_dir = (std::filesystem::path(data_dir) / "agent").string()};
  agent_options.gpus.simulated = options.gpus;
  agent_options.fence_command = FenceCommand(agent_options.data_dir, agent_options.lease_duration);
  auto agent = Agent::Start(agent_options);
  if (!agent) {
    fmt::print(stderr, "error: starting this machine's agent: {}\n", agent.error().message());
    return 1;
  }
  const std::string node_summary = fmt::format("node {}: {}", agent_options.node_name, (*agent)->inventory_summary());
  auto wrote = WriteClientConfigIfMissing(config_path, api);
  fmt::print("Tessera is up at {}\n", url);
  fmt::print("  data directory: {}\n", data_dir);
  fmt::print("  admin token:    {}/admin.token\n", data_dir);
  fmt::print("  this machine:   {}\n", node_summary);
  if (wrote && *wrote) {
    fmt::print("  CLI config:     {} (written now)\n", config_path);
  } else {
    fmt::print("  CLI config:     {} exists and was left as it is; if it points elsewhere, use\n"
               "                  export TESSERA_SERVER={} TESSERA_TOKEN=$(cat {}/admin.token)\n",
               config_path, url, data_dir);
    if (!api.tls.certificate_authority.empty()) {
      fmt::print("                  and pass --certificate-authority {}\n", api.tls.certificate_authority);
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
