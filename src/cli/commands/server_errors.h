// Error messages for the terminal, in kubectl's words:
//   a refused request   Error from server (NotFound): namespaces "team-x" not found
//   with context        Error from server (Invalid): error when creating "cq.yaml" document 1 (line 1): spec...
//   no answer at all    error: cannot reach the Tessera server at 127.0.0.1:7070: Connection refused (...)
// The reason and message come from the Kubernetes Status object the server
// answers with; a body that is not one is shown as "HTTP <code>: <body>".
//
// Thread-safety: pure functions.
#pragma once

#include <string>
#include <string_view>

#include "client/api_client.h"
#include "client/client_config.h"
#include "common/status.h"

namespace tessera {

// The Status object's reason ("NotFound"), or "" when the body is not a Status.
std::string StatusReason(const ApiResponse& response);
// The Status object's message, or the body's text.
std::string StatusMessage(const ApiResponse& response);

// "Error from server (Reason): [context: ]message". For 401 it adds where the
// token came from, since that is what the user has to fix.
std::string ServerError(const ApiResponse& response, const ClientConfig& config, std::string_view context = "");

// "error: <message>" for a request that got no answer, or a local failure.
std::string LocalError(const Status& status);

}  // namespace tessera
