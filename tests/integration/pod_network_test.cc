// The pod network end to end: nodes made as network namespaces of the test's
// (several `tessera agent --pod-network bridge` on one host, each in its own
// namespace), joined by a fabric bridge in another namespace where `tessera
// server` listens. Every pod gets a namespace and an IP of its node's
// podCIDR; pods on different nodes reach each other through the host-gw
// routes; a gang's MASTER_ADDR is its rank 0's pod IP.
//
//   netns fab:  bridge fab0 10.213.0.1/24, tessera server on 10.213.0.1
//   netns n1:   eth0 10.213.0.11 (veth into fab0), tessera agent, bridge tsr0, pods
//   netns n2:   eth0 10.213.0.12 ...
#include <arpa/inet.h>
#include <fmt/format.h>
#include <cstdio>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <nlohmann/json.hpp>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <sys/mount.h>

#include <chrono>
#include <map>
#include <mutex>
#include <optional>
#include <set>
#include <filesystem>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "client/api_client.h"
#include "domain/ipv4_cidr.h"
#include "net/cluster_view.h"
#include "net/reachability.h"
#include "tests/integration/tessera_processes.h"
#include "tests/testing/netns.h"
#include "tests/testing/test_dirs.h"

namespace tessera {
namespace {

using nlohmann::json;
namespace fs = std::filesystem;
using testing::ScopedNetns;

// A TCP connection from inside `netns` to ip:port, given up after 0.3 s (a
// dropped SYN). With `get`, an HTTP GET of / and the last line of the answer
// ("" when none came within a second); without, "connected".
std::string TcpSays(const std::string& netns, const std::string& ip, int port, bool get = true) {
  if (!fs::exists(netns)) return "";
  return ScopedNetns::RunInPath(netns, [&] {
    std::string said;
    const int s = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    timeval connect_timeout{.tv_sec = 0, .tv_usec = 300'000};
    timeval read_timeout{.tv_sec = 1, .tv_usec = 0};
    ::setsockopt(s, SOL_SOCKET, SO_SNDTIMEO, &connect_timeout, sizeof(connect_timeout));
    ::setsockopt(s, SOL_SOCKET, SO_RCVTIMEO, &read_timeout, sizeof(read_timeout));
    sockaddr_in a{.sin_family = AF_INET, .sin_port = htons(static_cast<uint16_t>(port)), .sin_addr = {}, .sin_zero = {}};
    ::inet_pton(AF_INET, ip.c_str(), &a.sin_addr);
    if (::connect(s, reinterpret_cast<sockaddr*>(&a), sizeof(a)) == 0) {
      if (!get) {
        said = "connected";
      } else {
        const std::string request = "GET / HTTP/1.0\r\n\r\n";
        if (::send(s, request.data(), request.size(), MSG_NOSIGNAL) == static_cast<ssize_t>(request.size())) {
          std::string answer;
          char buf[512];
          for (ssize_t n; (n = ::recv(s, buf, sizeof(buf), 0)) > 0;) answer.append(buf, static_cast<size_t>(n));
          while (!answer.empty() && (answer.back() == '\n' || answer.back() == '\r')) answer.pop_back();
          said = answer.substr(answer.find_last_of('\n') + 1);
        }
      }
    }
    ::close(s);
    return said;
  });
}

class PodNetworkE2ETest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!testing::CanMakeNetns()) GTEST_SKIP() << "needs root and network namespaces (CAP_SYS_ADMIN)";
    dir_ = testing::FreshTestDir("tessera-podnet");
    fab_ = std::make_unique<ScopedNetns>("fab");
    ASSERT_EQ(fab_->Shell("ip link add fab0 type bridge && ip addr add 10.213.0.1/24 dev fab0 && ip link set fab0 up"), 0);
    server_ = fab_->RunIn([&] { return StartServer((dir_ / "server").string(), "10.213.0.1:0"); });
    ASSERT_FALSE(server_.url.empty()) << testing::ReadFile((dir_ / "server" / "server.out").string());
    token_ = ReadToken((dir_ / "server").string());
  }
  void TearDown() override {
    for (pid_t pid : agents_) {
      KillProcess(pid, SIGTERM);
      waitpid(pid, nullptr, 0);
    }
    if (server_.pid > 0) {
      KillProcess(server_.pid, SIGKILL);
      waitpid(server_.pid, nullptr, 0);
    }
    // The pods' namespaces outlive their agents (a restarted agent adopts
    // them); the test's go with it.
    for (const std::string& uid : pod_uids_) {
      const fs::path netns = fs::path("/run/netns") / ("tsr-" + uid);
      ::umount2(netns.c_str(), MNT_DETACH);
      std::error_code ec;
      fs::remove(netns, ec);
    }
    nodes_.clear();
    fab_.reset();
    if (!dir_.empty()) fs::remove_all(dir_);
  }

