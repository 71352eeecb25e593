// Where the CLI finds the server and its token (DESIGN.md section 11): the
// --server/--token flags, then TESSERA_SERVER/TESSERA_TOKEN, then
// ~/.config/tessera/config.yaml (`server:` and `token:` keys), then the default
// http://127.0.0.1:7070 with no token.
#pragma once

#include <string>

#include "common/result.h"

namespace tessera {

struct ClientConfig {
  std::string server = "http://127.0.0.1:7070";
  std::string token;
  std::string source;  // where the token came from, for error messages
};

// Flags win over the environment, the environment over the file.
ClientConfig ResolveClientConfig(const std::string& flag_server, const std::string& flag_token);

// ~/.config/tessera/config.yaml (under $XDG_CONFIG_HOME when set).
std::string DefaultConfigPath();

// Writes the file (mode 0600) unless it exists; returns whether it wrote it.
Result<bool> WriteClientConfigIfMissing(const std::string& path, const std::string& server, const std::string& token);

}  // namespace tessera
