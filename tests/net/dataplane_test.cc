// The real dataplane against the truth table, as Cyclonus tests a CNI: a
// "node" network namespace with a bridge, nine pod namespaces on it (x, y, z
// by a, b, c, as upstream's e2e suite lays them out), each serving TCP and
// UDP on ports 80 and 81; RenderNodeRuleset applied in the node's namespace
// through ApplyRuleset; every ordered pair probed on TCP 80, TCP 81, UDP 80
// and UDP 81 (plus the node, both ways) and compared with Allowed, scenario
// after scenario on the same pods, timing each change from the ApplyRuleset
// call to the matrix matching. Then Services: DNAT balanced over two pods,
// then one, hairpin, rejects, and policy applied after the DNAT.
//
// Needs root, `ip`, network namespaces, and br_netfilter (bridged IPv4 through
// the inet hooks); skips saying which is missing. Every namespace is removed
// at the end, a failure or not (RAII).
#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <sched.h>
#include <sys/socket.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cstring>
#include <fstream>
#include <future>
#include <iostream>
#include <map>
#include <memory>
#include <set>
#include <sstream>
#include <thread>

#include "api/manifest.h"
#include "net/nftables.h"
#include "net/node_ruleset.h"
#include "tests/net/net_testing.h"
#include "tests/testing/netns.h"
#include "tests/testing/seed_dir.h"

namespace tessera::net {
namespace {

using Clock = std::chrono::steady_clock;
using testing::FormatMatrix;
using testing::Key;
using testing::Policy;
using testing::ThreeByThree;
using tessera::testing::ScopedNetns;

constexpr const char* kGateway = "10.213.0.1";  // the bridge's address: the node, to its pods
constexpr const char* kNodeKey = "node";
constexpr std::chrono::milliseconds kProbeTimeout{300};

bool EnterNetns(const std::string& path) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return false;
  const bool ok = ::setns(fd, CLONE_NEWNET) == 0;
  ::close(fd);
  return ok;
}

uint32_t Ip(const std::string& text) { return *ParseIpv4(text); }

sockaddr_in Address(uint32_t ip, uint16_t port) {
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_port = htons(port);
  a.sin_addr.s_addr = htonl(ip);
  return a;
}

// TCP and UDP on 80 and 81 in one namespace, answering each connection or
// datagram with `identity` and a newline; stops when destroyed.
class EchoServer {
 public:
  EchoServer(std::string netns_path, std::string identity) : identity_(std::move(identity) + "\n") {
    if (::pipe2(stop_, O_CLOEXEC) != 0) throw std::runtime_error("pipe2");
    std::promise<std::string> ready;
    auto started = ready.get_future();
    thread_ = std::thread([this, path = std::move(netns_path), &ready] { Run(path, ready); });
    const std::string error = started.get();
    if (!error.empty()) {
      Stop();
      throw std::runtime_error(error);
    }
  }
  ~EchoServer() { Stop(); }

 private:
  void Stop() {
    if (thread_.joinable()) {
      char c = 'x';
      (void)!::write(stop_[1], &c, 1);
      thread_.join();
    }
    for (int& fd : stop_) {
      if (fd >= 0) ::close(fd);
      fd = -1;
    }
  }