  // A node: a namespace on the fabric at 10.213.0.(10+i), running an agent.
  void AddNode(int i, const std::string& gpus = "1xA100-80GB") {
    auto node = std::make_unique<ScopedNetns>("n" + std::to_string(i));
    const std::string address = "10.213.0." + std::to_string(10 + i);
    ASSERT_EQ(std::system(fmt::format("ip link add tf{} netns {} type veth peer name eth0 netns {}", i, fab_->name(),
                                      node->name())
                              .c_str()),
              0);
    ASSERT_EQ(fab_->Shell(fmt::format("ip link set tf{} master fab0 up", i)), 0);
    ASSERT_EQ(node->Shell(fmt::format("ip addr add {}/24 dev eth0 && ip link set eth0 up", address)), 0);
    const std::string name = "n" + std::to_string(i);
    const pid_t pid = node->RunIn([&] {
      return StartAgent(server_.url, token_, name, (dir_ / name).string(),
                        {"--pod-network", "bridge", "--address", address, "--gpus", gpus, "--lease-duration", "10"});
    });
    ASSERT_GT(pid, 0) << testing::ReadFile((dir_ / (name + ".out")).string());
    agents_.push_back(pid);
    nodes_.push_back(std::move(node));
  }

  Result<ApiResponse> Api(const std::string& method, const std::string& path, const std::string& body = "") {
    return fab_->RunIn([&] {
      ApiClient client(server_.url, token_);
      return client.Request(method, path, body);
    });
  }
  json Get(const std::string& path) {
    auto r = Api("GET", path);
    return r && r->status == 200 ? json::parse(r->body) : json();
  }
  // A pod bound to `node` that serves "NAME" over HTTP on port 8080 (busybox's httpd).
  void ServingPod(const std::string& name, const std::string& node, const std::string& ns = "default",
                  const std::string& app = "") {
    json pod{{"apiVersion", "v1"},
             {"kind", "Pod"},
             {"metadata", {{"name", name}, {"namespace", ns}, {"labels", {{"app", app.empty() ? name : app}}}}},
             {"spec",
              {{"nodeName", node},
               {"restartPolicy", "Never"},
               {"terminationGracePeriodSeconds", 1},
               {"containers",
                json::array({{{"name", "main"},
                              {"command",
                               {"sh", "-c",
                                "mkdir -p www && echo " + name + " > www/index.html && exec busybox httpd -f -p 8080 -h www"}},
                              {"ports", {{{"name", "http"}, {"containerPort", 8080}}}}}})}}}};
    auto r = Api("POST", "/api/v1/namespaces/" + ns + "/pods", pod.dump());
    ASSERT_TRUE(r && r->status == 201) << (r ? r->body : r.error().ToString());
  }
  json RunningPod(const std::string& name, const std::string& ns = "default") {
    json pod;
    WaitUntil(
        [&] {
          pod = Get("/api/v1/namespaces/" + ns + "/pods/" + name);
          const json status = pod.is_object() ? pod.value("status", json::object()) : json::object();
          return status.value("phase", "") == "Running" && !status.value("podIP", "").empty();
        },
        20);
    if (pod.is_object()) pod_uids_.push_back(pod["metadata"].value("uid", ""));
    return pod;
  }
  std::string NetnsOf(const json& pod) { return "/run/netns/tsr-" + pod["metadata"].value("uid", ""); }
  // Namespaces x, y and z (labelled ns=<name>), each with a serving pod per
  // (name, node) of `layout`; the running pods as "ns/name", in that order.
  std::vector<std::pair<std::string, json>> ThreeNamespaces(
      const std::vector<std::pair<std::string, std::string>>& layout) {
    std::vector<std::pair<std::string, json>> pods;
    for (const char* ns : {"x", "y", "z"}) {
      json object{{"apiVersion", "v1"}, {"kind", "Namespace"}, {"metadata", {{"name", ns}, {"labels", {{"ns", ns}}}}}};
      auto r = Api("POST", "/api/v1/namespaces", object.dump());
      EXPECT_TRUE(r && r->status == 201) << (r ? r->body : r.error().ToString());
      for (const auto& [name, node] : layout) ServingPod(name, node, ns);
    }
    for (const char* ns : {"x", "y", "z"}) {
      for (const auto& [name, node] : layout) {
        json pod = RunningPod(name, ns);
        EXPECT_EQ(pod.value("status", json::object()).value("phase", ""), "Running")
            << ns << "/" << name << ": " << pod.dump() << "\n"
            << testing::ReadFile((dir_ / (node + ".out")).string());
        pods.emplace_back(std::string(ns) + "/" + name, pod);
      }
    }
    return pods;
  }
  std::string Said(const std::string& netns, const std::string& ip) {
    std::string said;
    // A few tries: the pod may have only just started its server.
    for (int i = 0; i < 20 && said.empty(); ++i) {
      said = TcpSays(netns, ip, 8080);
      if (said.empty()) std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
    while (!said.empty() && said.back() == '\n') said.pop_back();
    return said;
  }

  fs::path dir_;
  std::unique_ptr<ScopedNetns> fab_;
  std::vector<std::unique_ptr<ScopedNetns>> nodes_;
  ServerProcess server_;
  std::string token_;
  std::vector<pid_t> agents_;
  std::vector<std::string> pod_uids_;
};

TEST_F(PodNetworkE2ETest, PodsGetAnIpOfTheirNodesRangeAndReachEachOtherAcrossNodes) {
  AddNode(1);
  AddNode(2);
  ASSERT_FALSE(HasFatalFailure());
  ServingPod("a", "n1");
  ServingPod("b", "n1");
  ServingPod("c", "n2");
  const json a = RunningPod("a"), b = RunningPod("b"), c = RunningPod("c");
  ASSERT_TRUE(a.is_object() && b.is_object() && c.is_object());
  for (const json* pod : {&a, &b, &c}) {
    const json node = Get("/api/v1/nodes/" + (*pod)["spec"].value("nodeName", ""));
    const auto range = ParseIpv4Cidr(node["spec"].value("podCIDR", ""));
    const auto ip = ParseIpv4Cidr((*pod)["status"].value("podIP", "") + "/32");
    ASSERT_TRUE(range && ip) << node.dump() << (*pod)["status"].dump();
    EXPECT_TRUE(range->Contains(ip->network)) << "pod IP " << (*pod)["status"]["podIP"] << " not in " << range->ToString();
    EXPECT_NE((*pod)["status"].value("podIP", ""), (*pod)["status"].value("hostIP", "")) << "the pod has its own IP";
    EXPECT_EQ((*pod)["status"]["podIPs"][0]["ip"], (*pod)["status"]["podIP"]);
  }
  EXPECT_NE(a["status"]["podIP"], b["status"]["podIP"]);
  // Same node, over its bridge; across nodes, through the host-gw routes.
  EXPECT_EQ(Said(NetnsOf(a), b["status"]["podIP"]), "b");
  EXPECT_EQ(Said(NetnsOf(a), c["status"]["podIP"]), "c");
  EXPECT_EQ(Said(NetnsOf(c), a["status"]["podIP"]), "a");
  // Each node routes the other's range through its address, and nothing else.
  const json n2 = Get("/api/v1/nodes/n2");
  const std::string routes = nodes_[0]->RunIn([] {
    std::string out;
    FILE* p = ::popen("ip route show proto 231", "r");
    char buf[256];
    while (p && std::fgets(buf, sizeof(buf), p)) out += buf;
    if (p) ::pclose(p);
    return out;
  });
  EXPECT_NE(routes.find(n2["spec"].value("podCIDR", "") + " via 10.213.0.12"), std::string::npos) << routes;

  // A pod's end frees its namespace.
  auto r = Api("DELETE", "/api/v1/namespaces/default/pods/b");
  ASSERT_TRUE(r && r->status / 100 == 2);
  EXPECT_TRUE(WaitUntil([&] { return !fs::exists(NetnsOf(b)); }, 15)) << NetnsOf(b);
}

// Probes every ordered pair of `pods` (TCP 8080): "from->to" for each pair
// that connects. The destinations are probed at once, each by one source
// after another.
std::set<std::string> Reachable(const std::vector<std::pair<std::string, json>>& pods) {
  std::set<std::string> out;
  std::mutex mu;
  std::vector<std::thread> probes;
  for (const auto& [to, b] : pods) {
    probes.emplace_back([&, to = to, b = &b] {
      for (const auto& [from, a] : pods) {
        if (from == to) continue;
        const std::string said =
            TcpSays("/run/netns/tsr-" + a["metadata"].value("uid", ""), (*b)["status"].value("podIP", ""), 8080,
                    /*read=*/false);
        std::lock_guard lock(mu);
        if (!said.empty()) out.insert(from + "->" + to);
      }
    });
  }
  for (auto& t : probes) t.join();
  return out;
}

std::string Describe(const std::set<std::string>& pairs) {
  std::string s;
  for (const std::string& p : pairs) s += p + " ";
  return s;
}

TEST_F(PodNetworkE2ETest, TheSeedsDenyOtherNamespacesPolicyIsEnforcedAcrossNodesAndFollowsChanges) {
  AddNode(1);
  AddNode(2);
  ASSERT_FALSE(HasFatalFailure());
  // Three namespaces, a pod of each on each node.
  const auto pods = ThreeNamespaces({{"a", "n1"}, {"b", "n2"}});
  ASSERT_FALSE(HasFailure());
  std::set<std::string> everyone;
  for (const auto& [from, a] : pods) {
    for (const auto& [to, b] : pods) {
      if (from != to) everyone.insert(from + "->" + to);
    }
  }
  // Until the matrix is `want` (the rules follow changes within the agents'
  // next pass): how long it took, or -1.
  const auto until = [&](const std::set<std::string>& want, int seconds) -> int64_t {
    const auto start = std::chrono::steady_clock::now();
    std::set<std::string> got;
    while (std::chrono::steady_clock::now() - start < std::chrono::seconds(seconds)) {
      got = Reachable(pods);
      if (std::getenv("PODNET_DEBUG")) {
        std::set<std::string> extra, missing;
        for (const auto& g : got) if (!want.contains(g)) extra.insert(g);
        for (const auto& w : want) if (!got.contains(w)) missing.insert(w);
        std::fprintf(stderr, "round: extra %s | missing %s\n", Describe(extra).c_str(), Describe(missing).c_str());
      }
      if (got == want) {
        return std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - start).count();
      }
    }
    ADD_FAILURE() << "reachable: " << Describe(got) << "\nwanted:    " << Describe(want);
    return -1;
  };
  ASSERT_GE(until(everyone, 10), 0) << "no policy: every pod reaches every other";

