#include "client/client_config.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <sys/stat.h>
#include <unistd.h>
#include <yaml-cpp/yaml.h>

#include <cstdlib>
#include <filesystem>

namespace tessera {

std::string DefaultConfigPath() {
  if (const char* xdg = std::getenv("XDG_CONFIG_HOME"); xdg && *xdg) return std::string(xdg) + "/tessera/config.yaml";
  const char* home = std::getenv("HOME");
  return std::string(home ? home : ".") + "/.config/tessera/config.yaml";
}

ClientConfig ResolveClientConfig(const std::string& flag_server, const std::string& flag_token) {
  ClientConfig c;
  std::string file_server, file_token;
  const std::string path = DefaultConfigPath();
  try {
    if (std::filesystem::exists(path)) {
      YAML::Node node = YAML::LoadFile(path);
      if (node["server"]) file_server = node["server"].as<std::string>();
      if (node["token"]) file_token = node["token"].as<std::string>();
    }
  } catch (const std::exception&) {
    // An unreadable config file is as good as none; flags and environment still work.
  }
  const char* env_server = std::getenv("TESSERA_SERVER");
  const char* env_token = std::getenv("TESSERA_TOKEN");
  if (!flag_server.empty()) {
    c.server = flag_server;
  } else if (env_server && *env_server) {
    c.server = env_server;
  } else if (!file_server.empty()) {
    c.server = file_server;
  }
  if (!flag_token.empty()) {
    c.token = flag_token;
    c.source = "--token";
  } else if (env_token && *env_token) {
    c.token = env_token;
    c.source = "TESSERA_TOKEN";
  } else if (!file_token.empty()) {
    c.token = file_token;
    c.source = path;
  }
  return c;
}

Result<bool> WriteClientConfigIfMissing(const std::string& path, const std::string& server, const std::string& token) {
  if (std::filesystem::exists(path)) return false;
  std::error_code ec;
  std::filesystem::create_directories(std::filesystem::path(path).parent_path(), ec);
  const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL, 0600);
  if (fd < 0) return Err(Status::IoError(fmt::format("cannot write {}: {}", path, std::strerror(errno))));
  const std::string text = fmt::format("# Written by `tessera up`.\nserver: {}\ntoken: {}\n", server, token);
  const bool ok = ::write(fd, text.data(), text.size()) == static_cast<ssize_t>(text.size());
  ::close(fd);
  if (!ok) return Err(Status::IoError(fmt::format("cannot write {}", path)));
  return true;
}

}  // namespace tessera
