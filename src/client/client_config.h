// Where the CLI finds the server, its token and how to trust its certificate
// (DESIGN.md section 11): the --server/--token flags, then
// TESSERA_SERVER/TESSERA_TOKEN, then ~/.config/tessera/config.yaml (`server:`
// and `token:` keys), then the default http://127.0.0.1:7070 with no token.
//
// TLS, with kubectl's (and kubeconfig's) names: --certificate-authority FILE and
// --insecure-skip-tls-verify, else the file's `certificate-authority:` and
// `insecure-skip-tls-verify:` keys. The file's TLS settings belong to the server
// it names: they apply only when that is the server used, and a TLS flag
// replaces them whole. A relative certificate-authority path in the file is
// relative to the file's directory.
//
// Thread-safety: reads the environment and the file; call from one thread.
#pragma once

#include <chrono>
#include <string>

#include "client/api_client.h"
#include "common/result.h"

namespace tessera {

struct ClientConfig {
  std::string server = "http://127.0.0.1:7070";
  std::string token;
  std::string source;  // where the token came from, for error messages
  TlsClientOptions tls;
  std::chrono::milliseconds request_timeout{0};  // --request-timeout; 0: none
};

// What the command line gave; empty (false) when not given.
struct ClientFlags {
  std::string server;
  std::string token;
  std::string certificate_authority;
  bool insecure_skip_tls_verify = false;
  std::chrono::milliseconds request_timeout{0};  // --request-timeout (ParseRequestTimeout); 0: none
};

// Flags win over the environment, the environment over the file.
ClientConfig ResolveClientConfig(const ClientFlags& flags);

// --request-timeout as kubectl takes it: a duration ("30s", "2m", "1h"), or a
// plain number of seconds; 0 for no timeout. InvalidArgument saying what to give.
Result<std::chrono::milliseconds> ParseRequestTimeout(const std::string& text);

// ~/.config/tessera/config.yaml (under $XDG_CONFIG_HOME when set).
std::string DefaultConfigPath();

// Writes `config` (server, token and the TLS settings that are set) to the file
// (mode 0600) unless it exists; returns whether it wrote it.
Result<bool> WriteClientConfigIfMissing(const std::string& path, const ClientConfig& config);

}  // namespace tessera