  // The seed's policy, as written, in x: only x's own pods reach x's.
  const std::string policy = R"({"apiVersion":"networking.k8s.io/v1","kind":"NetworkPolicy",
      "metadata":{"name":"deny-other-namespaces","namespace":"x"},
      "spec":{"podSelector":{},"policyTypes":["Ingress"],"ingress":[{"from":[{"podSelector":{}}]}]}})";
  auto r = Api("POST", "/apis/networking.k8s.io/v1/namespaces/x/networkpolicies", policy);
  ASSERT_TRUE(r && r->status == 201) << (r ? r->body : r.error().ToString());
  const auto applied_at = std::chrono::steady_clock::now();
  // How soon each node enforces it: one pair whose ingress it drops, tried
  // with a fresh connection every 20 ms (a probe gives up after 0.3 s) until
  // two in a row are dropped; the time of the first of them.
  const auto pod_of = [&](const std::string& key) {
    for (const auto& [k, p] : pods) {
      if (k == key) return p;
    }
    return json();
  };
  const std::vector<std::pair<std::string, std::string>> watched = {{"y/a", "x/a"}, {"y/b", "x/b"}};
  std::vector<int64_t> dropped_after_ms(watched.size(), -1);
  std::vector<std::thread> watchers;
  for (size_t i = 0; i < watched.size(); ++i) {
    watchers.emplace_back([&, i] {
      const json a = pod_of(watched[i].first), b = pod_of(watched[i].second);
      std::optional<std::chrono::steady_clock::time_point> first_drop;
      int drops = 0;
      while (drops < 2 && std::chrono::steady_clock::now() - applied_at < std::chrono::seconds(10)) {
        const auto tried = std::chrono::steady_clock::now();
        if (TcpSays(NetnsOf(a), b["status"].value("podIP", ""), 8080, /*get=*/false).empty()) {
          if (drops++ == 0) first_drop = tried;
        } else {
          drops = 0;
          std::this_thread::sleep_for(std::chrono::milliseconds(20));
        }
      }
      if (drops == 2) {
        dropped_after_ms[i] = std::chrono::duration_cast<std::chrono::milliseconds>(*first_drop - applied_at).count();
      }
    });
  }
  for (auto& t : watchers) t.join();
  for (size_t i = 0; i < watched.size(); ++i) {
    const json b = pod_of(watched[i].second);
    ASSERT_GE(dropped_after_ms[i], 0) << watched[i].first << "->" << watched[i].second << " never dropped";
    std::printf("netpol: %s drops %s->%s %lld ms after the policy was created\n", b["spec"].value("nodeName", "").c_str(),
                watched[i].first.c_str(), watched[i].second.c_str(), static_cast<long long>(dropped_after_ms[i]));
  }
  std::set<std::string> isolated;
  for (const std::string& pair : everyone) {
    const std::string from = pair.substr(0, pair.find("->")), to = pair.substr(pair.find("->") + 2);
    if (!to.starts_with("x/") || from.starts_with("x/")) isolated.insert(pair);
  }
  ASSERT_GE(until(isolated, 10), 0);
  // Deleting the policy opens x again.
  r = Api("DELETE", "/apis/networking.k8s.io/v1/namespaces/x/networkpolicies/deny-other-namespaces");
  ASSERT_TRUE(r && r->status / 100 == 2);
  EXPECT_GE(until(everyone, 10), 0);
}