  void Run(const std::string& path, std::promise<std::string>& ready) {
    if (!EnterNetns(path)) {
      ready.set_value("cannot enter " + path);
      return;
    }
    std::vector<pollfd> fds{{stop_[0], POLLIN, 0}};
    std::vector<bool> is_tcp{false};
    for (uint16_t port : {80, 81}) {
      for (int type : {SOCK_STREAM, SOCK_DGRAM}) {
        int fd = ::socket(AF_INET, type | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
        int one = 1;
        ::setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
        sockaddr_in a = Address(INADDR_ANY, port);
        if (fd < 0 || ::bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0 ||
            (type == SOCK_STREAM && ::listen(fd, 512) != 0)) {
          ready.set_value(std::string("echo server: cannot bind: ") + std::strerror(errno));
          return;
        }
        fds.push_back({fd, POLLIN, 0});
        is_tcp.push_back(type == SOCK_STREAM);
      }
    }
    ready.set_value("");
    while (true) {
      if (::poll(fds.data(), fds.size(), -1) < 0 && errno != EINTR) break;
      if (fds[0].revents != 0) break;
      for (size_t i = 1; i < fds.size(); ++i) {
        if ((fds[i].revents & POLLIN) == 0) continue;
        if (is_tcp[i]) {
          while (true) {
            int c = ::accept4(fds[i].fd, nullptr, nullptr, SOCK_CLOEXEC);
            if (c < 0) break;
            (void)!::write(c, identity_.data(), identity_.size());
            ::close(c);
          }
        } else {
          char buf[64];
          sockaddr_in from{};
          socklen_t len = sizeof from;
          while (::recvfrom(fds[i].fd, buf, sizeof buf, 0, reinterpret_cast<sockaddr*>(&from), &len) >= 0) {
            ::sendto(fds[i].fd, identity_.data(), identity_.size(), 0, reinterpret_cast<sockaddr*>(&from), len);
            len = sizeof from;
          }
        }
      }
    }
    for (size_t i = 1; i < fds.size(); ++i) ::close(fds[i].fd);
  }

  std::string identity_;
  int stop_[2] = {-1, -1};
  std::thread thread_;
};

struct Target {
  uint32_t ip = 0;
  uint16_t port = 0;
  Protocol protocol = Protocol::kTCP;
};
struct Outcome {
  bool ok = false;
  std::string reply;  // the server's identity
  int error = 0;      // errno of a failure, 0 for a timeout
};

// Probes every target at once from the calling thread's namespace: a TCP
// connect and the server's line, or a UDP datagram and its answer, each
// within `timeout`.
std::vector<Outcome> ProbeAll(const std::vector<Target>& targets, std::chrono::milliseconds timeout) {
  enum class State { kConnecting, kReading, kWaiting, kDone };
  std::vector<Outcome> out(targets.size());
  std::vector<State> state(targets.size(), State::kDone);
  std::vector<int> fd(targets.size(), -1);
  for (size_t i = 0; i < targets.size(); ++i) {
    const bool tcp = targets[i].protocol == Protocol::kTCP;
    fd[i] = ::socket(AF_INET, (tcp ? SOCK_STREAM : SOCK_DGRAM) | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    sockaddr_in a = Address(targets[i].ip, targets[i].port);
    const int rc = ::connect(fd[i], reinterpret_cast<sockaddr*>(&a), sizeof a);
    if (tcp) {
      if (rc == 0) {
        state[i] = State::kReading;
      } else if (errno == EINPROGRESS) {
        state[i] = State::kConnecting;
      } else {
        out[i].error = errno;
      }
    } else if (rc == 0 && ::send(fd[i], "?", 1, 0) == 1) {
      state[i] = State::kWaiting;
    } else {
      out[i].error = errno;
    }
  }
  const auto deadline = Clock::now() + timeout;
  while (true) {
    std::vector<pollfd> fds;
    std::vector<size_t> which;
    for (size_t i = 0; i < targets.size(); ++i) {
      if (state[i] == State::kDone) continue;
      fds.push_back({fd[i], static_cast<short>(state[i] == State::kConnecting ? POLLOUT : POLLIN), 0});
      which.push_back(i);
    }
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()).count();
    if (fds.empty() || left <= 0) break;
    if (::poll(fds.data(), fds.size(), static_cast<int>(left)) <= 0) continue;
    for (size_t k = 0; k < fds.size(); ++k) {
      if (fds[k].revents == 0) continue;
      const size_t i = which[k];
      if (state[i] == State::kConnecting) {
        int err = 0;
        socklen_t len = sizeof err;
        ::getsockopt(fd[i], SOL_SOCKET, SO_ERROR, &err, &len);
        if (err != 0) {
          out[i].error = err;
          state[i] = State::kDone;
        } else {
          state[i] = State::kReading;
        }
        continue;
      }
      char buf[64];
      const ssize_t n = ::recv(fd[i], buf, sizeof buf, 0);
      if (n > 0) {
        out[i].reply.append(buf, static_cast<size_t>(n));
        if (state[i] == State::kWaiting || out[i].reply.back() == '\n') {
          out[i].ok = true;
          state[i] = State::kDone;
        }
      } else if (n == 0 || (errno != EAGAIN && errno != EINTR)) {
        out[i].error = n == 0 ? ECONNRESET : errno;
        state[i] = State::kDone;
      }
    }
  }
  for (size_t i = 0; i < targets.size(); ++i) {
    ::close(fd[i]);
    while (!out[i].reply.empty() && out[i].reply.back() == '\n') out[i].reply.pop_back();
  }
  return out;
}

std::vector<Outcome> ProbeFrom(const std::string& netns_path, const std::vector<Target>& targets) {
  std::vector<Outcome> out;
  std::thread([&] {
    if (EnterNetns(netns_path)) out = ProbeAll(targets, kProbeTimeout);
  }).join();
  return out;
}

struct Combo {
  uint16_t port;
  Protocol protocol;
};
const std::vector<Combo>& Combos() {
  static const std::vector<Combo> kCombos = {
      {80, Protocol::kTCP}, {81, Protocol::kTCP}, {80, Protocol::kUDP}, {81, Protocol::kUDP}};
  return kCombos;
}

// (from, to, combo index) -> allowed
using Matrix = std::map<std::tuple<std::string, std::string, size_t>, bool>;

// The node namespace with its bridge and the nine pods, each serving.
class Topology {
 public:
  explicit Topology(const ClusterView& view) : node_("node") {
    Must(node_.Shell("ip link add tsr0 type bridge && ip addr add 10.213.0.1/24 dev tsr0 && ip link set tsr0 up && "
                     "sysctl -qw net.ipv4.ip_forward=1 && ip route add 10.96.0.0/16 dev tsr0"),
         "the node's bridge");
    for (size_t i = 0; i < view.pods.size(); ++i) {
      const PodInfo& pod = view.pods[i];
      auto ns = std::make_unique<ScopedNetns>(pod.ns + pod.name);
      const std::string veth = fmt::format("vp{}", i);
      // As agent/pod_network.h plumbs a pod, plus hairpin mode on the port
      // (the CNI bridge plugin's hairpinMode): a pod reaching itself through
      // its Service is DNATed back to its own port, which a bridge refuses
      // without it (the hairpin probes below fail then).
      Must(node_.Shell(fmt::format("ip link add {0} type veth peer name eth0 netns {1} && ip link set {0} master tsr0 up "
                                   "&& ip link set dev {0} type bridge_slave hairpin on",
                                   veth, ns->name())),
           "veth of " + Key(pod));
      Must(ns->Shell(fmt::format("ip addr add {}/24 dev eth0 && ip link set eth0 up && ip route add default via {}", pod.ip,
                                 kGateway)),
           "address of " + Key(pod));
      keys_.push_back(Key(pod));
      ips_[Key(pod)] = Ip(pod.ip);
      netns_[Key(pod)] = ns->path();
      veths_.push_back(LocalPod{Ip(pod.ip), veth});
      pods_.push_back(std::move(ns));
    }
    netns_[kNodeKey] = node_.path();
    ips_[kNodeKey] = Ip(kGateway);
    keys_.push_back(kNodeKey);
    for (const auto& [key, path] : netns_) servers_.push_back(std::make_unique<EchoServer>(path, key));
  }
  ~Topology() {
    servers_.clear();  // before their namespaces go
    pods_.clear();
  }

