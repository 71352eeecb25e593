// agent_scale: submit -> running latency and end-to-end job throughput on the
// embedded node (DESIGN.md section 10: "Submit -> running on the local agent:
// p50 under 20 ms, p99 under 100 ms").
//
// Starts a real Server and a real Agent in-process (fresh temporary data
// directory, port 0, simulated 8xH100-80GB inventory), then submits --jobs J
// short batch/v1 Jobs (`true`, one pod holding a tenth of a GPU, so that many
// share the node) one after another from one client, --gap-ms apart, while a
// watch on Pods records when each pod is first reported Running.
//
//   submit -> running = the pod's first Running event (as the watcher receives
//                       it) - the moment its Job's POST was sent
//   jobs completed/s  = J / (last Workload Finished - first submission)
//
// The last lines are the headline figures:
//   BENCH submit_to_running_p50_ms <value> ms
//   BENCH submit_to_running_p99_ms <value> ms
//   BENCH jobs_completed_per_s <value> 1/s
//
// Usage: agent_scale [--jobs J] [--gap-ms G]   (--benchmark_* flags are ignored)
#include <fmt/format.h>
#include <stdlib.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <map>
#include <mutex>
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

std::string JobBody(int i) {
  json container{{"name", "main"}, {"command", {"true"}}};
  container["resources"]["requests"] = {{"nvidia.com/gpu", "100m"}, {"cpu", "10m"}};
  json job{{"apiVersion", "batch/v1"}, {"kind", "Job"}, {"metadata", {{"name", fmt::format("short-{}", i)}}}};
  job["spec"]["template"]["spec"] = {{"restartPolicy", "Never"}, {"containers", json::array({container})}};
  return job.dump();
}

}  // namespace

int main(int argc, char** argv) {
  int jobs = 1000, gap_ms = 2;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (a.starts_with("--benchmark_")) continue;
    if (a.starts_with("--jobs=")) jobs = std::atoi(a.c_str() + 7);
    else if (a == "--jobs" && i + 1 < argc) jobs = std::atoi(argv[++i]);
    else if (a.starts_with("--gap-ms=")) gap_ms = std::atoi(a.c_str() + 9);
    else if (a == "--gap-ms" && i + 1 < argc) gap_ms = std::atoi(argv[++i]);
    else {
      std::fprintf(stderr, "agent_scale: unknown flag %s\n", a.c_str());
      return 2;
    }
  }
  char tmpl[] = "/tmp/tessera-agent-scale-XXXXXX";
  if (!mkdtemp(tmpl)) return 1;
  const std::string dir = tmpl;
  tessera::ServerOptions so;
  so.data_dir = dir + "/server";
  so.http.port = 0;
  auto server = tessera::Server::Start(so);
  if (!server) {
    std::fprintf(stderr, "agent_scale: %s\n", server.error().ToString().c_str());
    return 1;
  }
  tessera::AgentOptions ao;
  ao.server = (*server)->url();
  ao.token = (*server)->admin_token();
  ao.node_name = "bench-node";
  ao.data_dir = dir + "/agent";
  ao.gpus.simulated = "8xH100-80GB";
  ao.gpus.preference = tessera::GpuPreference::kSimulated;
  auto agent = tessera::Agent::Start(ao);
  if (!agent) {
    std::fprintf(stderr, "agent_scale: %s\n", agent.error().ToString().c_str());
    return 1;
  }

  std::mutex mu;
  std::map<std::string, Clock::time_point> submitted, running;  // by job name
  std::atomic<bool> stop{false};
  std::thread watcher([&] {
    tessera::ApiClient client((*server)->url(), (*server)->admin_token());
    (void)client.Stream("/api/v1/namespaces/default/pods?watch=true&resourceVersion=0", [&](const std::string& line) {
      json e = json::parse(line, nullptr, false);
      if (!e.is_object()) return !stop.load();
      const json& pod = e["object"];
      const std::string phase = pod.value("status", json::object()).value("phase", "");
      if (phase == "Running" || phase == "Succeeded") {
        const std::string job = pod["metadata"].value("labels", json::object()).value("tessera.dev/workload", "");
        std::lock_guard lock(mu);
        running.try_emplace(job.substr(4), Clock::now());  // workload "job-<name>"
      }
      return !stop.load();
    });
  });

  tessera::ApiClient client((*server)->url(), (*server)->admin_token());
  const auto start = Clock::now();
  for (int i = 0; i < jobs; ++i) {
    {
      std::lock_guard lock(mu);
      submitted[fmt::format("short-{}", i)] = Clock::now();
    }
    auto r = client.Request("POST", "/apis/batch/v1/namespaces/default/jobs", JobBody(i));
    if (!r || r->status != 201) {
      std::fprintf(stderr, "agent_scale: submit failed: %s\n", r ? r->body.c_str() : r.error().ToString().c_str());
      return 1;
    }
    if (gap_ms > 0) std::this_thread::sleep_for(std::chrono::milliseconds(gap_ms));
  }
  // Wait until every Workload is Finished (or 120 s).
  int finished = 0;
  auto done_at = Clock::now();
  for (int tries = 0; tries < 1200; ++tries) {
    auto r = client.Request("GET", "/apis/kueue.x-k8s.io/v1beta1/namespaces/default/workloads");
    finished = 0;
    if (r && r->status == 200) {
      const json list = json::parse(r->body);  // named: a range over a temporary's member would dangle
      for (const json& w : list["items"]) {
        for (const json& c : w.value("status", json::object()).value("conditions", json::array())) {
          if (c.value("type", "") == "Finished" && c.value("status", "") == "True") ++finished;
        }
      }
    }
    done_at = Clock::now();
    if (finished >= jobs) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  std::vector<double> latencies;
  {
    std::lock_guard lock(mu);
    for (const auto& [job, at] : running) {
      auto s = submitted.find(job);
      if (s != submitted.end()) latencies.push_back(std::chrono::duration<double, std::milli>(at - s->second).count());
    }
  }
  const double secs = std::chrono::duration<double>(done_at - start).count();
  std::printf("agent_scale: %d jobs submitted %d ms apart; %zu seen running, %d finished in %.2f s\n", jobs, gap_ms,
              latencies.size(), finished, secs);
  std::printf("BENCH submit_to_running_p50_ms %.2f ms\n", Percentile(latencies, 0.5));
  std::printf("BENCH submit_to_running_p99_ms %.2f ms\n", Percentile(latencies, 0.99));
  std::printf("BENCH jobs_completed_per_s %.1f 1/s\n", secs > 0 ? finished / secs : 0.0);
  std::fflush(stdout);
  stop = true;
  (*agent)->Stop();
  (*server)->Stop();
  std::error_code ec;
  std::filesystem::remove_all(dir, ec);
  std::_Exit(0);
}
