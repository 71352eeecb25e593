// An API server for one test: in-process, on 127.0.0.1 and a free port, its
// store under `data_dir`.
#pragma once

#include <gtest/gtest.h>

#include <memory>
#include <string>

#include "server/server.h"

namespace tessera::testing {

// nullptr, with a test failure saying why, when it cannot start. `options`
// gives the rest (a token-auth file, OIDC, an audit log); its data_dir and
// port are replaced.
inline std::unique_ptr<Server> StartLocalServer(const std::string& data_dir, ServerOptions options = {}) {
  options.data_dir = data_dir;
  options.http.port = 0;
  auto server = Server::Start(options);
  if (!server) {
    ADD_FAILURE() << "the server did not start: " << server.error().ToString();
    return nullptr;
  }
  return std::move(*server);
}

}  // namespace tessera::testing