TEST_F(PodNetworkE2ETest, AGangsMasterAddrIsItsRankZerosPodIp) {
  AddNode(1);
  AddNode(2);
  ASSERT_FALSE(HasFatalFailure());
  // Two ranks of one GPU each on two one-GPU nodes: rank 0 listens on
  // MASTER_PORT, rank 1 connects to MASTER_ADDR; each writes what it saw.
  json container{{"name", "main"},
                 {"command",
                  {"sh", "-c",
                   "if [ $RANK = 0 ]; then busybox nc -l -p $MASTER_PORT -e /bin/echo ok; else "
                   "until [ \"$(busybox nc -w 1 $MASTER_ADDR $MASTER_PORT)\" = ok ]; do sleep 0.2; done; fi; "
                   "echo rank $RANK master $MASTER_ADDR"}}};
  container["resources"]["requests"] = {{"nvidia.com/gpu", "1"}};
  json job{{"apiVersion", "batch/v1"}, {"kind", "Job"}, {"metadata", {{"name", "gang"}}}};
  job["spec"] = {{"parallelism", 2}, {"completions", 2}};
  job["spec"]["template"]["spec"] = {{"restartPolicy", "Never"}, {"terminationGracePeriodSeconds", 1},
                                     {"containers", json::array({container})}};
  auto r = Api("POST", "/apis/batch/v1/namespaces/default/jobs", job.dump());
  ASSERT_TRUE(r && r->status == 201) << (r ? r->body : r.error().ToString());
  std::map<std::string, json> pods;
  const bool done = WaitUntil(
      [&] {
        const json list = Get("/api/v1/namespaces/default/pods");
        pods.clear();
        int succeeded = 0;
        for (const json& p : list.value("items", json::array())) {
          pods[p["metadata"]["annotations"].value("tessera.dev/rank", "?")] = p;
          succeeded += p.value("status", json::object()).value("phase", "") == "Succeeded";
        }
        return succeeded == 2;
      },
      30);
  for (const auto& [rank, p] : pods) pod_uids_.push_back(p["metadata"].value("uid", ""));
  ASSERT_TRUE(done) << [&] {
    std::string s;
    for (const auto& [rank, p] : pods) s += rank + ": " + p["status"].dump() + "\n";
    return s;
  }();
  ASSERT_TRUE(pods.count("0") && pods.count("1"));
  EXPECT_NE(pods["0"]["spec"]["nodeName"], pods["1"]["spec"]["nodeName"]) << "one rank per node";
  const std::string master_ip = pods["0"]["status"].value("podIP", "");
  auto logs = Api("GET", "/api/v1/namespaces/default/pods/" + pods["1"]["metadata"].value("name", "") + "/log");
  ASSERT_TRUE(logs && logs->status == 200) << (logs ? logs->body : logs.error().ToString());
  EXPECT_NE(logs->body.find("rank 1 master " + master_ip), std::string::npos) << logs->body << " (rank 0: " << master_ip << ")";
}

