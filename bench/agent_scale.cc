// agent_scale: submit -> running latency and end-to-end job throughput on the
// embedded node (DESIGN.md section 10: "Submit -> running on the local agent:
// p50 under 20 ms, p99 under 100 ms").
//
// Starts a real Server and a real Agent in-process (fresh temporary data
// directory, port 0, simulated 8xH100-80GB inventory), then runs two phases of
// short batch/v1 Jobs (`true`, one pod holding a tenth of a GPU, so that many
// share the node), submitted one after another from one client while a watch on
// Pods records when each pod is first reported Running (or Succeeded):
//
//   1. latency: --jobs J jobs, --gap-ms G apart (default 1,000 at 20 ms: 50
//      jobs/s offered, below what the node completes, so the figure is the
//      platform's own latency, not time spent queueing behind earlier jobs);
//   2. throughput: --burst B jobs (default 1,000) submitted back to back, as
//      fast as the client can, so that they queue: jobs completed per second
//      is what the node sustains end to end.
//
//   submit -> running = the pod's first Running event (as the watcher receives
//                       it) - the moment its Job's POST was sent
//   jobs completed/s  = B / (last of the burst's Workloads Finished - its first submission)
//
// The last lines are the headline figures:
//   BENCH submit_to_running_p50_ms <value> ms    (phase 1)
//   BENCH submit_to_running_p99_ms <value> ms    (phase 1)
//   BENCH jobs_completed_per_s <value> 1/s       (phase 2)
// and, before them, the burst's own latencies (queueing included) for the record.
//
// --image: the pods are containers (docs/agent.md, "Containers"): each runs
// /bin/true in an image of busybox-static built here with umoci and put in the
// node's store beforehand (the image is on the node: no pull; its registry,
// 127.0.0.1 port 1, answers nobody), so the figure is the agent's and runc's
// start. Side by side, the same bundle started directly with `runc run`
// --jobs times, one after another, for what the runtime alone costs. Needs
// root. Defaults --jobs 100 --gap-ms 200 --burst 0; the headline figures are
//   BENCH container_submit_to_running_p50_ms / _p99_ms
//   BENCH runc_direct_run_p50_ms / _p99_ms   (runc run of /bin/true, start to exit)
//
// --pod-network: each pod in a network namespace of its own on the node's
// bridge (docs/agent.md "Pod network"), the process in a network namespace of
// its own (so the bridge and rules are made there); the figures are printed
// with a "podnet_" prefix. Needs root.
//
// Usage: agent_scale [--jobs J] [--gap-ms G] [--burst B] [--image] [--pod-network]   (--benchmark_* flags are ignored)
#include <sched.h>
#include <fmt/format.h>
#include <stdlib.h>
#include <unistd.h>

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

constexpr const char* kBenchImage = "127.0.0.1:1/bench/busybox:v1";

std::string JobBody(const std::string& name, bool image) {
  json container{{"name", "main"}, {"command", {image ? "/bin/true" : "true"}}};
  if (image) container["image"] = kBenchImage;
  container["resources"]["requests"] = {{"nvidia.com/gpu", "100m"}, {"cpu", "10m"}};
  json job{{"apiVersion", "batch/v1"}, {"kind", "Job"}, {"metadata", {{"name", name}}}};
  job["spec"]["template"]["spec"] = {{"restartPolicy", "Never"}, {"containers", json::array({container})}};
  return job.dump();
}

struct Phase {
  std::vector<double> latencies_ms;
  int finished = 0;
  double seconds = 0;  // first submission to the last Workload Finished
};

