// notebook_resume: click to ready for a suspended notebook opened by its URL
// (issue 21: "under 10 s from click to Jupyter with a cached image").
//
// Starts a real Server and a real Agent in-process (fresh temporary data
// directory, port 0, simulated 2xA100-80GB inventory) and a command Notebook
// (python3's http.server on NOTEBOOK_PORT, standing in for Jupyter: a process
// pod, nothing to pull). Then --rounds times:
//   1. suspend it (spec.suspend true) and wait until it is Suspended and its
//      pod is gone;
//   2. "click": GET its proxy URL as a browser does (Accept: text/html). The
//      first answer is the starting page, and the server writes the resume;
//      the GET is repeated every --poll-ms (a browser reloads the page every
//      kStartingPageRefreshSeconds) until the notebook's own page comes back.
//
//   click to ready = the first proxied answer - the first GET
//
// The last line is the headline figure:
//   BENCH notebook_resume_ms <p50> ms
// with the p90 and the rounds before it. A browser adds up to one reload
// interval on top (server/api/notebook_wake.h).
//
// Usage: notebook_resume [--rounds N] [--poll-ms P]
#include <fmt/format.h>
#include <signal.h>
#include <stdlib.h>
#include <unistd.h>

#include <boost/asio.hpp>
#include <boost/beast.hpp>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include "agent/agent.h"
#include "client/api_client.h"
#include "server/server.h"

namespace {

using Clock = std::chrono::steady_clock;
using nlohmann::json;
namespace beast = boost::beast;
namespace http = beast::http;
namespace net = boost::asio;
using tcp = net::ip::tcp;

constexpr const char* kNotebook = "/apis/tessera.dev/v1/namespaces/default/notebooks/nb";
constexpr const char* kUrl = "/api/v1/namespaces/default/services/notebook-nb:http/proxy/";

double Percentile(std::vector<double> v, double q) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  return v[std::min(v.size() - 1, static_cast<size_t>(q * static_cast<double>(v.size() - 1) + 0.5))];
}

// A browser's GET: the status and the body ("" when the server could not be reached).
std::pair<int, std::string> Browse(uint16_t port, const std::string& token) {
  try {
    net::io_context ioc;
    tcp::socket socket(ioc);
    socket.connect(tcp::endpoint(net::ip::make_address("127.0.0.1"), port));
    http::request<http::string_body> req(http::verb::get, kUrl, 11);
    req.set(http::field::host, "127.0.0.1");
    req.set(http::field::authorization, "Bearer " + token);
    req.set(http::field::accept, "text/html,application/xhtml+xml");
    http::write(socket, req);
    beast::flat_buffer buffer;
    http::response<http::string_body> res;
    http::read(socket, buffer, res);
    return {static_cast<int>(res.result_int()), res.body()};
  } catch (const std::exception&) {
    return {0, ""};
  }
}

bool Starting(const std::pair<int, std::string>& r) {
  return r.first != 200 || r.second.find("Notebook nb is starting") != std::string::npos;
}

json Get(tessera::ApiClient& client, const std::string& path) {
  auto r = client.Request("GET", path);
  return r && r->status == 200 ? json::parse(r->body, nullptr, false) : json();
}

template <class F>
bool WaitUntil(F done, std::chrono::seconds limit) {
  const auto deadline = Clock::now() + limit;
  while (Clock::now() < deadline) {
    if (done()) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return false;
}

}  // namespace

