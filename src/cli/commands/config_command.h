// `tessera config`: the contexts of the CLI's config file (client_config.h), as
// kubectl config manages a kubeconfig's:
//   tessera config get-contexts            CURRENT, NAME, SERVER, NAMESPACE
//   tessera config current-context
//   tessera config use-context NAME
//   tessera config set-context NAME [--server URL] [--token-file FILE | --token T] [--namespace NS]
//                                   [--certificate-authority FILE] [--insecure-skip-tls-verify]
//   tessera config set-context --current --namespace NS
//   tessera config delete-context NAME
//   tessera config view                    the file, tokens REDACTED
// They read and write the file only; nothing is sent to a server.
#pragma once

#include <ostream>
#include <string>

#include "cli/commands/command_context.h"

namespace tessera {

struct SetContextOptions {
  std::string name;
  bool current = false;  // --current: the current context
  std::string server;
  std::string token;
  std::string token_file;
  std::string ns;
  std::string certificate_authority;
  bool insecure_skip_tls_verify = false;
};

int RunGetContexts(const std::string& path, std::ostream& out, std::ostream& err);
int RunCurrentContext(const std::string& path, std::ostream& out, std::ostream& err);
int RunUseContext(const std::string& path, const std::string& name, std::ostream& out, std::ostream& err);
int RunSetContext(const std::string& path, const SetContextOptions& options, std::ostream& out, std::ostream& err);
int RunDeleteContext(const std::string& path, const std::string& name, std::ostream& out, std::ostream& err);
int RunViewConfig(const std::string& path, std::ostream& out, std::ostream& err);

// `tessera kubeconfig`: a kubeconfig for kubectl from the resolved context
// (client/kubeconfig.h), printed or written (0600) to `output`; the namespace
// is -n's when given, else the context's.
struct KubeconfigCommandOptions {
  std::string output;
  std::string name = "tessera";
};
int RunKubeconfig(const CommandContext& ctx, const KubeconfigCommandOptions& options);

}  // namespace tessera
