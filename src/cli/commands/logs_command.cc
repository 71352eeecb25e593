#include "cli/commands/logs_command.h"

#include <fmt/format.h>

#include <nlohmann/json.hpp>

#include <set>
#include <string>
#include <vector>

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
  if (o.previous) {
    path += sep + "previous=true";
    sep = "&";
  }
  if (follow) path += sep + "follow=true";
  return path;
}

// The pods of a workload (or of the workload of a job named NAME), by rank:
// the ones that exist, and the ones its status.podHistory remembers (a
// finished or preempted job's pods that are gone).
std::vector<std::string> PodsOf(ApiClient& client, const std::string& ns, const std::string& name) {
  std::set<std::string> pods;
  for (const std::string& workload : {name, "job-" + name, "vcjob-" + name, "trainingjob-" + name}) {
    auto r = client.Request("GET", fmt::format("/api/v1/namespaces/{}/pods?labelSelector=tessera.dev/workload%3D{}", ns, workload));
    if (r && r->status == 200) {
      const json list = json::parse(r->body, nullptr, false);
      if (list.is_object()) {
        for (const json& p : list.value("items", json::array())) {
          if (p.is_object() && p.value("metadata", json::object()).is_object()) {
            pods.insert(p["metadata"].value("name", ""));
          }
        }
      }
    }
    auto w = client.Request("GET", fmt::format("/apis/kueue.x-k8s.io/v1beta1/namespaces/{}/workloads/{}", ns, workload));
    if (w && w->status == 200) {
      const json obj = json::parse(w->body, nullptr, false);
      const json status = obj.is_object() ? obj.value("status", json::object()) : json::object();
      const json history = status.is_object() ? status.value("podHistory", json::array()) : json::array();
      for (const json& record : history.is_array() ? history : json::array()) {
        if (record.is_object()) pods.insert(record.value("name", ""));
      }
    }
    pods.erase("");
    if (!pods.empty()) break;
  }
  return {pods.begin(), pods.end()};
}

}  // namespace

int RunLogs(const CommandContext& ctx, const LogsOptions& o) {
  std::unique_ptr<ApiClient> client = ctx.Client();
  std::string name = o.name;
  bool pod_only = false;
  bool workload_only = false;
  for (const char* prefix : {"pod/", "pods/", "po/"}) {
    if (name.starts_with(prefix)) {
      name = name.substr(std::string(prefix).size());
      pod_only = true;
    }
  }
  for (const char* prefix : {"job/", "jobs/", "job.batch/", "workload/", "workloads/", "wl/", "trainingjob/", "tj/"}) {
    if (name.starts_with(prefix)) {
      name = name.substr(std::string(prefix).size());
      workload_only = true;
    }
  }
  // A pod of that name? Else the pods of a workload or job of that name. A
  // pod that is gone may still have logs (the server remembers the instances
  // of a workload's pods): then the log request itself says.
  std::vector<std::string> pods;
  if (!workload_only) {
    auto pod = client->Request("GET", fmt::format("/api/v1/namespaces/{}/pods/{}", ctx.ns, name));
    if (!pod) {
      *ctx.err << LocalError(pod.error()) << "\n";
      return kExitFailure;
    }
    if (pod->status == 200 || pod_only) pods.push_back(name);
  }
  if (pods.empty()) pods = PodsOf(*client, ctx.ns, name);
  const bool guessed = pods.empty() && !workload_only;
  if (guessed) pods.push_back(name);  // a deleted pod's logs, or nothing of that name
  if (pods.empty()) {
    *ctx.err << fmt::format("error: no workload or job named \"{}\" with pods in namespace {}\n", name, ctx.ns);
    return kExitFailure;
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
    const json answer = r->status == 404 ? json::parse(r->body, nullptr, false) : json();
    if (guessed && answer.is_object() && answer.value("message", "") == fmt::format("pods \"{}\" not found", name)) {
      *ctx.err << fmt::format("error: no pod, workload or job named \"{}\" with pods in namespace {}\n", name, ctx.ns);
      return kExitFailure;
    }
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
