// Shared by the net tests: the upstream e2e's cluster of three namespaces
// (x, y, z, labelled ns=<name>) of three pods (a, b, c, labelled pod=<name>)
// serving TCP and UDP on ports 80 and 81 under the e2e's port names
// (serve-80-tcp, ...), policies written as JSON, and a reachability matrix
// with the e2e's Expect* helpers, printed as Cyclonus prints its tables.
#pragma once

#include <gtest/gtest.h>

#include <fmt/format.h>

#include <functional>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "net/cluster_view.h"
#include "net/network_policy.h"
#include "net/reachability.h"

namespace tessera::net::testing {

inline const std::vector<std::string>& Namespaces() {
  static const std::vector<std::string> kNamespaces = {"x", "y", "z"};
  return kNamespaces;
}
inline const std::vector<std::string>& PodNames() {
  static const std::vector<std::string> kPods = {"a", "b", "c"};
  return kPods;
}

// The 9 pods, x/a first; pod i of namespace n gets `prefix`.(10 + 3n + i).
inline ClusterView ThreeByThree(const std::string& prefix = "10.213.0") {
  ClusterView view;
  int n = 0;
  for (const std::string& ns : Namespaces()) {
    view.namespaces.push_back(NamespaceInfo{ns, {{"ns", ns}, {std::string(kNamespaceNameLabel), ns}}});
    int i = 0;
    for (const std::string& name : PodNames()) {
      PodInfo pod;
      pod.ns = ns;
      pod.name = name;
      pod.labels = {{"pod", name}};
      pod.ip = fmt::format("{}.{}", prefix, 10 + 3 * n + i);
      for (uint16_t port : {80, 81}) {
        pod.ports.push_back(ContainerPort{fmt::format("serve-{}-tcp", port), port, Protocol::kTCP});
        pod.ports.push_back(ContainerPort{fmt::format("serve-{}-udp", port), port, Protocol::kUDP});
      }
      view.pods.push_back(std::move(pod));
      ++i;
    }
    ++n;
  }
  return view;
}

// A NetworkPolicy from its JSON (a test's own text: a parse error fails it).
inline NetworkPolicy Policy(std::string_view text) {
  auto policy = ParseNetworkPolicy(nlohmann::json::parse(text));
  EXPECT_TRUE(policy.has_value()) << policy.error().ToString() << "\n" << text;
  return policy.value_or(NetworkPolicy{});
}

inline std::string Key(const PodInfo& p) { return p.ns + "/" + p.name; }

// Who reaches whom, over the view's pods; true everywhere to start with.
class Reachability {
 public:
  explicit Reachability(const ClusterView& view) {
    for (const PodInfo& p : view.pods) keys_.push_back(Key(p));
    for (const std::string& from : keys_) {
      for (const std::string& to : keys_) cells_[{from, to}] = true;
    }
  }
  // Every pod matching (ns, pod) to every pod matching (to_ns, to_pod); "" matches all.
  void ExpectPeer(std::string_view from_ns, std::string_view from_pod, std::string_view to_ns,
                  std::string_view to_pod, bool allowed) {
    for (auto& [key, cell] : cells_) {
      if (Matches(key.first, from_ns, from_pod) && Matches(key.second, to_ns, to_pod)) cell = allowed;
    }
  }
  void Expect(const std::string& from, const std::string& to, bool allowed) { cells_[{from, to}] = allowed; }
  void ExpectAllIngress(const std::string& to, bool allowed) {
    for (const std::string& from : keys_) cells_[{from, to}] = allowed;
  }
  void ExpectAllEgress(const std::string& from, bool allowed) {
    for (const std::string& to : keys_) cells_[{from, to}] = allowed;
  }
  // Loopback is never blocked (upstream e2e ignores it; Allowed says true).
  void AllowLoopback() {
    for (const std::string& k : keys_) cells_[{k, k}] = true;
  }
  bool At(const std::string& from, const std::string& to) const { return cells_.at({from, to}); }
  const std::vector<std::string>& keys() const { return keys_; }

 private:
  static bool Matches(const std::string& key, std::string_view ns, std::string_view pod) {
    const size_t slash = key.find('/');
    return (ns.empty() || key.substr(0, slash) == ns) && (pod.empty() || key.substr(slash + 1) == pod);
  }
  std::vector<std::string> keys_;
  std::map<std::pair<std::string, std::string>, bool> cells_;
};

// Cyclonus' table: rows are sources, columns destinations; "." allowed,
// "X" denied; a mismatch shows as the observed value in brackets.
inline std::string FormatMatrix(const std::vector<std::string>& keys,
                                const std::function<bool(const std::string&, const std::string&)>& expected,
                                const std::function<bool(const std::string&, const std::string&)>& observed) {
  std::string out = fmt::format("{:>6}", "");
  for (const std::string& to : keys) out += fmt::format(" {:>5}", to);
  out += "\n";
  for (const std::string& from : keys) {
    out += fmt::format("{:>6}", from);
    for (const std::string& to : keys) {
      const bool e = expected(from, to);
      const bool o = observed(from, to);
      out += fmt::format(" {:>5}", e == o ? (e ? "." : "X") : (o ? "[.]" : "[X]"));
    }
    out += "\n";
  }
  return out;
}

// Compares Allowed with `want` for (port, protocol); on a mismatch, the table.
inline ::testing::AssertionResult AllowedMatches(const ClusterView& view, const Reachability& want, uint16_t port,
                                                 Protocol protocol) {
  std::map<std::string, const PodInfo*> pods;
  for (const PodInfo& p : view.pods) pods[Key(p)] = &p;
  bool ok = true;
  auto observed = [&](const std::string& from, const std::string& to) {
    return Allowed(view, Peer::Pod(*pods.at(from)), *pods.at(to), port, protocol);
  };
  for (const std::string& from : want.keys()) {
    for (const std::string& to : want.keys()) ok = ok && observed(from, to) == want.At(from, to);
  }
  if (ok) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure()
         << "Allowed differs on " << ProtocolName(protocol) << " " << port << " (expected; [observed]):\n"
         << FormatMatrix(want.keys(), [&](const std::string& f, const std::string& t) { return want.At(f, t); },
                         observed);
}

}  // namespace tessera::net::testing
