#include "cli/commands/open_command.h"

#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "cli/commands/exit_codes.h"
#include "cli/commands/notebook_command.h"
#include "cli/commands/server_errors.h"

extern char** environ;

namespace tessera {
namespace {

using nlohmann::json;

// xdg-open's path on the PATH, or "".
std::string FindXdgOpen() {
  const char* path = std::getenv("PATH");
  if (path == nullptr) return "";
  std::string_view dirs(path);
  while (!dirs.empty()) {
    const auto colon = dirs.find(':');
    const std::filesystem::path candidate = std::filesystem::path(dirs.substr(0, colon)) / "xdg-open";
    if (access(candidate.c_str(), X_OK) == 0) return candidate.string();
    if (colon == std::string_view::npos) break;
    dirs.remove_prefix(colon + 1);
  }
  return "";
}

bool HasDesktop() {
  for (const char* var : {"DISPLAY", "WAYLAND_DISPLAY"}) {
    const char* v = std::getenv(var);
    if (v != nullptr && *v != '\0') return true;
  }
  return false;
}

// Runs xdg-open URL, its output to /dev/null; true when it exited 0.
bool XdgOpen(const std::string& program, const std::string& url) {
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, STDOUT_FILENO, "/dev/null", O_WRONLY, 0);
  posix_spawn_file_actions_addopen(&actions, STDERR_FILENO, "/dev/null", O_WRONLY, 0);
  std::string arg0 = "xdg-open";
  std::string arg1 = url;
  char* argv[] = {arg0.data(), arg1.data(), nullptr};
  pid_t pid = 0;
  const int rc = posix_spawn(&pid, program.c_str(), &actions, nullptr, argv, environ);
  posix_spawn_file_actions_destroy(&actions);
  if (rc != 0) return false;
  int status = 0;
  if (waitpid(pid, &status, 0) != pid) return false;
  return WIFEXITED(status) && WEXITSTATUS(status) == 0;
}

}  // namespace

Result<std::string> RequestProxyLoginUrl(const CommandContext& ctx, ApiClient& client, const std::string& resource,
                                         const std::string& name_port) {
  const std::string path = fmt::format("/api/v1/namespaces/{}/{}/{}/proxylogin", ctx.ns, resource, name_port);
  auto r = client.Request("POST", path, "");
  if (!r) return Err(Status::Unavailable(LocalError(r.error())));
  if (r->status != 201) return Err(Status::Unavailable(ServerError(*r, ctx.config)));
  const json login = json::parse(r->body, nullptr, false);
  const std::string url =
      login.is_object() ? login.value("status", json::object()).value("url", std::string()) : std::string();
  if (url.empty()) return Err(Status::Internal("error: the server's ProxyLogin has no status.url"));
  std::string server = ctx.config.server;
  while (!server.empty() && server.back() == '/') server.pop_back();
  return server + url;
}

void ShowUrl(const CommandContext& ctx, const std::string& url, bool print_only) {
  *ctx.out << url << "\n";
  *ctx.err << "The link logs you in once, within 60 seconds; the browser keeps a cookie for that path.\n";
  if (print_only || !HasDesktop()) return;
  const std::string xdg = FindXdgOpen();
  if (xdg.empty()) return;
  if (!XdgOpen(xdg, url)) *ctx.err << "xdg-open could not open it: open the link yourself\n";
}

int RunOpen(const CommandContext& ctx, const OpenOptions& options) {
  const std::string& t = options.target;
  const auto slash = t.find('/');
  const std::string type = slash == std::string::npos ? "notebook" : t.substr(0, slash);
  const std::string name = slash == std::string::npos ? t : t.substr(slash + 1);
  if (name.empty()) {
    *ctx.err << fmt::format("error: \"{}\": name what to open: NAME (a notebook), svc/NAME[:PORT] or pod/NAME[:PORT]\n",
                            t);
    return kExitUsage;
  }
  if (type == "notebook" || type == "notebooks" || type == "nb") return RunNotebookOpen(ctx, name, options.print_only);
  std::string resource;
  if (type == "svc" || type == "service" || type == "services") resource = "services";
  if (type == "pod" || type == "pods" || type == "po") resource = "pods";
  if (resource.empty()) {
    *ctx.err << fmt::format("error: \"{}\": tessera open takes a notebook, svc/NAME[:PORT] or pod/NAME[:PORT]\n", t);
    return kExitUsage;
  }
  auto client = ctx.Client();
  auto url = RequestProxyLoginUrl(ctx, *client, resource, name);
  if (!url) {
    *ctx.err << url.error().message() << "\n";
    return kExitFailure;
  }
  ShowUrl(ctx, *url, options.print_only);
  return kExitOk;
}

}  // namespace tessera