  NodeNetwork Node() const {
    NodeNetwork node;
    node.bridge = "tsr0";
    node.pod_cidr = *ParseIpv4Cidr("10.213.0.0/24");
    node.cluster_cidr = *ParseIpv4Cidr("10.213.0.0/16");
    node.pods = veths_;
    return node;
  }

  Status Apply(const std::string& script) const {
    return ScopedNetns::RunInPath(node_.path(), [&] { return ApplyRuleset(script); });
  }
  Status DeleteTables() const {
    return ScopedNetns::RunInPath(node_.path(), [&] { return DeleteTesseraTables(); });
  }

  // One probe of every pair (the node not to itself) and combo, all sources at once.
  Matrix Round() const {
    std::map<std::string, std::vector<Outcome>> outcomes;
    std::map<std::string, std::vector<std::tuple<std::string, size_t>>> cells;
    std::vector<std::thread> threads;
    std::mutex mu;
    for (const std::string& from : keys_) {
      std::vector<Target> targets;
      for (const std::string& to : keys_) {
        if (from == kNodeKey && to == kNodeKey) continue;
        for (size_t c = 0; c < Combos().size(); ++c) {
          targets.push_back({ips_.at(to), Combos()[c].port, Combos()[c].protocol});
          cells[from].push_back({to, c});
        }
      }
      threads.emplace_back([&, from, targets] {
        auto o = ProbeFrom(netns_.at(from), targets);
        std::lock_guard lock(mu);
        outcomes[from] = std::move(o);
      });
    }
    for (std::thread& t : threads) t.join();
    Matrix m;
    for (const auto& [from, list] : cells) {
      for (size_t i = 0; i < list.size(); ++i) {
        const auto& [to, c] = list[i];
        const auto& o = outcomes.at(from);
        m[{from, to, c}] = i < o.size() && o[i].ok && o[i].reply == to;
      }
    }
    return m;
  }

