#include "cli/commands/notebook_command.h"

#include <fmt/format.h>

#include "api/kinds.h"
#include "api/validation.h"
#include "cli/commands/exit_codes.h"
#include "cli/commands/open_command.h"
#include "cli/commands/resource_paths.h"
#include "cli/commands/server_errors.h"
#include "cli/commands/submit_command.h"
#include "client/api_client.h"
#include "common/time_format.h"
#include "domain/quantity.h"

namespace tessera {

using nlohmann::json;

namespace {

const KindInfo& NotebookKind() { return *FindKindByApiVersion("tessera.dev/v1", "Notebook"); }

Status FlagError(const std::string& flag, const std::string& value, const Status& why) {
  return Status::InvalidArgument(fmt::format("{} \"{}\": {}", flag, value, why.message()));
}

// GET the notebook: the object, or the exit code after saying why.
Result<json> GetNotebook(const CommandContext& ctx, ApiClient& client, const std::string& name, int& rc) {
  auto r = client.Request("GET", ObjectPath(NotebookKind(), ctx.ns, name));
  if (!r) {
    *ctx.err << LocalError(r.error()) << "\n";
    rc = kExitFailure;
    return Err(r.error());
  }
  if (r->status != 200) {
    *ctx.err << ServerError(*r, ctx.config) << "\n";
    rc = kExitFailure;
    return Err(Status::NotFound(name));
  }
  return json::parse(r->body, nullptr, false);
}

// spec.suspend, and on resume the suspension it resumes (an idle one included).
int SetSuspend(const CommandContext& ctx, ApiClient& client, const json& nb, const std::string& name, bool suspend) {
  json patch{{"spec", {{"suspend", suspend}}}};
  const std::string suspended_at = nb.value("status", json::object()).value("suspendedAt", "");
  if (!suspend && !suspended_at.empty()) {
    patch["metadata"]["annotations"]["tessera.dev/resume-from"] = suspended_at;
  }
  auto r = client.Request("PATCH", ObjectPath(NotebookKind(), ctx.ns, name), patch.dump(), "application/merge-patch+json");
  if (!r) {
    *ctx.err << LocalError(r.error()) << "\n";
    return kExitFailure;
  }
  if (r->status / 100 != 2) {
    *ctx.err << ServerError(*r, ctx.config) << "\n";
    return kExitFailure;
  }
  return kExitOk;
}

std::string UrlPath(const CommandContext& ctx, const json& nb, const std::string& name) {
  std::string path = nb.value("status", json::object()).value("url", "");
  if (path.empty()) path = fmt::format("/api/v1/namespaces/{}/services/notebook-{}:http/proxy/", ctx.ns, name);
  return path;
}

}  // namespace

Result<json> BuildNotebook(const NotebookOptions& o, const std::string& ns) {
  if (Status s = ValidateName(NameRule::kDns1123Label, o.name); !s.ok()) {
    return Err(Status::InvalidArgument(fmt::format("NAME \"{}\": {}", o.name, s.message())));
  }
  json spec = json::object();
  if (!o.gpu.empty() && !o.gpu_memory.empty()) {
    return Err(Status::InvalidArgument("--gpu or --gpu-memory, not both"));
  }
  if (!o.gpu.empty()) {
    auto milli = ParseGpuMilli(o.gpu);
    if (!milli) return Err(FlagError("--gpu", o.gpu, milli.error()));
    if (*milli > 0) spec["gpu"] = FormatMilliDecimal(*milli);
  }
  if (!o.gpu_memory.empty()) {
    auto bytes = ParseUnits(o.gpu_memory);
    if (!bytes) return Err(FlagError("--gpu-memory", o.gpu_memory, bytes.error()));
    spec["gpuMemory"] = FormatBytes(*bytes);
  }
  if (!o.cpu.empty()) {
    auto cpu = ParseMilli(o.cpu);
    if (!cpu) return Err(FlagError("--cpu", o.cpu, cpu.error()));
    spec["cpu"] = FormatMilli(*cpu);
  }
  if (!o.memory.empty()) {
    auto memory = ParseUnits(o.memory);
    if (!memory) return Err(FlagError("--memory", o.memory, memory.error()));
    spec["memory"] = FormatBytes(*memory);
  }
  if (!o.home_size.empty()) {
    auto bytes = ParseUnits(o.home_size);
    if (!bytes) return Err(FlagError("--home-size", o.home_size, bytes.error()));
    spec["home"]["size"] = FormatBytes(*bytes);
    if (!o.home_path.empty()) spec["home"]["mountPath"] = o.home_path;
  } else if (!o.home_path.empty()) {
    return Err(Status::InvalidArgument("--home-path needs --home-size (the home volume's size, 10Gi say)"));
  }
  if (!o.idle_timeout.empty()) {
    if (o.idle_timeout != "0") {
      auto d = ParseDuration(o.idle_timeout);
      if (!d) return Err(FlagError("--idle-timeout", o.idle_timeout, d.error()));
    }
    spec["idle"]["timeout"] = o.idle_timeout;
  }
  if (!o.image.empty()) spec["image"] = o.image;
  if (!o.command.empty()) spec["command"] = o.command;
  if (!o.queue.empty()) spec["queueName"] = o.queue;
  if (!o.priority.empty()) spec["priorityClassName"] = o.priority;
  json nb{{"apiVersion", "tessera.dev/v1"}, {"kind", "Notebook"}, {"metadata", {{"name", o.name}, {"namespace", ns}}},
          {"spec", spec}};
  if (Status s = ValidateObject(*FindKindByApiVersion("tessera.dev/v1", "Notebook"), nb); !s.ok()) {
    return Err(Status::InvalidArgument(fmt::format("the notebook would be refused: {}", s.message())));
  }
  return nb;
}

int RunNotebookCreate(const CommandContext& ctx, const NotebookOptions& given) {
  NotebookOptions options = given;
  auto nb = BuildNotebook(options, ctx.ns);
  if (!nb) {
    *ctx.err << LocalError(nb.error()) << "\n";
    return kExitUsage;
  }
  auto client = ctx.Client();
  if (options.queue.empty()) {
    auto queue = DefaultQueueIn(*client, ctx.ns);
    if (!queue) {
      *ctx.err << LocalError(queue.error()) << "\n";
      return queue.error().code() == StatusCode::kInvalidArgument ? kExitUsage : kExitFailure;
    }
    options.queue = *queue;
    (*nb)["spec"]["queueName"] = *queue;
  }
  auto r = client->Request("POST", CollectionPath(NotebookKind(), ctx.ns), nb->dump());
  if (!r) {
    *ctx.err << LocalError(r.error()) << "\n";
    return kExitFailure;
  }
  if (r->status / 100 != 2) {
    *ctx.err << ServerError(*r, ctx.config) << "\n";
    return kExitFailure;
  }
  *ctx.out << fmt::format("{} created in queue {}\n", ObjectRef(NotebookKind(), options.name), options.queue);
  *ctx.out << fmt::format("  open it:  tessera notebook open {} -n {}\n", options.name, ctx.ns);
  return kExitOk;
}

int RunNotebookOpen(const CommandContext& ctx, const std::string& name, bool print_only) {
  auto client = ctx.Client();
  int rc = kExitOk;
  auto nb = GetNotebook(ctx, *client, name, rc);
  if (!nb) return rc;
  const std::string phase = nb->value("status", json::object()).value("phase", "Pending");
  const bool suspended = nb->value("spec", json::object()).value("suspend", false) || phase == "Suspended";
  if (suspended) {
    if (int s = SetSuspend(ctx, *client, *nb, name, false); s != kExitOk) return s;
    *ctx.out << fmt::format("{} was suspended: resuming (the page shows it starting, then the notebook)\n",
                            ObjectRef(NotebookKind(), name));
  } else if (phase != "Running") {
    const std::string message = nb->value("status", json::object()).value("message", "");
    *ctx.out << fmt::format("{} is {}{}\n", ObjectRef(NotebookKind(), name), phase,
                            message.empty() ? "" : ": " + message);
  }
  // The proxy path of its Service (status.url), logged in for a browser.
  const std::string path = UrlPath(ctx, *nb, name);
  const std::string prefix = fmt::format("/api/v1/namespaces/{}/services/", ctx.ns);
  const auto proxy = path.find("/proxy");
  if (!path.starts_with(prefix) || proxy == std::string::npos) {
    *ctx.err << fmt::format("error: notebook \"{}\" has an unexpected status.url {}\n", name, path);
    return kExitFailure;
  }
  auto url = RequestProxyLoginUrl(ctx, *client, "services", path.substr(prefix.size(), proxy - prefix.size()));
  if (!url) {
    *ctx.err << url.error().message() << "\n";
    return kExitFailure;
  }
  ShowUrl(ctx, *url, print_only);
  return kExitOk;
}

int RunNotebookSuspend(const CommandContext& ctx, const std::string& name, bool suspend) {
  auto client = ctx.Client();
  int rc = kExitOk;
  auto nb = GetNotebook(ctx, *client, name, rc);
  if (!nb) return rc;
  if (int s = SetSuspend(ctx, *client, *nb, name, suspend); s != kExitOk) return s;
  *ctx.out << fmt::format("{} {}\n", ObjectRef(NotebookKind(), name), suspend ? "suspended" : "resumed");
  return kExitOk;
}

}  // namespace tessera
