#include "client/client_config.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <sys/stat.h>
#include <unistd.h>
#include <yaml-cpp/yaml.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "common/atomic_file.h"
#include "common/time_format.h"

namespace tessera {

namespace fs = std::filesystem;

std::string DefaultConfigPath() {
  if (const char* xdg = std::getenv("XDG_CONFIG_HOME"); xdg && *xdg) return std::string(xdg) + "/tessera/config.yaml";
  const char* home = std::getenv("HOME");
  return std::string(home ? home : ".") + "/.config/tessera/config.yaml";
}

const ClientContext* ConfigFile::Find(const std::string& name) const {
  for (const ClientContext& c : contexts) {
    if (c.name == name) return &c;
  }
  return nullptr;
}

namespace {

// A path in the file: "~/" is the home directory; a relative one is relative to the file's directory.
std::string PathIn(const std::string& file, const std::string& path) {
  if (path.empty()) return path;
  if (path.starts_with("~/")) {
    const char* home = std::getenv("HOME");
    return (fs::path(home ? home : ".") / path.substr(2)).string();
  }
  fs::path p(path);
  if (p.is_relative()) p = fs::path(file).parent_path() / p;
  return p.lexically_normal().string();
}

std::string Scalar(const YAML::Node& node, const char* key) {
  const YAML::Node v = node[key];
  return v && v.IsScalar() ? v.as<std::string>() : std::string();
}

ClientContext ContextFrom(const YAML::Node& node, const std::string& file) {
  ClientContext c;
  c.name = Scalar(node, "name");
  c.server = Scalar(node, "server");
  c.token = Scalar(node, "token");
  c.token_file = PathIn(file, Scalar(node, "token-file"));
  c.ns = Scalar(node, "namespace");
  c.tls.certificate_authority = PathIn(file, Scalar(node, "certificate-authority"));
  if (node["insecure-skip-tls-verify"]) c.tls.insecure_skip_tls_verify = node["insecure-skip-tls-verify"].as<bool>();
  return c;
}

Result<std::string> ReadTokenFile(const std::string& path) {
  std::ifstream in(path);
  if (!in) {
    return Err(Status::InvalidArgument(fmt::format("cannot read the token file {}: {}", path, std::strerror(errno))));
  }
  std::string token;
  std::getline(in, token);
  while (!token.empty() && (token.back() == '\r' || token.back() == ' ')) token.pop_back();
  if (token.empty()) return Err(Status::InvalidArgument(fmt::format("the token file {} is empty", path)));
  return token;
}

}  // namespace

Result<ConfigFile> ReadConfigFile(const std::string& path) {
  ConfigFile file;
  std::error_code ec;
  if (!fs::exists(path, ec)) return file;
  try {
    const YAML::Node root = YAML::LoadFile(path);
    if (!root || root.IsNull()) return file;
    if (!root.IsMap()) return Err(Status::InvalidArgument(fmt::format("{}: expected a mapping of settings", path)));
    if (const YAML::Node contexts = root["contexts"]) {
      if (!contexts.IsSequence()) return Err(Status::InvalidArgument(fmt::format("{}: contexts: expected a list", path)));
      for (size_t i = 0; i < contexts.size(); ++i) {
        ClientContext c = ContextFrom(contexts[i], path);
        if (c.name.empty()) return Err(Status::InvalidArgument(fmt::format("{}: contexts[{}].name: required", path, i)));
        file.contexts.push_back(std::move(c));
      }
      file.current_context = Scalar(root, "current-context");
    } else if (root["server"] || root["token"]) {
      // The older, single-context form.
      ClientContext c = ContextFrom(root, path);
      c.name = "default";
      file.contexts.push_back(std::move(c));
      file.current_context = "default";
    }
  } catch (const std::exception& e) {
    return Err(Status::InvalidArgument(fmt::format("{} cannot be read: {}", path, e.what())));
  }
  return file;
}

Status WriteConfigFile(const std::string& path, const ConfigFile& file) {
  YAML::Emitter out;
  out << YAML::BeginMap;
  if (!file.current_context.empty()) out << YAML::Key << "current-context" << YAML::Value << file.current_context;
  out << YAML::Key << "contexts" << YAML::Value << YAML::BeginSeq;
  for (const ClientContext& c : file.contexts) {
    out << YAML::BeginMap << YAML::Key << "name" << YAML::Value << c.name;
    auto put = [&](const char* key, const std::string& v) {
      if (!v.empty()) out << YAML::Key << key << YAML::Value << v;
    };
    put("server", c.server);
    put("token", c.token);
    put("token-file", c.token_file);
    put("namespace", c.ns);
    put("certificate-authority", c.tls.certificate_authority);
    if (c.tls.insecure_skip_tls_verify) out << YAML::Key << "insecure-skip-tls-verify" << YAML::Value << true;
    out << YAML::EndMap;
  }
  out << YAML::EndSeq << YAML::EndMap;
  const std::string text = std::string("# Tessera CLI contexts (tessera config --help).\n") + out.c_str() + "\n";
  return WriteFileAtomically(path, text, 0600, {.create_parent = true});
}

Result<bool> AddContextIfMissing(const std::string& path, const ClientContext& context) {
  ASSIGN_OR_RETURN(ConfigFile file, ReadConfigFile(path));
  if (file.Find(context.name) != nullptr) return false;
  file.contexts.push_back(context);
  if (file.current_context.empty()) file.current_context = context.name;
  RETURN_IF_ERROR(WriteConfigFile(path, file));
  return true;
}

Result<ClientConfig> ResolveClientConfig(const ClientFlags& flags) {
  ClientConfig c;
  const std::string path = DefaultConfigPath();
  ASSIGN_OR_RETURN(ConfigFile file, ReadConfigFile(path));
  const std::string context_name = !flags.context.empty() ? flags.context : file.current_context;
  const ClientContext* context = context_name.empty() ? nullptr : file.Find(context_name);
  if (!flags.context.empty() && context == nullptr) {
    return Err(Status::InvalidArgument(fmt::format("context \"{}\" is not in {} (tessera config get-contexts lists them)",
                                                   flags.context, path)));
  }
  const char* env_server = std::getenv("TESSERA_SERVER");
  const char* env_token = std::getenv("TESSERA_TOKEN");
  const char* env_token_file = std::getenv("TESSERA_TOKEN_FILE");
  if (!flags.server.empty()) {
    c.server = flags.server;
  } else if (env_server && *env_server) {
    c.server = env_server;
  } else if (context && !context->server.empty()) {
    c.server = context->server;
  }
  if (context && !context->server.empty() && c.server == context->server) c.tls = context->tls;
  // A TLS flag replaces the context's TLS settings whole: --insecure-skip-tls-verify
  // over a context's certificate-authority is what the user asked for, not a clash.
  if (!flags.certificate_authority.empty() || flags.insecure_skip_tls_verify) {
    c.tls = TlsClientOptions{.certificate_authority = flags.certificate_authority,
                             .insecure_skip_tls_verify = flags.insecure_skip_tls_verify};
  }
  if (!flags.token.empty()) {
    c.token = flags.token;
    c.source = "--token";
  } else if (!flags.token_file.empty()) {
    ASSIGN_OR_RETURN(c.token, ReadTokenFile(flags.token_file));
    c.source = flags.token_file;
  } else if (env_token && *env_token) {
    c.token = env_token;
    c.source = "TESSERA_TOKEN";
  } else if (env_token_file && *env_token_file) {
    ASSIGN_OR_RETURN(c.token, ReadTokenFile(env_token_file));
    c.source = env_token_file;
  } else if (context && !context->token.empty()) {
    c.token = context->token;
    c.source = fmt::format("{} (context {})", path, context->name);
  } else if (context && !context->token_file.empty()) {
    ASSIGN_OR_RETURN(c.token, ReadTokenFile(context->token_file));
    c.source = fmt::format("{} (context {})", context->token_file, context->name);
  }
  if (context) {
    c.ns = context->ns;
  } else if (const char* env_ns = std::getenv("TESSERA_NAMESPACE"); env_ns && *env_ns) {
    c.ns = env_ns;  // in a pod (which the agent gives its namespace), as in-cluster config
  }
  c.request_timeout = flags.request_timeout;
  return c;
}

Result<std::chrono::milliseconds> ParseRequestTimeout(const std::string& text) {
  if (text.empty()) return std::chrono::milliseconds::zero();
  Result<Duration> duration = ParseDuration(text);
  if (!duration) {
    return Err(Status::InvalidArgument(fmt::format(
        "'{}' is not a duration: give one such as 30s, 2m or 1h (0 waits as long as it takes)", text)));
  }
  return std::chrono::milliseconds(duration->ms);
}

}  // namespace tessera