  std::vector<Outcome> Probe(const std::string& from, const std::vector<Target>& targets) const {
    return ProbeFrom(netns_.at(from), targets);
  }

  const std::vector<std::string>& keys() const { return keys_; }

  bool BridgeNetfilter() const {
    return node_.RunIn([] {
      std::ifstream in("/proc/sys/net/bridge/bridge-nf-call-iptables");
      int on = 0;
      return static_cast<bool>(in >> on) && on == 1;
    });
  }

 private:
  static void Must(int rc, const std::string& what) {
    if (rc != 0) throw std::runtime_error("cannot make " + what + " (ip exited " + std::to_string(rc) + ")");
  }

  ScopedNetns node_;
  std::vector<std::unique_ptr<ScopedNetns>> pods_;
  std::vector<std::unique_ptr<EchoServer>> servers_;
  std::vector<std::string> keys_;
  std::map<std::string, uint32_t> ips_;
  std::map<std::string, std::string> netns_;
  std::vector<LocalPod> veths_;
};

// What Allowed says for every cell: pods by their PodInfo, the node as the
// destination pod's node (from) and as its gateway address (to).
Matrix Expected(const ClusterView& view, const std::vector<std::string>& keys) {
  std::map<std::string, const PodInfo*> pods;
  for (const PodInfo& p : view.pods) pods[Key(p)] = &p;
  Matrix m;
  for (const std::string& from : keys) {
    for (const std::string& to : keys) {
      if (from == kNodeKey && to == kNodeKey) continue;
      for (size_t c = 0; c < Combos().size(); ++c) {
        const Peer source = from == kNodeKey ? Peer::Node() : Peer::Pod(*pods.at(from));
        const Peer destination = to == kNodeKey ? Peer::Ip(kGateway) : Peer::Pod(*pods.at(to));
        m[{from, to, c}] = Allowed(view, source, destination, Combos()[c].port, Combos()[c].protocol);
      }
    }
  }
  return m;
}

std::string Describe(const Matrix& want, const Matrix& got, const std::vector<std::string>& keys) {
  std::string out;
  for (size_t c = 0; c < Combos().size(); ++c) {
    auto cell = [&](const Matrix& m, const std::string& f, const std::string& t) {
      if (f == kNodeKey && t == kNodeKey) return true;
      return m.at({f, t, c});
    };
    out += fmt::format("{} {} (expected; [observed] where they differ):\n", ProtocolName(Combos()[c].protocol),
                       Combos()[c].port);
    out += FormatMatrix(keys, [&](const std::string& f, const std::string& t) { return cell(want, f, t); },
                        [&](const std::string& f, const std::string& t) { return cell(got, f, t); });
  }
  return out;
}

class DataplaneTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    if (!tessera::testing::CanMakeNetns()) {
      skip_ = "needs root and network namespaces (run as root)";
      return;
    }
    if (std::system("ip -V >/dev/null 2>&1") != 0) {
      skip_ = "needs iproute2's ip";
      return;
    }
    try {
      topology_ = new Topology(ThreeByThree());
    } catch (const std::exception& e) {
      error_ = std::string("cannot build the test network: ") + e.what();  // a failure, not a skip: we are root
      return;
    }
    if (!topology_->BridgeNetfilter()) {
      delete topology_;
      topology_ = nullptr;
      skip_ = "needs br_netfilter (net.bridge.bridge-nf-call-iptables = 1 in a new namespace): bridged traffic "
              "would bypass the inet hooks";
    }
  }
  static void TearDownTestSuite() {
    delete topology_;
    topology_ = nullptr;
  }
  void SetUp() override {
    if (!skip_.empty()) GTEST_SKIP() << skip_;
    ASSERT_TRUE(error_.empty()) << error_;
  }