int main(int argc, char** argv) {
  int rounds = 5;
  int poll_ms = 100;
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--rounds") == 0 && i + 1 < argc) rounds = std::max(1, std::atoi(argv[++i]));
    if (std::strcmp(argv[i], "--poll-ms") == 0 && i + 1 < argc) poll_ms = std::max(1, std::atoi(argv[++i]));
  }
  char tmpl[] = "/tmp/tessera-notebook-resume-XXXXXX";
  const char* made = mkdtemp(tmpl);
  if (made == nullptr) return 1;
  const std::string dir = made;
  tessera::ServerOptions so;
  so.data_dir = dir + "/server";
  so.http.port = 0;
  auto server = tessera::Server::Start(so);
  if (!server) {
    std::fprintf(stderr, "notebook_resume: %s\n", server.error().ToString().c_str());
    return 1;
  }
  tessera::AgentOptions ao;
  ao.server = (*server)->url();
  ao.token = (*server)->admin_token();
  ao.node_name = "bench-node";
  ao.data_dir = dir + "/agent";
  ao.checkpoint_root = dir + "/checkpoints";
  ao.gpus.simulated = "2xA100-80GB";
  ao.gpus.preference = tessera::GpuPreference::kSimulated;
  auto agent = tessera::Agent::Start(ao);
  if (!agent) {
    std::fprintf(stderr, "notebook_resume: %s\n", agent.error().ToString().c_str());
    return 1;
  }
  const std::string url = (*server)->url();
  const auto port = static_cast<uint16_t>(std::stoi(url.substr(url.rfind(':') + 1)));
  const std::string token = (*server)->admin_token();
  tessera::ApiClient client(url, token);

  const json nb{{"apiVersion", "tessera.dev/v1"},
                {"kind", "Notebook"},
                {"metadata", {{"name", "nb"}, {"namespace", "default"}}},
                {"spec",
                 {{"gpu", "0.25"},
                  {"cpu", "100m"},
                  {"memory", "256Mi"},
                  {"command",
                   {"sh", "-c", "cd / && exec python3 -m http.server \"$NOTEBOOK_PORT\" --bind 127.0.0.1"}}}}};
  auto created = client.Request("POST", "/apis/tessera.dev/v1/namespaces/default/notebooks", nb.dump());
  if (!created || created->status != 201) {
    std::fprintf(stderr, "notebook_resume: the notebook was refused: %s\n", created ? created->body.c_str() : "");
    return 1;
  }
  if (!WaitUntil([&] { return !Starting(Browse(port, token)); }, std::chrono::seconds(60))) {
    std::fprintf(stderr, "notebook_resume: the notebook never served\n");
    return 1;
  }

  std::vector<double> ms;
  for (int round = 0; round < rounds; ++round) {
    auto r = client.Request("PATCH", kNotebook, R"({"spec":{"suspend":true}})", "application/merge-patch+json");
    if (!r || r->status != 200) return 1;
    const bool suspended = WaitUntil(
        [&] {
          const json n = Get(client, kNotebook);
          const json pods = Get(client, "/api/v1/namespaces/default/pods?labelSelector=tessera.dev%2Fnotebook%3Dnb");
          return n.value("status", json::object()).value("phase", "") == "Suspended" && pods.is_object() &&
                 pods.value("items", json::array()).empty();
        },
        std::chrono::seconds(60));
    if (!suspended) {
      std::fprintf(stderr, "notebook_resume: round %d: never suspended\n", round);
      return 1;
    }
    const auto click = Clock::now();
    bool ready = false;
    while (Clock::now() - click < std::chrono::seconds(60)) {
      if (!Starting(Browse(port, token))) {
        ready = true;
        break;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(poll_ms));
    }
    if (!ready) {
      std::fprintf(stderr, "notebook_resume: round %d: never resumed\n", round);
      return 1;
    }
    ms.push_back(std::chrono::duration<double, std::milli>(Clock::now() - click).count());
    fmt::print("round {}: click to ready {:.0f} ms\n", round, ms.back());
  }
  agent->reset();
  // A stopped agent leaves its pods running: the stand-in goes with the bench.
  std::ifstream state_file(dir + "/agent/agent-state.json");
  const json state = json::parse(state_file, nullptr, false);
  if (state.is_object() && state.contains("pods") && state["pods"].is_object()) {
    for (const auto& [uid, p] : state["pods"].items()) {
      if (p.is_object() && p.value("pid", 0) > 0) ::kill(-p.value("pid", 0), SIGKILL);
    }
  }
  server->reset();
  std::filesystem::remove_all(dir);
  fmt::print("BENCH notebook_resume_p90_ms {:.0f} ms\n", Percentile(ms, 0.9));
  fmt::print("BENCH notebook_resume_ms {:.0f} ms\n", Percentile(ms, 0.5));
  return 0;
}
