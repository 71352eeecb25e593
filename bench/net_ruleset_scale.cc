// The node ruleset compiler at cluster scale: RenderNodeRuleset for 1,000
// pods and 200 NetworkPolicies, and (as root) applying the result with
// libnftables in a network namespace of its own.
//
// The cluster: 50 namespaces of 20 pods (labels app=app<i % 5>, tier=<web|db>),
// each namespace with 4 policies: deny-all ingress, allow from its own
// namespace on TCP 80, allow tier=db from app0 of namespaces labelled
// team=<its team> on 5432 and a named port, and egress for tier=web to the
// cluster range but 10.244.255.0/24 and to DNS on a /32. Two nodes: one with
// 40 local pods (a node's share of 25), one with all 1,000 local (the worst
// case a single node could be asked for).
//
// Ends with `BENCH <name> <value> <unit>` lines:
//   net_render_40_local_ms, net_render_1000_local_ms (median of the runs),
//   net_ruleset_1000_local_kib, net_apply_40_local_ms and
//   net_apply_1000_local_ms (root only: one nft transaction each, in a fresh
//   namespace).
// Run: build/bench/net_ruleset_scale [runs]
#include <sched.h>
#include <unistd.h>

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "net/nftables.h"
#include "net/node_ruleset.h"

namespace tessera::net {
namespace {

using Clock = std::chrono::steady_clock;

ClusterView MakeCluster() {
  ClusterView view;
  constexpr int kNamespaces = 50;
  constexpr int kPodsPerNamespace = 20;
  for (int n = 0; n < kNamespaces; ++n) {
    const std::string ns = fmt::format("team{}-ns{}", n % 10, n);
    view.namespaces.push_back(NamespaceInfo{ns, {{"team", fmt::format("t{}", n % 10)}, {std::string(kNamespaceNameLabel), ns}}});
    for (int p = 0; p < kPodsPerNamespace; ++p) {
      const int index = n * kPodsPerNamespace + p;
      PodInfo pod;
      pod.ns = ns;
      pod.name = fmt::format("pod{}", p);
      pod.labels = {{"app", fmt::format("app{}", p % 5)}, {"tier", p % 2 == 0 ? "web" : "db"}};
      pod.ip = fmt::format("10.244.{}.{}", index / 250, 2 + index % 250);
      pod.ports = {{"http", 8080, Protocol::kTCP}, {"pg", 5432, Protocol::kTCP}};
      view.pods.push_back(std::move(pod));
    }
    const auto policy = [&](const std::string& name, const std::string& spec) {
      auto parsed = ParseNetworkPolicy(nlohmann::json::parse(
          fmt::format(R"({{"metadata":{{"name":"{}","namespace":"{}"}},"spec":{}}})", name, ns, spec)));
      if (!parsed) {
        std::fprintf(stderr, "%s\n", parsed.error().ToString().c_str());
        std::exit(1);
      }
      view.policies.push_back(std::move(*parsed));
    };
    policy("deny-all", R"({"podSelector":{}})");
    policy("same-ns-80", R"({"podSelector":{},"ingress":[{"from":[{"podSelector":{}}],"ports":[{"port":80}]}]})");
    policy("db-from-team", fmt::format(R"({{"podSelector":{{"matchLabels":{{"tier":"db"}}}},
        "ingress":[{{"from":[{{"namespaceSelector":{{"matchLabels":{{"team":"t{}"}}}},"podSelector":{{"matchLabels":{{"app":"app0"}}}}}}],
                     "ports":[{{"port":5432}},{{"port":"http"}}]}}]}})",
                                       n % 10));
    policy("web-egress", R"({"podSelector":{"matchLabels":{"tier":"web"}},"policyTypes":["Egress"],
        "egress":[{"to":[{"ipBlock":{"cidr":"10.244.0.0/16","except":["10.244.255.0/24"]}}]},
                  {"to":[{"ipBlock":{"cidr":"10.96.0.10/32"}}],"ports":[{"port":53,"protocol":"UDP"},{"port":53}]}]})");
  }
  return view;
}

NodeNetwork MakeNode(const ClusterView& view, size_t local) {
  NodeNetwork node;
  node.pod_cidr = *ParseIpv4Cidr("10.244.0.0/20");
  node.cluster_cidr = *ParseIpv4Cidr("10.244.0.0/16");
  for (size_t i = 0; i < local && i < view.pods.size(); ++i) {
    node.pods.push_back(LocalPod{*ParseIpv4(view.pods[i].ip), fmt::format("tsr{:011x}", i)});
  }
  return node;
}

double MedianRenderMs(const ClusterView& view, const NodeNetwork& node, int runs, std::string* text) {
  std::vector<double> times;
  for (int i = 0; i < runs; ++i) {
    const auto start = Clock::now();
    auto script = RenderNodeRuleset(view, node);
    times.push_back(std::chrono::duration<double, std::milli>(Clock::now() - start).count());
    if (!script) {
      std::fprintf(stderr, "%s\n", script.error().ToString().c_str());
      std::exit(1);
    }
    *text = std::move(*script);
  }
  std::sort(times.begin(), times.end());
  return times[times.size() / 2];
}

}  // namespace
}  // namespace tessera::net

int main(int argc, char** argv) {
  using namespace tessera::net;
  const int runs = argc > 1 ? std::max(1, std::atoi(argv[1])) : 11;
  const ClusterView view = MakeCluster();
  std::string small, large;
  const double small_ms = MedianRenderMs(view, MakeNode(view, 40), runs, &small);
  const double large_ms = MedianRenderMs(view, MakeNode(view, view.pods.size()), runs, &large);
  std::printf("pods %zu, policies %zu; ruleset for 40 local pods: %zu bytes, for all local: %zu bytes\n",
              view.pods.size(), view.policies.size(), small.size(), large.size());
  std::printf("BENCH net_render_40_local_ms %.2f ms\n", small_ms);
  std::printf("BENCH net_render_1000_local_ms %.2f ms\n", large_ms);
  std::printf("BENCH net_ruleset_1000_local_kib %zu KiB\n", large.size() / 1024);
  if (::geteuid() == 0) {
    for (const auto& [name, script] : {std::pair{"40", &small}, std::pair{"1000", &large}}) {
      double apply_ms = -1;
      std::string error;
      std::thread([&] {
        if (::unshare(CLONE_NEWNET) != 0) {
          error = "unshare(CLONE_NEWNET) refused";
          return;
        }
        const auto start = Clock::now();
        tessera::Status s = ApplyRuleset(*script);
        apply_ms = std::chrono::duration<double, std::milli>(Clock::now() - start).count();
        if (!s.ok()) error = s.ToString();
      }).join();
      if (!error.empty()) {
        std::fprintf(stderr, "apply: %s\n", error.c_str());
        return 1;
      }
      std::printf("BENCH net_apply_%s_local_ms %.1f ms\n", name, apply_ms);
    }
  }
  return 0;
}