  // Applies the ruleset of `view` and probes until the matrix is Allowed's
  // (or 5 s pass); the time from the ApplyRuleset call to the match.
  void ExpectEnforced(const std::string& scenario, const ClusterView& view, const Matrix* expected_override = nullptr,
                      const std::string* script_override = nullptr) {
    auto script = script_override ? Result<std::string>(*script_override) : RenderNodeRuleset(view, topology_->Node());
    ASSERT_TRUE(script.has_value()) << script.error().ToString();
    const Matrix want = expected_override ? *expected_override : Expected(view, topology_->keys());
    const auto start = Clock::now();
    Status applied = topology_->Apply(*script);
    const auto applied_at = Clock::now();
    ASSERT_TRUE(applied.ok()) << applied.ToString() << "\n" << *script;
    Matrix got;
    int rounds = 0;
    do {
      got = topology_->Round();
      ++rounds;
    } while (got != want && Clock::now() - start < std::chrono::seconds(5));
    const auto matched_at = Clock::now();
    auto ms = [](auto d) { return std::chrono::duration<double, std::milli>(d).count(); };
    size_t denied = 0;
    for (const auto& [cell, allowed] : want) denied += allowed ? 0 : 1;
    std::cout << fmt::format("[dataplane] {:<44} {:>3} cells denied of {}; ApplyRuleset {:6.1f} ms; matrix matched "
                             "after {} round(s), {:6.1f} ms after the call\n",
                             scenario, denied, want.size(), ms(applied_at - start), rounds, ms(matched_at - start));
    EXPECT_TRUE(got == want) << scenario << ": the dataplane differs from Allowed after 5 s\n"
                             << Describe(want, got, topology_->keys()) << "\nruleset:\n"
                             << *script;
  }

  static inline Topology* topology_ = nullptr;
  static inline std::string skip_;
  static inline std::string error_;
};