TEST_F(PodNetworkE2ETest, AServiceBalancesOverItsReadyPodsAndDropsOneThatStops) {
  AddNode(1);
  AddNode(2);
  ASSERT_FALSE(HasFatalFailure());
  ServingPod("web-1", "n1", "default", "web");
  ServingPod("web-2", "n2", "default", "web");
  ServingPod("client", "n1");
  const json web1 = RunningPod("web-1"), web2 = RunningPod("web-2"), client = RunningPod("client");
  ASSERT_TRUE(web1.is_object() && web2.is_object() && client.is_object());
  auto r = Api("POST", "/api/v1/namespaces/default/services",
               json{{"apiVersion", "v1"},
                    {"kind", "Service"},
                    {"metadata", {{"name", "web"}}},
                    {"spec", {{"selector", {{"app", "web"}}}, {"ports", {{{"port", 80}, {"targetPort", 8080}}}}}}}
                   .dump());
  ASSERT_TRUE(r && r->status == 201) << (r ? r->body : r.error().ToString());
  const std::string vip = json::parse(r->body)["spec"].value("clusterIP", "");
  ASSERT_FALSE(vip.empty()) << r->body;
  // New connections to the cluster IP reach both pods, on both nodes.
  const auto answers = [&](int tries) {
    std::map<std::string, int> seen;
    for (int i = 0; i < tries; ++i) {
      const std::string said = TcpSays(NetnsOf(client), vip, 80);
      if (!said.empty()) ++seen[said];
    }
    return seen;
  };
  std::map<std::string, int> seen;
  ASSERT_TRUE(WaitUntil([&] { return (seen = answers(20)).size() == 2; }, 15))
      << "answers from " << json(seen).dump();
  EXPECT_TRUE(seen.count("web-1") && seen.count("web-2")) << json(seen).dump();
  // A pod reaching itself through its Service (hairpin) is answered too.
  std::map<std::string, int> self;
  for (int i = 0; i < 20; ++i) {
    const std::string said = TcpSays(NetnsOf(web1), vip, 80);
    ++self[said.empty() ? "(no answer)" : said];
  }
  EXPECT_TRUE(self.count("web-1") && !self.count("(no answer)")) << json(self).dump();
  // A pod that stops leaves the Service: every new connection goes to the other.
  r = Api("DELETE", "/api/v1/namespaces/default/pods/web-2");
  ASSERT_TRUE(r && r->status / 100 == 2);
  ASSERT_TRUE(WaitUntil([&] { return (seen = answers(10)) == std::map<std::string, int>{{"web-1", 10}}; }, 15))
      << "answers from " << json(seen).dump();
  // A pod started after the Service has its variables, as the kubelet gives them.
  json env_pod{{"apiVersion", "v1"},
               {"kind", "Pod"},
               {"metadata", {{"name", "env"}, {"namespace", "default"}}},
               {"spec",
                {{"nodeName", "n2"},
                 {"restartPolicy", "Never"},
                 {"containers",
                  json::array({{{"name", "main"},
                                {"command", {"sh", "-c", "echo $WEB_SERVICE_HOST $WEB_SERVICE_PORT $WEB_PORT"}}}})}}}};
  r = Api("POST", "/api/v1/namespaces/default/pods", env_pod.dump());
  ASSERT_TRUE(r && r->status == 201) << (r ? r->body : r.error().ToString());
  std::string logs;
  EXPECT_TRUE(WaitUntil(
      [&] {
        auto got = Api("GET", "/api/v1/namespaces/default/pods/env/log");
        logs = got && got->status == 200 ? got->body : "";
        return !logs.empty();
      },
      15));
  EXPECT_EQ(logs, vip + " 80 tcp://" + vip + ":80\n");
  const json env_done = Get("/api/v1/namespaces/default/pods/env");
  if (env_done.is_object()) pod_uids_.push_back(env_done["metadata"].value("uid", ""));
}

