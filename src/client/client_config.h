// Where the CLI finds the server, its token and how to trust its certificate
// (DESIGN.md section 11): the --server/--token/--token-file flags, then
// TESSERA_SERVER/TESSERA_TOKEN/TESSERA_TOKEN_FILE, then the config file's
// context, then the default http://127.0.0.1:7070 with no token. The
// namespace is the context's, else TESSERA_NAMESPACE (which, with
// TESSERA_SERVER and TESSERA_TOKEN_FILE, the agent gives every pod: inside a
// pod `tessera` calls the API as the pod's ServiceAccount, in its namespace).
//
// The config file (~/.config/tessera/config.yaml) holds several contexts, as
// a kubeconfig does, each a server with the credential and the namespace to
// use with it:
//
//   current-context: team-nlp
//   contexts:
//     - name: admin
//       server: https://127.0.0.1:7070
//       token-file: /root/tessera-data/admin.token     # or token: TOKEN
//       certificate-authority: server.crt               # relative to the file
//     - name: team-nlp
//       server: https://127.0.0.1:7070
//       token-file: ~/.config/tessera/alice.token
//       namespace: team-nlp
//
// `--context NAME` picks one for a command; `tessera config use-context NAME`
// changes current-context. A file of the older form (server:, token:,
// certificate-authority: and insecure-skip-tls-verify: at the top) is read as
// one context named "default".
//
// TLS, with kubectl's (and kubeconfig's) names: --certificate-authority FILE and
// --insecure-skip-tls-verify, else the context's `certificate-authority:` and
// `insecure-skip-tls-verify:`. A context's TLS settings belong to its server:
// they apply only when that is the server used, and a TLS flag replaces them
// whole.
//
// Thread-safety: reads the environment and the file; call from one thread.
#pragma once

#include <chrono>
#include <optional>
#include <string>
#include <vector>

#include "client/api_client.h"
#include "common/result.h"

namespace tessera {

struct ClientConfig {
  std::string server = "http://127.0.0.1:7070";
  std::string token;
  std::string source;  // where the token came from, for error messages
  std::string ns;      // the context's namespace; empty: none given
  TlsClientOptions tls;
  std::chrono::milliseconds request_timeout{0};  // --request-timeout; 0: none
};

// What the command line gave; empty (false) when not given.
struct ClientFlags {
  std::string server;
  std::string token;
  std::string token_file;
  std::string context;
  std::string certificate_authority;
  bool insecure_skip_tls_verify = false;
  std::chrono::milliseconds request_timeout{0};  // --request-timeout (ParseRequestTimeout); 0: none
};

// One context of the config file.
struct ClientContext {
  std::string name;
  std::string server;
  std::string token;
  std::string token_file;  // absolute once read
  std::string ns;
  TlsClientOptions tls;
};

struct ConfigFile {
  std::string current_context;
  std::vector<ClientContext> contexts;

  const ClientContext* Find(const std::string& name) const;
};

// Flags win over the environment, the environment over the file. A token file
// that cannot be read is an error (InvalidArgument naming it), as is a
// --context the file does not have.
Result<ClientConfig> ResolveClientConfig(const ClientFlags& flags);

// --request-timeout as kubectl takes it: a duration ("30s", "2m", "1h"), or a
// plain number of seconds; 0 for no timeout. InvalidArgument saying what to give.
Result<std::chrono::milliseconds> ParseRequestTimeout(const std::string& text);

// ~/.config/tessera/config.yaml (under $XDG_CONFIG_HOME when set).
std::string DefaultConfigPath();

// The file at `path` (empty when it does not exist); InvalidArgument when it is
// not a config file.
Result<ConfigFile> ReadConfigFile(const std::string& path);
// Writes the file (mode 0600), replacing it.
Status WriteConfigFile(const std::string& path, const ConfigFile& file);

// Adds `context` to the file at `path` (creating it) unless one of that name
// is there, and makes it current when the file had no current context; returns
// whether it added it. `tessera up` writes its admin context this way.
Result<bool> AddContextIfMissing(const std::string& path, const ClientContext& context);

}  // namespace tessera
