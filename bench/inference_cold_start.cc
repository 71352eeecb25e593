// inference_cold_start: an InferenceService's cold start from zero replicas,
// through the server's proxy (DESIGN.md section 4; RunPod's anchor: 48 % of
// cold starts under 200 ms).
//
// Starts a real Server and a real Agent in-process (fresh temporary data
// directory, port 0, simulated inventory, host network), and one
// InferenceService of minReplicas 0, maxReplicas 1, scaleDownDelay 0, whose
// replica is a process pod: python3 serving HTTP on $PORT (a stand-in for a
// model server whose weights are cached: nothing to pull). Then --runs times
// (default 10):
//   1. waits until it is at zero (no replica Workload, no pod);
//   2. sends one GET to services/NAME:http/proxy/ and times it until answered:
//      the proxy holds it, the autoscaler makes a replica, the scheduler admits
//      it, the agent starts python3, the pod turns Ready, the proxy forwards;
//   3. the request ended, the replica goes (scaleDownDelay 0).
//
//   cold start = the 200 answer's arrival - the GET's sending
//
// The last lines are the headline figures:
//   BENCH inference_cold_start_p50_ms <value> ms
//   BENCH inference_cold_start_p90_ms <value> ms
// A pod is Ready as soon as its process started (no readiness probe yet), so
// the first attempts to reach python3 before it listens are retried by the
// proxy's hold; python3's own start (about 50-100 ms here) is in the figure.
//
// Usage: inference_cold_start [--runs N]   (--benchmark_* flags are ignored)
#include <fmt/format.h>
#include <netinet/in.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <thread>
#include <vector>

#include "agent/agent.h"
#include "client/api_client.h"
#include "server/server.h"

namespace {

using Clock = std::chrono::steady_clock;
using nlohmann::json;

double Percentile(std::vector<double> v, double q) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  return v[std::min(v.size() - 1, static_cast<size_t>(q * static_cast<double>(v.size() - 1) + 0.5))];
}

int FreePort() {
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  ::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr));
  socklen_t len = sizeof(addr);
  ::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len);
  ::close(fd);
  return ntohs(addr.sin_port);
}

// Whether NAME has no replica left (no Workload and no pod labelled with it).
bool AtZero(tessera::ApiClient& client) {
  for (const char* path : {"/apis/kueue.x-k8s.io/v1beta1/namespaces/default/workloads",
                           "/api/v1/namespaces/default/pods"}) {
    auto r = client.Request("GET", std::string(path) + "?labelSelector=tessera.dev/inferenceservice%3Dcold");
    if (!r || r->status != 200) return false;
    const json list = json::parse(r->body);
    if (!list["items"].empty()) return false;
  }
  return true;
}

}  // namespace

