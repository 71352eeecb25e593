// `tessera server` and `tessera up`: run the control plane in the foreground
// until SIGINT or SIGTERM.
#pragma once

#include <string>

#include "server/server.h"

namespace tessera {

struct ServeOptions {
  ServerOptions server;
  std::string listen = "127.0.0.1:7070";  // HOST:PORT
  std::string gpus = "8xH100-80GB";       // `up`: the simulated inventory when there is no driver
};

// Parses HOST:PORT into `options.server.http`; false with a message when malformed.
bool ParseListen(const std::string& listen, HttpServerOptions& http, std::string* error);

int RunServerCommand(ServeOptions options);
// The server plus the user's set-up: prints how to use the CLI and writes the
// CLI config when there is none.
int RunUpCommand(ServeOptions options);

}  // namespace tessera
