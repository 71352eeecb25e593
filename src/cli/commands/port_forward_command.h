// `tessera port-forward TARGET [LOCAL:]REMOTE...`, as kubectl's:
//
//   TARGET: pod/NAME (or NAME), svc/NAME (a running pod its selector picks,
//   REMOTE then being one of the Service's ports, turned into its target port).
//   [LOCAL:]REMOTE: listen on 127.0.0.1:LOCAL (LOCAL = REMOTE when omitted;
//   ":REMOTE" or "0:REMOTE" any free port), printing
//   "Forwarding from 127.0.0.1:LOCAL -> REMOTE".
//
// Each local connection opens a WebSocket to the server's pods/NAME/portforward
// (server/api/port_forward.h, subprotocol v4.channel.k8s.io) with the user's
// token, and relays bytes both ways ("Handling connection for REMOTE"); the
// server dials the pod. The pod is read first (404, 403 and a pod that does not
// run are errors before anything listens). Runs until interrupted (SIGINT,
// SIGTERM) or, in tests, until `stop` is set. To an https:// server over TLS,
// trusting it as every other command does (client/tls_client.h).
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "cli/commands/command_context.h"
#include "common/result.h"

namespace tessera {

struct PortForwardOptions {
  std::string target;
  std::vector<std::string> ports;  // [LOCAL:]REMOTE
  // Tests: called once every port listens, with the local ports in order.
  std::function<void(const std::vector<uint16_t>&)> on_listening;
  // Tests: the forward ends when this becomes true (checked every 50 ms);
  // null: until SIGINT or SIGTERM.
  const std::atomic<bool>* stop = nullptr;
};

struct PortPair {
  uint16_t local = 0;  // 0: any free port
  uint16_t remote = 0;
  std::string remote_name;  // a Service's port by name (svc/NAME only)
};

// "8888", "9999:8888", ":8888"; InvalidArgument naming the bad one.
Result<PortPair> ParsePortPair(const std::string& text);

int RunPortForward(const CommandContext& ctx, const PortForwardOptions& options);

}  // namespace tessera