// The seed's policy, from its file when the seed is there, moved to namespace x.
NetworkPolicy SeedPolicyInX() {
  for (const auto& f : tessera::testing::SeedManifestFiles()) {
    if (f.filename().string().find("networkpolicy") == std::string::npos) continue;
    std::ifstream in(f);
    std::stringstream text;
    text << in.rdbuf();
    auto docs = ParseManifests(text.str());
    if (!docs || docs->empty()) break;
    nlohmann::json object = docs->at(0).object;
    object["metadata"]["namespace"] = "x";
    auto p = ParseNetworkPolicy(object);
    if (p) return *p;
  }
  return Policy(R"({"metadata":{"name":"deny-other-namespaces","namespace":"x"},
      "spec":{"podSelector":{},"policyTypes":["Ingress"],"ingress":[{"from":[{"podSelector":{}}]}]}})");
}

TEST_F(DataplaneTest, PolicyScenariosMatchTheTruthTable) {
  struct Scenario {
    std::string name;
    std::vector<std::string> policies;
    bool unparsed_in_y = false;
  };
  const std::vector<Scenario> scenarios = {
      {"no policy", {}},
      {"deny-all ingress in x", {R"({"metadata":{"name":"deny","namespace":"x"},"spec":{"podSelector":{}}})"}},
      {"seed deny-other-namespaces in x", {"seed"}},
      {"ns=y to x/a on TCP 80 only",
       {R"({"metadata":{"name":"y-to-a-80","namespace":"x"},"spec":{"podSelector":{"matchLabels":{"pod":"a"}},
           "ingress":[{"from":[{"namespaceSelector":{"matchLabels":{"ns":"y"}}}],"ports":[{"port":80}]}]}})"}},
      {"x/a egress deny-all but ipBlock y/b",
       {R"({"metadata":{"name":"a-out","namespace":"x"},"spec":{"podSelector":{"matchLabels":{"pod":"a"}},
           "policyTypes":["Egress"],"egress":[{"to":[{"ipBlock":{"cidr":"10.213.0.0/24","except":["10.213.0.0/28"]}}]},
                                              {"to":[{"ipBlock":{"cidr":"10.213.0.14/32"}}]}]}})"}},
      {"ns!=x AND pod=b into x/a",
       {R"({"metadata":{"name":"and","namespace":"x"},"spec":{"podSelector":{"matchLabels":{"pod":"a"}},
           "ingress":[{"from":[{"namespaceSelector":{"matchExpressions":[{"key":"ns","operator":"NotIn","values":["x"]}]},
                                "podSelector":{"matchLabels":{"pod":"b"}}}]}]}})"}},
      {"named ports serve-81-udp and serve-80-tcp into y",
       {R"({"metadata":{"name":"named","namespace":"y"},"spec":{"podSelector":{},
           "ingress":[{"ports":[{"port":"serve-81-udp","protocol":"UDP"}]},
                      {"from":[{"namespaceSelector":{"matchLabels":{"ns":"z"}}}],"ports":[{"port":"serve-80-tcp"}]}]}})"}},
      {"endPort 81-90 into z/b, and z egress to the node on 81",
       {R"({"metadata":{"name":"range","namespace":"z"},"spec":{"podSelector":{"matchLabels":{"pod":"b"}},
           "ingress":[{"ports":[{"port":81,"endPort":90},{"port":81,"endPort":90,"protocol":"UDP"}]}]}})",
        R"({"metadata":{"name":"to-node","namespace":"z"},"spec":{"podSelector":{},"policyTypes":["Egress"],
           "egress":[{"to":[{"ipBlock":{"cidr":"10.213.0.1/32"}}],"ports":[{"port":81}]},
                     {"to":[{"namespaceSelector":{}}]}]}})"}},
      {"deny-all both ways in x, two policies union",
       {R"({"metadata":{"name":"deny-all","namespace":"x"},"spec":{"podSelector":{},"policyTypes":["Ingress","Egress"]}})",
        R"({"metadata":{"name":"allow-c","namespace":"x"},"spec":{"podSelector":{"matchLabels":{"pod":"c"}},
           "policyTypes":["Ingress","Egress"],"ingress":[{"from":[{"podSelector":{"matchLabels":{"pod":"a"}}}]}],
           "egress":[{"to":[{"namespaceSelector":{"matchLabels":{"ns":"z"}},"podSelector":{}}],"ports":[{"protocol":"UDP"}]}]}})"}},
      {"unparsed policy in y fails closed", {}, true},
      {"back to no policy", {}},
  };
  for (const Scenario& s : scenarios) {
    ClusterView view = ThreeByThree();
    for (const std::string& p : s.policies) view.policies.push_back(p == "seed" ? SeedPolicyInX() : Policy(p));
    if (s.unparsed_in_y) view.unparsed_policies.push_back(UnparsedPolicy{"y", "broken", "spec: ..."});
    ExpectEnforced(s.name, view);
  }
}

