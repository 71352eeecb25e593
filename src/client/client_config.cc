#include "client/client_config.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <sys/stat.h>
#include <unistd.h>
#include <yaml-cpp/yaml.h>

#include <cstdlib>
#include <filesystem>

#include "common/time_format.h"

namespace tessera {

std::string DefaultConfigPath() {
  if (const char* xdg = std::getenv("XDG_CONFIG_HOME"); xdg && *xdg) return std::string(xdg) + "/tessera/config.yaml";
  const char* home = std::getenv("HOME");
  return std::string(home ? home : ".") + "/.config/tessera/config.yaml";
}

namespace {

// What config.yaml says; empty where it says nothing (or cannot be read).
struct ConfigFile {
  std::string server;
  std::string token;
  TlsClientOptions tls;
};

ConfigFile ReadConfigFile(const std::string& path) {
  ConfigFile file;
  try {
    if (!std::filesystem::exists(path)) return file;
    YAML::Node node = YAML::LoadFile(path);
    if (node["server"]) file.server = node["server"].as<std::string>();
    if (node["token"]) file.token = node["token"].as<std::string>();
    if (node["certificate-authority"]) {
      std::filesystem::path ca = node["certificate-authority"].as<std::string>();
      if (ca.is_relative()) ca = std::filesystem::path(path).parent_path() / ca;
      file.tls.certificate_authority = ca.string();
    }
    if (node["insecure-skip-tls-verify"]) {
      file.tls.insecure_skip_tls_verify = node["insecure-skip-tls-verify"].as<bool>();
    }
  } catch (const std::exception&) {
    // An unreadable config file is as good as none; flags and environment still work.
    return ConfigFile{};
  }
  return file;
}

}  // namespace

ClientConfig ResolveClientConfig(const ClientFlags& flags) {
  ClientConfig c;
  const std::string path = DefaultConfigPath();
  const ConfigFile file = ReadConfigFile(path);
  const char* env_server = std::getenv("TESSERA_SERVER");
  const char* env_token = std::getenv("TESSERA_TOKEN");
  if (!flags.server.empty()) {
    c.server = flags.server;
  } else if (env_server && *env_server) {
    c.server = env_server;
  } else if (!file.server.empty()) {
    c.server = file.server;
  }
  if (!file.server.empty() && c.server == file.server) c.tls = file.tls;
  // A TLS flag replaces the file's TLS settings whole: --insecure-skip-tls-verify
  // over a file's certificate-authority is what the user asked for, not a clash.
  if (!flags.certificate_authority.empty() || flags.insecure_skip_tls_verify) {
    c.tls = TlsClientOptions{.certificate_authority = flags.certificate_authority,
                             .insecure_skip_tls_verify = flags.insecure_skip_tls_verify};
  }
  if (!flags.token.empty()) {
    c.token = flags.token;
    c.source = "--token";
  } else if (env_token && *env_token) {
    c.token = env_token;
    c.source = "TESSERA_TOKEN";
  } else if (!file.token.empty()) {
    c.token = file.token;
    c.source = path;
  }
  c.request_timeout = flags.request_timeout;
  return c;
}

Result<bool> WriteClientConfigIfMissing(const std::string& path, const ClientConfig& config) {
  if (std::filesystem::exists(path)) return false;
  std::error_code ec;
  std::filesystem::create_directories(std::filesystem::path(path).parent_path(), ec);
  const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL, 0600);
  if (fd < 0) return Err(Status::IoError(fmt::format("cannot write {}: {}", path, std::strerror(errno))));
  std::string text = fmt::format("# Written by `tessera up`.\nserver: {}\ntoken: {}\n", config.server, config.token);
  if (!config.tls.certificate_authority.empty()) {
    text += fmt::format("certificate-authority: {}\n", config.tls.certificate_authority);
  }
  if (config.tls.insecure_skip_tls_verify) text += "insecure-skip-tls-verify: true\n";
  const bool ok = ::write(fd, text.data(), text.size()) == static_cast<ssize_t>(text.size());
  ::close(fd);
  if (!ok) return Err(Status::IoError(fmt::format("cannot write {}", path)));
  return true;
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
