// CommandContext: what every client command gets from the command line and the
// process: where the server is and the token (ClientConfig), the namespace, the
// streams to write to and read from, and the clock for AGE columns.
//
// Commands are plain functions `int RunX(const CommandContext&, const XOptions&)`
// returning an exit code (exit_codes.h), so that tests run them in-process
// against a real server and read what they print.
//
// Thread-safety: a value passed by const reference; the streams are not
// synchronised, so one command at a time per context.
#pragma once

#include <cstdint>
#include <iostream>
#include <memory>
#include <string>

#include "client/api_client.h"
#include "client/client_config.h"

namespace tessera {

struct CommandContext {
  ClientConfig config;
  std::string ns = "default";       // -n/--namespace
  bool ns_explicit = false;         // -n was given (apply refuses a manifest naming another namespace)
  std::ostream* out = &std::cout;   // results
  std::ostream* err = &std::cerr;   // errors, warnings, "No resources found"
  std::istream* in = &std::cin;     // `-f -`
  int64_t now_unix = 0;             // the time AGE is measured from; 0: the system clock

  int64_t Now() const;
  std::unique_ptr<ApiClient> Client() const;
};

}  // namespace tessera