// Submits `jobs` Jobs named <prefix>-<i>, `gap_ms` apart, and waits (at most
// 120 s) until all their Workloads are Finished.
Phase RunPhase(tessera::ApiClient& client, const std::string& prefix, int jobs, int gap_ms, bool image, std::mutex& mu,
               std::map<std::string, Clock::time_point>& submitted, std::map<std::string, Clock::time_point>& running) {
  Phase phase;
  const auto start = Clock::now();
  for (int i = 0; i < jobs; ++i) {
    const std::string name = fmt::format("{}-{}", prefix, i);
    {
      std::lock_guard lock(mu);
      submitted[name] = Clock::now();
    }
    auto r = client.Request("POST", "/apis/batch/v1/namespaces/default/jobs", JobBody(name, image));
    if (!r || r->status != 201) {
      std::fprintf(stderr, "agent_scale: submit failed: %s\n", r ? r->body.c_str() : r.error().ToString().c_str());
      std::_Exit(1);
    }
    if (gap_ms > 0) std::this_thread::sleep_for(std::chrono::milliseconds(gap_ms));
  }
  auto done_at = Clock::now();
  for (int tries = 0; tries < 1200; ++tries) {
    auto r = client.Request("GET", "/apis/kueue.x-k8s.io/v1beta1/namespaces/default/workloads");
    phase.finished = 0;
    if (r && r->status == 200) {
      const json list = json::parse(r->body);  // named: a range over a temporary's member would dangle
      for (const json& w : list["items"]) {
        if (!w["metadata"].value("name", "").starts_with("job-" + prefix + "-")) continue;
        for (const json& c : w.value("status", json::object()).value("conditions", json::array())) {
          if (c.value("type", "") == "Finished" && c.value("status", "") == "True") ++phase.finished;
        }
      }
    }
    done_at = Clock::now();
    if (phase.finished >= jobs) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  phase.seconds = std::chrono::duration<double>(done_at - start).count();
  std::lock_guard lock(mu);
  for (int i = 0; i < jobs; ++i) {
    const std::string name = fmt::format("{}-{}", prefix, i);
    auto s = submitted.find(name);
    auto r = running.find(name);
    if (s != submitted.end() && r != running.end()) {
      phase.latencies_ms.push_back(std::chrono::duration<double, std::milli>(r->second - s->second).count());
    }
  }
  return phase;
}

bool Run(const std::string& command) {
  if (std::system((command + " >/dev/null 2>&1").c_str()) == 0) return true;
  std::fprintf(stderr, "agent_scale: failed: %s\n", command.c_str());
  return false;
}

// An OCI layout at <dir>/build holding busybox-static as image "v1", and an
// unpacked bundle of it at <dir>/bundle (for the direct runc runs).
bool BuildImage(const std::string& dir) {
  const std::string layout = dir + "/build";
  const std::string bundle = dir + "/bundle";
  return Run("umoci init --layout " + layout) && Run("umoci new --image " + layout + ":v1") &&
         Run("umoci unpack --image " + layout + ":v1 " + bundle) &&
         Run("set -e; r=" + bundle + "/rootfs; mkdir -p $r/bin; cp $(command -v busybox) $r/bin/busybox; "
             "ln -sf busybox $r/bin/true; ln -sf busybox $r/bin/sh") &&
         Run("umoci repack --image " + layout + ":v1 " + bundle) &&
         Run("umoci config --image " + layout + ":v1 --config.env PATH=/bin --config.cmd /bin/true");
}

// `runc run` of the bundle, `runs` times one after another: each run's ms, start to exit.
std::vector<double> DirectRuncRuns(const std::string& dir, int runs) {
  const std::string bundle = dir + "/bundle";
  // The bundle's config.json, from umoci, runs the image's Cmd; no terminal.
  if (!Run("python3 -c \"import json,sys; p=sys.argv[1]; c=json.load(open(p)); c['process']['terminal']=False; "
           "json.dump(c,open(p,'w'))\" " + bundle + "/config.json")) {
    return {};
  }
  std::vector<double> ms;
  for (int i = 0; i < runs; ++i) {
    const auto start = Clock::now();
    if (!Run(fmt::format("runc --root {}/runc-direct run --bundle {} direct-{}", dir, bundle, i))) break;
    ms.push_back(std::chrono::duration<double, std::milli>(Clock::now() - start).count());
  }
  return ms;
}

}  // namespace

