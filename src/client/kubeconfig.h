// A kubeconfig for kubectl from what the CLI uses (client_config.h): the
// server's https:// URL with its CA embedded (certificate-authority-data), the
// user's bearer token and the namespace, as one cluster, user and context, the
// current one. `tessera kubeconfig` prints it and `tessera up` writes the
// admin's; `kubectl --kubeconfig FILE get ...` then needs no other flag.
//
// kubectl (client-go) sends a bearer token only over TLS, so the server must be
// https://: a plain http:// one is refused, saying how to reach its TLS side.
//
// Thread-safety: reads the CA file; otherwise pure.
#pragma once

#include <string>

#include "client/client_config.h"
#include "common/result.h"

namespace tessera {

struct KubeconfigOptions {
  std::string name = "tessera";  // the cluster's, user's and context's name
  std::string ns;                // the context's namespace; empty: the config's, else "default"
};

// The kubeconfig's YAML text; InvalidArgument when the server is not https://,
// has no token, or its CA file cannot be read.
Result<std::string> KubeconfigYaml(const ClientConfig& config, const KubeconfigOptions& options);

}  // namespace tessera
