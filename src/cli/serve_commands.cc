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

// Registers this machine as a Node through the API, as an agent does.
Status RegisterThisMachine(const ClientConfig& api, const std::string& gpus_spec, std::string* summary) {
  Node node;
  char host[256] = {};
  gethostname(host, sizeof(host) - 1);
  node.name = host[0] ? host : "localhost";
  for (char& c : node.name) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  node.cpu_milli = static_cast<int64_t>(sysconf(_SC_NPROCESSORS_ONLN)) * 1000;
  node.memory_bytes = static_cast<int64_t>(sysconf(_SC_PHYS_PAGES)) * sysconf(_SC_PAGE_SIZE);
  node.labels.Set("tessera.dev/flavor", "default");
  const bool driver = NvidiaDriverPresent();
  // NVML discovery comes with the agent; until then a driver's GPUs are not listed.
  ASSIGN_OR_RETURN(node.gpus, ParseSimulatedInventory(gpus_spec));
  *summary = driver ? fmt::format("NVIDIA driver found, but GPU discovery (NVML) is not built yet: advertising the "
                                  "simulated inventory {} for now",
                                  gpus_spec)
                    : fmt::format("no NVIDIA driver (libnvidia-ml.so.1) on this machine: node {} advertises a "
                                  "simulated inventory of {} (change it with --gpus)",
                                  node.name, gpus_spec);
  ApiClient client(api.server, api.token, api.tls);
  const nlohmann::json obj = NodeObject(node, true, Rfc3339Now());
  ASSIGN_OR_RETURN(ApiResponse r, client.Request("POST", "/api/v1/nodes", obj.dump()));
  if (r.status == 409) {  // registered before: refresh its labels, then its status (capacity, readiness)
    ASSIGN_OR_RETURN(r, client.Request("PUT", "/api/v1/nodes/" + node.name, obj.dump()));
    if (r.status / 100 == 2) {
      ASSIGN_OR_RETURN(r, client.Request("PUT", "/api/v1/nodes/" + node.name + "/status", obj.dump()));
    }
  }
  if (r.status / 100 != 2) return Status::Internal(fmt::format("registering node {}: HTTP {}: {}", node.name, r.status, r.body));
  return Status::Ok();
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
  std::string node_summary;
  if (Status s = RegisterThisMachine(api, options.gpus, &node_summary); !s.ok()) {
    fmt::print(stderr, "error: {}\n", s.message());
    return 1;
  }
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
             "Stop with Ctrl-C.\n");
  std::fflush(stdout);
  WaitForTermination(set);
  server->Stop();
  return 0;
}

}  // namespace tessera