int main(int argc, char** argv) {
  int runs = 10;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a.starts_with("--benchmark_")) continue;
    if (a == "--runs" && i + 1 < argc) {
      runs = std::atoi(argv[++i]);
      continue;
    }
    std::fprintf(stderr, "inference_cold_start: unknown flag %s\n", a.c_str());
    return 2;
  }
  if (std::system("python3 -c pass >/dev/null 2>&1") != 0) {
    std::fprintf(stderr, "inference_cold_start: needs python3 for the replica\n");
    return 77;  // ctest's "skipped"
  }
  char tmpl[] = "/tmp/tessera-cold-start-XXXXXX";
  if (!mkdtemp(tmpl)) return 1;
  const std::string dir = tmpl;
  // What the replica serves: an index.html, readable by the pod's user.
  std::filesystem::create_directories(dir + "/www");
  std::ofstream(dir + "/www/index.html") << "ready\n";
  std::filesystem::permissions(dir, std::filesystem::perms::owner_all | std::filesystem::perms::group_read |
                                        std::filesystem::perms::group_exec | std::filesystem::perms::others_read |
                                        std::filesystem::perms::others_exec);
  tessera::ServerOptions so;
  so.data_dir = dir + "/server";
  so.http.port = 0;
  auto server = tessera::Server::Start(so);
  if (!server) {
    std::fprintf(stderr, "inference_cold_start: %s\n", server.error().ToString().c_str());
    return 1;
  }
  tessera::AgentOptions ao;
  ao.server = (*server)->url();
  ao.token = (*server)->admin_token();
  ao.node_name = "bench-node";
  ao.data_dir = dir + "/agent";
  ao.gpus.simulated = "1xH100-80GB";
  ao.gpus.preference = tessera::GpuPreference::kSimulated;
  auto agent = tessera::Agent::Start(ao);
  if (!agent) {
    std::fprintf(stderr, "inference_cold_start: %s\n", agent.error().ToString().c_str());
    return 1;
  }
  tessera::ApiClient client((*server)->url(), (*server)->admin_token());
  const int port = FreePort();
  const json container{
      {"name", "server"},
      {"command", {"sh", "-c", "exec python3 -m http.server \"$PORT\" --bind 127.0.0.1 --directory " + dir + "/www"}},
      {"resources", {{"requests", {{"cpu", "100m"}, {"memory", "128Mi"}}}}}};
  const json isvc{{"apiVersion", "tessera.dev/v1"},
                  {"kind", "InferenceService"},
                  {"metadata", {{"name", "cold"}, {"namespace", "default"}}},
                  {"spec",
                   {{"minReplicas", 0},
                    {"maxReplicas", 1},
                    {"port", port},
                    {"autoscaling", {{"scaleDownDelay", "0"}}},
                    {"template", {{"spec", {{"containers", {container}}}}}}}}};
  auto created = client.Request("POST", "/apis/tessera.dev/v1/namespaces/default/inferenceservices", isvc.dump());
  if (!created || created->status != 201) {
    std::fprintf(stderr, "inference_cold_start: create failed: %s\n",
                 created ? created->body.c_str() : created.error().ToString().c_str());
    return 1;
  }
  // Its Service first (the proxy holds only requests to a Service that exists).
  for (int i = 0; i < 200; ++i) {
    auto r = client.Request("GET", "/api/v1/namespaces/default/services/cold");
    if (r && r->status == 200) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  std::vector<double> cold_ms;
  for (int run = 0; run < runs; ++run) {
    bool zero = false;
    for (int i = 0; i < 600 && !zero; ++i) {  // 60 s at most
      zero = AtZero(client);
      if (!zero) std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
    if (!zero) {
      std::fprintf(stderr, "inference_cold_start: run %d: the service did not scale to zero\n", run);
      return 1;
    }
    const auto sent = Clock::now();
    auto r = client.Request("GET", "/api/v1/namespaces/default/services/cold:http/proxy/");
    const auto answered = Clock::now();
    if (!r || r->status != 200) {
      std::fprintf(stderr, "inference_cold_start: run %d: %s\n", run,
                   r ? fmt::format("{} {}", r->status, r->body).c_str() : r.error().ToString().c_str());
      // Its replica stopped (the agent ends python3) before leaving.
      client.Request("DELETE", "/apis/tessera.dev/v1/namespaces/default/inferenceservices/cold");
      for (int i = 0; i < 100 && !AtZero(client); ++i) std::this_thread::sleep_for(std::chrono::milliseconds(100));
      return 1;
    }
    cold_ms.push_back(std::chrono::duration<double, std::milli>(answered - sent).count());
    std::printf("run %d: cold start %.1f ms\n", run, cold_ms.back());
  }
  // Its last replica gone (the agent stops python3) before the agent stops.
  for (int i = 0; i < 600 && !AtZero(client); ++i) std::this_thread::sleep_for(std::chrono::milliseconds(100));
  agent->reset();
  server->reset();
  std::filesystem::remove_all(dir);
  std::printf("BENCH inference_cold_start_p50_ms %.1f ms\n", Percentile(cold_ms, 0.5));
  std::printf("BENCH inference_cold_start_p90_ms %.1f ms\n", Percentile(cold_ms, 0.9));
  return 0;
}
