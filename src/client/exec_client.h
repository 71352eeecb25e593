// ExecClient: runs a command in a pod through the API server's pods/exec
// subresource, as kubectl exec does: a WebSocket (v5.channel.k8s.io, else
// v4.channel.k8s.io) on which each binary message's first byte is its stream
// (0 stdin, 1 stdout, 2 stderr, 3 the final metav1.Status, 255 close in v5).
//
// The command's exit code comes from the Status on channel 3: Success is 0;
// Failure with reason NonZeroExitCode carries it in details.causes (reason
// ExitCode); another Failure is an error with its message.
//
// Thread-safety: one call at a time; it runs its own I/O thread and, with
// stdin, a thread reading it.
#pragma once

#include <iosfwd>
#include <string>

#include "client/client_config.h"
#include "common/result.h"

namespace tessera {

struct ExecStreams {
  std::istream* in = nullptr;  // stdin, sent until its end (then closed, in v5); nullptr: none
  std::ostream* out = nullptr;
  std::ostream* err = nullptr;
};

// `target`: the exec path with its query
// ("/api/v1/namespaces/NS/pods/NAME/exec?command=sh&stdin=true&stdout=true&stderr=true").
// The command's exit code; an error when the server refused (its Status
// message) or the connection failed.
Result<int> ExecInPod(const ClientConfig& config, const std::string& target, const ExecStreams& streams);

}  // namespace tessera