// Cyclonus' way across two real nodes: 3 namespaces x 3 pods, every ordered
// pair on TCP 8080, under a series of policies; each time the observed matrix
// must become the one the Kubernetes spec's semantics (net::Allowed, itself
// checked against upstream's truth tables in tests/net) give for what the
// API holds.
TEST_F(PodNetworkE2ETest, APolicyMatrixAcrossNodesMatchesTheSpecsTruthTable) {
  AddNode(1);
  AddNode(2);
  ASSERT_FALSE(HasFatalFailure());
  const auto pods = ThreeNamespaces({{"a", "n1"}, {"b", "n2"}, {"c", "n1"}});
  ASSERT_FALSE(HasFailure());
  // What the spec allows for what the API holds now.
  const auto truth = [&] {
    net::ClusterView view;
    for (const json& ns : Get("/api/v1/namespaces").value("items", json::array())) {
      if (auto info = net::NamespaceInfoFromJson(ns)) view.namespaces.push_back(*info);
    }
    for (const auto& [key, pod] : pods) {  // as the API has them now (labels change)
      const json now = Get("/api/v1/namespaces/" + key.substr(0, key.find('/')) + "/pods/" + key.substr(key.find('/') + 1));
      if (auto info = net::PodInfoFromJson(now)) view.pods.push_back(*info);
    }
    for (const json& p : Get("/apis/networking.k8s.io/v1/networkpolicies").value("items", json::array())) {
      EXPECT_TRUE(view.AddPolicyJson(p).ok()) << p.dump();
    }
    std::set<std::string> allowed;
    for (size_t i = 0; i < pods.size(); ++i) {
      for (size_t j = 0; j < pods.size(); ++j) {
        if (i != j && net::Allowed(view, net::Peer::Pod(view.pods[i]), view.pods[j], 8080, net::Protocol::kTCP)) {
          allowed.insert(pods[i].first + "->" + pods[j].first);
        }
      }
    }
    return allowed;
  };
  const auto matches = [&](const std::string& scenario) {
    const std::set<std::string> want = truth();
    const auto start = std::chrono::steady_clock::now();
    std::set<std::string> got;
    while (std::chrono::steady_clock::now() - start < std::chrono::seconds(15)) {
      if ((got = Reachable(pods)) == want) {
        std::printf("netpol matrix: %-40s %2zu of 72 pairs allowed, matched after %lld ms\n", scenario.c_str(),
                    want.size(),
                    static_cast<long long>(std::chrono::duration_cast<std::chrono::milliseconds>(
                                               std::chrono::steady_clock::now() - start)
                                               .count()));
        return true;
      }
    }
    std::set<std::string> extra, missing;
    for (const auto& g : got) if (!want.contains(g)) extra.insert(g);
    for (const auto& w : want) if (!got.contains(w)) missing.insert(w);
    ADD_FAILURE() << scenario << ": allowed but dropped: " << Describe(missing) << "\ndropped but reached: " << Describe(extra);
    return false;
  };
  const auto policy = [&](const std::string& ns, const std::string& name, json spec) {
    json object{{"apiVersion", "networking.k8s.io/v1"},
                {"kind", "NetworkPolicy"},
                {"metadata", {{"name", name}, {"namespace", ns}}},
                {"spec", std::move(spec)}};
    auto r = Api("POST", "/apis/networking.k8s.io/v1/namespaces/" + ns + "/networkpolicies", object.dump());
    EXPECT_TRUE(r && r->status == 201) << (r ? r->body : r.error().ToString());
  };
  const auto clear = [&] {
    for (const json& p : Get("/apis/networking.k8s.io/v1/networkpolicies").value("items", json::array())) {
      auto r = Api("DELETE", "/apis/networking.k8s.io/v1/namespaces/" + p["metadata"].value("namespace", "") +
                                 "/networkpolicies/" + p["metadata"].value("name", ""));
      EXPECT_TRUE(r && r->status / 100 == 2) << (r ? r->body : r.error().ToString());
    }
  };
  const json app_a = {{"matchLabels", {{"app", "a"}}}};
  EXPECT_TRUE(matches("no policy"));
  policy("x", "deny-all", {{"podSelector", json::object()}, {"policyTypes", {"Ingress"}}});
  EXPECT_TRUE(matches("x: deny all ingress"));
  policy("x", "from-y-to-a", {{"podSelector", app_a},
                              {"ingress", {{{"from", {{{"namespaceSelector", {{"matchLabels", {{"ns", "y"}}}}}}}},
                                            {"ports", {{{"port", 8080}}}}}}}});
  EXPECT_TRUE(matches("x: + from namespace y to app=a"));
  clear();
  policy("x", "y-b-only", {{"podSelector", json::object()},
                           {"ingress", {{{"from", {{{"namespaceSelector", {{"matchLabels", {{"ns", "y"}}}}},
                                                    {"podSelector", {{"matchLabels", {{"app", "b"}}}}}}}}}}}});
  EXPECT_TRUE(matches("x: from y AND app=b"));
  clear();
  policy("x", "y-or-b", {{"podSelector", json::object()},
                         {"ingress", {{{"from", {{{"namespaceSelector", {{"matchLabels", {{"ns", "y"}}}}}},
                                                 {{"podSelector", {{"matchLabels", {{"app", "b"}}}}}}}}}}}});
  EXPECT_TRUE(matches("x: from y OR app=b (of x)"));
  clear();
  const std::string xb_ip = pods[1].second["status"].value("podIP", "");
  policy("z", "egress-to-x-b", {{"podSelector", app_a},
                                {"policyTypes", {"Egress"}},
                                {"egress", {{{"to", {{{"ipBlock", {{"cidr", xb_ip + "/32"}}}}}}}}}});
  EXPECT_TRUE(matches("z/a: egress only to x/b's /32"));
  clear();
  policy("y", "named-port", {{"podSelector", json::object()},
                             {"ingress", {{{"from", {{{"namespaceSelector", {{"matchLabels", {{"ns", "z"}}}}}}}},
                                           {"ports", {{{"port", "http"}}}}}}}});
  EXPECT_TRUE(matches("y: from z on named port http"));
  policy("y", "other-port", {{"podSelector", json::object()},
                             {"ingress", {{{"ports", {{{"port", 9000}, {"endPort", 9100}}}}}}}});
  EXPECT_TRUE(matches("y: + anyone on 9000-9100 (not 8080)"));
  clear();
  // A namespace's and a pod's labels change: the rules follow them.
  policy("x", "from-y-to-a", {{"podSelector", app_a},
                              {"ingress", {{{"from", {{{"namespaceSelector", {{"matchLabels", {{"ns", "y"}}}}}}}}}}}});
  EXPECT_TRUE(matches("x: from namespace y to app=a"));
  const auto patch = [&](const std::string& path, const json& labels) {
    auto r = fab_->RunIn([&] {
      ApiClient client(server_.url, token_);
      return client.Request("PATCH", path, json{{"metadata", {{"labels", labels}}}}.dump(), "application/merge-patch+json");
    });
    EXPECT_TRUE(r && r->status == 200) << path << ": " << (r ? r->body : r.error().ToString());
  };
  patch("/api/v1/namespaces/z", {{"ns", "y"}});
  EXPECT_TRUE(matches("namespace z relabelled ns=y"));
  patch("/api/v1/namespaces/x/pods/c", {{"app", "a"}});
  EXPECT_TRUE(matches("pod x/c relabelled app=a"));
  clear();
  EXPECT_TRUE(matches("policies deleted"));
}

}  // namespace
}  // namespace tessera
