#include "cli/commands/logs_command.h"

#include <fmt/format.h>

#include <nlohmann/json.hpp>

#include <algorithm>

#include "cli/commands/exit_codes.h"
#include "cli/commands/server_errors.h"

namespace tessera {
namespace {

using nlohmann::json;

std::string LogPath(const std::string& ns, const std::string& pod, const LogsOptions& o, bool follow) {
  std::string path = fmt::format("/api/v1/namespaces/{}/pods/{}/log", ns, pod);
  std::string sep = "?";
  if (o.tail >= 0) {
    path += sep + "tailLines=" + std::to_string(o.tail);
    sep = "&";
  }
  if (follow) path += sep + "follow=true";
  return path;
}

// The pods of a workload (or of the workload of a job named NAME), by rank.
std::vector<std::string> PodsOf(ApiClient& client, const std::string& ns, const std::string& name) {
  std::vector<std::string> pods;
  for (const std::string& workload : {name, "job-" + name, "vcjob-" + name}) {
    auto r = client.Request("GET", fmt::format("/api/v1/namespaces/{}/pods?labelSelector=tessera.dev/workload%3D{}", ns, workload));
    if (!r || r->status != 200) continue;
    const json list = json::parse(r->body, nullptr, false);
    if (!list.is_object()) continue;
    for (const json& p : list.value("items", json::array())) pods.push_back(p["metadata"].value("name", ""));
    if (!pods.empty()) break;
  }
  std::sort(pods.begin(), pods.end());
  return pods;
}

}  // namespace

int RunLogs(const CommandContext& ctx, const LogsOptions& o) {
  std::unique_ptr<ApiClient> client = ctx.Client();
  std::string name = o.name;
  for (const char* prefix : {"pod/", "pods/", "po/"}) {
    if (name.rfind(prefix, 0) == 0) name = name.substr(std::string(prefix).size());
  }
  // A pod of that name? Else the pods of a workload or job of that name.
  auto pod = client->Request("GET", fmt::format("/api/v1/namespaces/{}/pods/{}", ctx.ns, name));
  if (!pod) {
    *ctx.err << LocalError(pod.error()) << "\n";
    return kExitFailure;
  }
  std::vector<std::string> pods;
  if (pod->status == 200) {
    pods.push_back(name);
  } else {
    pods = PodsOf(*client, ctx.ns, name);
    if (pods.empty()) {
      *ctx.err << fmt::format("error: no pod, workload or job named \"{}\" with pods in namespace {}\n", name, ctx.ns);
      return kExitFailure;
    }
  }
  if (o.follow) {
    if (pods.size() > 1) *ctx.err << fmt::format("following {} (the first of {} pods)\n", pods.front(), pods.size());
    Status s = client->Stream(LogPath(ctx.ns, pods.front(), o, true), [&](const std::string& line) {
      *ctx.out << line << "\n" << std::flush;
      return true;
    });
    if (!s.ok()) {
      *ctx.err << LocalError(s) << "\n";
      return kExitFailure;
    }
    return kExitOk;
  }
  int rc = kExitOk;
  for (const std::string& p : pods) {
    auto r = client->Request("GET", LogPath(ctx.ns, p, o, false));
    if (!r) {
      *ctx.err << LocalError(r.error()) << "\n";
      return kExitFailure;
    }
    if (pods.size() > 1) *ctx.out << fmt::format("==> {} <==\n", p);
    if (r->status != 200) {
      *ctx.err << ServerError(*r, ctx.config) << "\n";
      rc = kExitFailure;
      continue;
    }
    *ctx.out << r->body;
  }
  return rc;
}

}  // namespace tessera
