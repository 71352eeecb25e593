#include "cli/commands/config_command.h"

#include <fmt/format.h>

#include <filesystem>

#include "cli/commands/exit_codes.h"
#include "cli/commands/table_printer.h"
#include "client/client_config.h"
#include "client/kubeconfig.h"
#include "common/atomic_file.h"

namespace tessera {
namespace {

// The file, or nullopt after printing why it cannot be read.
std::optional<ConfigFile> Read(const std::string& path, std::ostream& err) {
  auto file = ReadConfigFile(path);
  if (!file) {
    err << "error: " << file.error().message() << "\n";
    return std::nullopt;
  }
  return std::move(*file);
}

int Written(const std::string& path, const ConfigFile& file, const std::string& message, std::ostream& out,
            std::ostream& err) {
  if (Status s = WriteConfigFile(path, file); !s.ok()) {
    err << "error: " << s.message() << "\n";
    return kExitFailure;
  }
  out << message << "\n";
  return kExitOk;
}

}  // namespace

int RunGetContexts(const std::string& path, std::ostream& out, std::ostream& err) {
  auto file = Read(path, err);
  if (!file) return kExitFailure;
  Table table({"CURRENT", "NAME", "SERVER", "NAMESPACE"});
  for (const ClientContext& c : file->contexts) {
    table.AddRow({c.name == file->current_context ? "*" : "", c.name, c.server, c.ns});
  }
  table.Print(out);
  return kExitOk;
}

int RunCurrentContext(const std::string& path, std::ostream& out, std::ostream& err) {
  auto file = Read(path, err);
  if (!file) return kExitFailure;
  if (file->current_context.empty()) {
    err << "error: current-context is not set\n";
    return kExitFailure;
  }
  out << file->current_context << "\n";
  return kExitOk;
}

int RunUseContext(const std::string& path, const std::string& name, std::ostream& out, std::ostream& err) {
  auto file = Read(path, err);
  if (!file) return kExitFailure;
  if (file->Find(name) == nullptr) {
    err << fmt::format("error: no context exists with the name: \"{}\"\n", name);
    return kExitFailure;
  }
  file->current_context = name;
  return Written(path, *file, fmt::format("Switched to context \"{}\".", name), out, err);
}

int RunSetContext(const std::string& path, const SetContextOptions& o, std::ostream& out, std::ostream& err) {
  auto file = Read(path, err);
  if (!file) return kExitFailure;
  std::string name = o.name;
  if (o.current) {
    if (!name.empty()) {
      err << "error: you cannot specify both a context name and --current\n";
      return kExitUsage;
    }
    name = file->current_context;
    if (name.empty()) {
      err << "error: no current context is set\n";
      return kExitFailure;
    }
  }
  if (name.empty()) {
    err << "error: give the context's name, or --current\n";
    return kExitUsage;
  }
  if (!o.token.empty() && !o.token_file.empty()) {
    err << "error: give --token or --token-file, not both\n";
    return kExitUsage;
  }
  ClientContext* context = nullptr;
  for (ClientContext& c : file->contexts) {
    if (c.name == name) context = &c;
  }
  const bool created = context == nullptr;
  if (created) context = &file->contexts.emplace_back(ClientContext{.name = name});
  auto absolute = [](const std::string& p) {
    return p.empty() ? p : std::filesystem::absolute(p).lexically_normal().string();
  };
  if (!o.server.empty()) context->server = o.server;
  if (!o.token.empty()) {
    context->token = o.token;
    context->token_file.clear();
  }
  if (!o.token_file.empty()) {
    context->token_file = absolute(o.token_file);
    context->token.clear();
  }
  if (!o.ns.empty()) context->ns = o.ns;
  if (!o.certificate_authority.empty()) context->tls.certificate_authority = absolute(o.certificate_authority);
  if (o.insecure_skip_tls_verify) context->tls.insecure_skip_tls_verify = true;
  if (file->current_context.empty()) file->current_context = name;
  return Written(path, *file, fmt::format("Context \"{}\" {}.", name, created ? "created" : "modified"), out, err);
}

int RunDeleteContext(const std::string& path, const std::string& name, std::ostream& out, std::ostream& err) {
  auto file = Read(path, err);
  if (!file) return kExitFailure;
  const size_t before = file->contexts.size();
  std::erase_if(file->contexts, [&](const ClientContext& c) { return c.name == name; });
  if (file->contexts.size() == before) {
    err << fmt::format("error: cannot delete context {}, not in {}\n", name, path);
    return kExitFailure;
  }
  if (file->current_context == name) {
    err << fmt::format("warning: this removed your active context, use \"tessera config use-context\" to select a "
                       "different one\n");
    file->current_context.clear();
  }
  return Written(path, *file, fmt::format("deleted context {} from {}", name, path), out, err);
}

int RunViewConfig(const std::string& path, std::ostream& out, std::ostream& err) {
  auto file = Read(path, err);
  if (!file) return kExitFailure;
  out << (file->current_context.empty() ? std::string("current-context: \"\"\n")
                                         : fmt::format("current-context: {}\n", file->current_context))
      << "contexts:\n";
  for (const ClientContext& c : file->contexts) {
    out << fmt::format("- name: {}\n", c.name);
    if (!c.server.empty()) out << fmt::format("  server: {}\n", c.server);
    if (!c.token.empty()) out << "  token: REDACTED\n";
    if (!c.token_file.empty()) out << fmt::format("  token-file: {}\n", c.token_file);
    if (!c.ns.empty()) out << fmt::format("  namespace: {}\n", c.ns);
    if (!c.tls.certificate_authority.empty()) {
      out << fmt::format("  certificate-authority: {}\n", c.tls.certificate_authority);
    }
    if (c.tls.insecure_skip_tls_verify) out << "  insecure-skip-tls-verify: true\n";
  }
  return kExitOk;
}

int RunKubeconfig(const CommandContext& ctx, const KubeconfigCommandOptions& options) {
  auto text = KubeconfigYaml(ctx.config, {.name = options.name, .ns = ctx.ns});
  if (!text) {
    *ctx.err << "error: " << text.error().message() << "\n";
    return kExitFailure;
  }
  if (options.output.empty()) {
    *ctx.out << *text;
    return kExitOk;
  }
  if (Status s = WriteFileAtomically(options.output, *text, 0600, {.create_parent = true}); !s.ok()) {
    *ctx.err << "error: " << s.message() << "\n";
    return kExitFailure;
  }
  *ctx.out << fmt::format("wrote {}: use it with KUBECONFIG={} kubectl get ...\n", options.output, options.output);
  return kExitOk;
}

}  // namespace tessera