TEST_F(DataplaneTest, DenyAllRulesetKeepsOnlyTheNodesProbes) {
  ClusterView view = ThreeByThree();
  auto deny = RenderDenyAllRuleset(topology_->Node());
  ASSERT_TRUE(deny.has_value());
  Matrix want;
  for (const std::string& from : topology_->keys()) {
    for (const std::string& to : topology_->keys()) {
      if (from == kNodeKey && to == kNodeKey) continue;
      for (size_t c = 0; c < Combos().size(); ++c) want[{from, to, c}] = from == kNodeKey || from == to;
    }
  }
  ExpectEnforced("RenderDenyAllRuleset", view, &want, &*deny);
  ASSERT_TRUE(topology_->DeleteTables().ok());
  ExpectEnforced("DeleteTesseraTables: all open again", view, nullptr, nullptr);
}

std::map<std::string, int> Replies(const std::vector<Outcome>& outcomes, int* failures) {
  std::map<std::string, int> counts;
  for (const Outcome& o : outcomes) {
    if (o.ok) {
      ++counts[o.reply];
    } else {
      ++*failures;
    }
  }
  return counts;
}

TEST_F(DataplaneTest, ServicesBalanceFollowEndpointsRejectAndHairpin) {
  const uint32_t vip = Ip("10.96.0.10");
  ClusterView view = ThreeByThree();
  view.services.push_back(ServiceInfo{"x", "web", "10.96.0.10",
                                      {{"http", Protocol::kTCP, 80, 81}, {"dns", Protocol::kUDP, 53, 80}},
                                      {"10.213.0.11", "10.213.0.12"}});  // x/b, x/c
  view.services.push_back(ServiceInfo{"x", "none", "10.96.0.11", {{"http", Protocol::kTCP, 80, 80}}, {}});
  auto script = RenderNodeRuleset(view, topology_->Node());
  ASSERT_TRUE(script.has_value());
  ASSERT_TRUE(topology_->Apply(*script).ok());

  // 40 new connections from y/a, TCP and UDP: both endpoints answer.
  std::vector<Target> tcp(40, Target{vip, 80, Protocol::kTCP});
  std::vector<Target> udp(40, Target{vip, 53, Protocol::kUDP});
  int failures = 0;
  auto tcp_replies = Replies(topology_->Probe("y/a", tcp), &failures);
  auto udp_replies = Replies(topology_->Probe("y/a", udp), &failures);
  EXPECT_EQ(failures, 0);
  EXPECT_EQ(tcp_replies.size(), 2u) << "TCP answers from " << tcp_replies.size() << " endpoints";
  EXPECT_GT(tcp_replies["x/b"], 0);
  EXPECT_GT(tcp_replies["x/c"], 0);
  EXPECT_GT(udp_replies["x/b"], 0);
  EXPECT_GT(udp_replies["x/c"], 0);
  std::cout << fmt::format("[dataplane] 40 TCP connections to the cluster IP: x/b {}, x/c {}; 40 UDP: x/b {}, x/c {}\n",
                           tcp_replies["x/b"], tcp_replies["x/c"], udp_replies["x/b"], udp_replies["x/c"]);

  // From the node itself (nat output), and a pod to its own Service (hairpin).
  failures = 0;
  auto node_replies = Replies(topology_->Probe(kNodeKey, std::vector<Target>(10, Target{vip, 80, Protocol::kTCP})), &failures);
  EXPECT_EQ(failures, 0) << "the node cannot reach the cluster IP";
  failures = 0;
  auto hairpin = Replies(topology_->Probe("x/b", std::vector<Target>(20, Target{vip, 80, Protocol::kTCP})), &failures);
  EXPECT_EQ(failures, 0) << "x/b cannot reach its own Service";
  EXPECT_GT(hairpin["x/b"], 0) << "no hairpin answer from x/b itself";

  // No ready endpoint, or a port the Service does not serve: refused at once.
  auto refused = topology_->Probe("y/a", {Target{Ip("10.96.0.11"), 80, Protocol::kTCP}, Target{vip, 9999, Protocol::kTCP}});
  ASSERT_EQ(refused.size(), 2u);
  EXPECT_EQ(refused[0].error, ECONNREFUSED) << std::strerror(refused[0].error);
  EXPECT_EQ(refused[1].error, ECONNREFUSED) << std::strerror(refused[1].error);

  // x/c leaves the endpoints: every new connection goes to x/b.
  view.services[0].ready_endpoint_ips = {"10.213.0.11"};
  auto one = RenderNodeRuleset(view, topology_->Node());
  ASSERT_TRUE(one.has_value());
  const auto start = Clock::now();
  ASSERT_TRUE(topology_->Apply(*one).ok());
  failures = 0;
  auto after = Replies(topology_->Probe("y/a", tcp), &failures);
  const double ms = std::chrono::duration<double, std::milli>(Clock::now() - start).count();
  EXPECT_EQ(failures, 0);
  EXPECT_EQ(after, (std::map<std::string, int>{{"x/b", 40}}));
  std::cout << fmt::format("[dataplane] endpoint x/c removed: 40 of 40 new connections to x/b, {:.1f} ms from the "
                           "ApplyRuleset call to the last answer\n",
                           ms);
  failures = 0;
  hairpin = Replies(topology_->Probe("x/b", std::vector<Target>(5, Target{vip, 80, Protocol::kTCP})), &failures);
  EXPECT_EQ(hairpin, (std::map<std::string, int>{{"x/b", 5}})) << failures << " hairpin probes failed";

  // Policy applies after DNAT: x/b takes ingress from x only, so y/a's
  // connections to the Service fail and x/a's pass.
  view.policies.push_back(Policy(R"({"metadata":{"name":"b-from-x","namespace":"x"},
      "spec":{"podSelector":{"matchLabels":{"pod":"b"}},"ingress":[{"from":[{"podSelector":{}}]}]}})"));
  auto guarded = RenderNodeRuleset(view, topology_->Node());
  ASSERT_TRUE(guarded.has_value());
  ASSERT_TRUE(topology_->Apply(*guarded).ok());
  auto from_y = topology_->Probe("y/a", {Target{vip, 80, Protocol::kTCP}, Target{vip, 53, Protocol::kUDP}});
  auto from_x = topology_->Probe("x/a", {Target{vip, 80, Protocol::kTCP}, Target{vip, 53, Protocol::kUDP}});
  ASSERT_EQ(from_y.size(), 2u);
  ASSERT_EQ(from_x.size(), 2u);
  EXPECT_FALSE(from_y[0].ok);
  EXPECT_FALSE(from_y[1].ok);
  EXPECT_TRUE(from_x[0].ok && from_x[0].reply == "x/b");
  EXPECT_TRUE(from_x[1].ok && from_x[1].reply == "x/b");
  ASSERT_TRUE(topology_->DeleteTables().ok());
}

}  // namespace
}  // namespace tessera::net