int main(int argc, char** argv) {
  int jobs = 1000, gap_ms = 20, burst = 1000;
  bool image = false;
  bool pod_network = false;
  for (int i = 1; i < argc; ++i) {
    if (std::string(argv[i]) == "--image") {
      image = true;
      jobs = 100, gap_ms = 200, burst = 0;
    }
  }
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "--image") continue;
    if (a == "--pod-network") {
      pod_network = true;
      continue;
    }
    auto value = [&](const char* flag, int& out) {
      const std::string eq = std::string(flag) + "=";
      if (a.starts_with(eq)) {
        out = std::atoi(a.c_str() + eq.size());
        return true;
      }
      if (a == flag && i + 1 < argc) {
        out = std::atoi(argv[++i]);
        return true;
      }
      return false;
    };
    if (a.starts_with("--benchmark_")) continue;
    if (value("--jobs", jobs) || value("--gap-ms", gap_ms) || value("--burst", burst)) continue;
    std::fprintf(stderr, "agent_scale: unknown flag %s\n", a.c_str());
    return 2;
  }
  if (image && ::geteuid() != 0) {
    std::fprintf(stderr, "agent_scale: --image needs root (runc and the pods' overlay mounts)\n");
    return 77;  // ctest's "skipped"
  }
  if (pod_network) {
    // Still one thread: the whole process (server, agent, their threads) moves.
    if (::geteuid() != 0 || ::unshare(CLONE_NEWNET) != 0 || !Run("ip link set lo up")) {
      std::fprintf(stderr, "agent_scale: --pod-network needs root and a network namespace of its own\n");
      return 77;
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
  if (pod_network) ao.pod_network = tessera::AgentOptions::PodNetworkMode::kBridge;
  if (image) {
    // The image in the node's store before the agent starts, as if pulled earlier.
    if (!BuildImage(dir) || !Run(fmt::format("mkdir -p {}/agent/images/oci", dir)) ||
        !Run(fmt::format("skopeo copy --quiet oci:{}/build:v1 oci:{}/agent/images/oci:{}", dir, dir, kBenchImage))) {
      return 1;
    }
  }
  auto agent = tessera::Agent::Start(ao);
  if (!agent) {
    std::fprintf(stderr, "agent_scale: %s\n", agent.error().ToString().c_str());
    return 1;
  }

  // The agent unpacks the stored image as it starts (a second at most for this one).
  if (image) std::this_thread::sleep_for(std::chrono::seconds(1));
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
  const Phase steady = RunPhase(client, "steady", jobs, gap_ms, image, mu, submitted, running);
  std::printf("agent_scale: phase 1: %d jobs submitted %d ms apart; %zu seen running, %d finished in %.2f s\n", jobs,
              gap_ms, steady.latencies_ms.size(), steady.finished, steady.seconds);
  const Phase burst_phase = burst > 0 ? RunPhase(client, "burst", burst, 0, image, mu, submitted, running) : Phase{};
  const double per_s = burst_phase.seconds > 0 ? burst_phase.finished / burst_phase.seconds : 0.0;
  std::printf("agent_scale: phase 2: %d jobs submitted back to back; %zu seen running, %d finished in %.2f s\n", burst,
              burst_phase.latencies_ms.size(), burst_phase.finished, burst_phase.seconds);
  std::printf("agent_scale: phase 2 submit -> running (queueing included): p50 %.1f ms, p99 %.1f ms\n",
              Percentile(burst_phase.latencies_ms, 0.5), Percentile(burst_phase.latencies_ms, 0.99));
  const char* prefix = pod_network ? "podnet_" : "";
  if (image) {
    const std::vector<double> direct = DirectRuncRuns(dir, jobs);
    std::printf("agent_scale: %zu direct runc runs of the same image\n", direct.size());
    std::printf("BENCH %scontainer_submit_to_running_p50_ms %.2f ms\n", prefix, Percentile(steady.latencies_ms, 0.5));
    std::printf("BENCH %scontainer_submit_to_running_p99_ms %.2f ms\n", prefix, Percentile(steady.latencies_ms, 0.99));
    std::printf("BENCH runc_direct_run_p50_ms %.2f ms\n", Percentile(direct, 0.5));
    std::printf("BENCH runc_direct_run_p99_ms %.2f ms\n", Percentile(direct, 0.99));
  } else {
    std::printf("BENCH %ssubmit_to_running_p50_ms %.2f ms\n", prefix, Percentile(steady.latencies_ms, 0.5));
    std::printf("BENCH %ssubmit_to_running_p99_ms %.2f ms\n", prefix, Percentile(steady.latencies_ms, 0.99));
    std::printf("BENCH %sjobs_completed_per_s %.1f 1/s\n", prefix, per_s);
  }
  std::fflush(stdout);
  stop = true;
  (*agent)->Stop();
  (*server)->Stop();
  std::error_code ec;
  std::filesystem::remove_all(dir, ec);
  std::_Exit(steady.finished >= jobs ? 0 : 1);
}
