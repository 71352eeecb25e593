// `tessera apply -f FILE|DIR|- [-f ...]`: creates each object of the manifests,
// or updates it when it exists, like `kubectl apply`:
//
//   namespace/team-nlp created
//   clusterqueue.kueue.x-k8s.io/gpu-cluster-queue configured
//   priorityclass.scheduling.k8s.io/exploratory unchanged
//
// Per object: GET it; 404 -> POST (created); else, when its spec (every top-level
// field but apiVersion, kind, metadata and status), labels and annotations equal
// the manifest's -> unchanged; else PUT the manifest with the live
// resourceVersion (and the live status, which belongs to the server) ->
// configured. A 409 (someone wrote in between) is retried once from the GET.
//
// An object without metadata.namespace goes to -n; with -n given, a manifest
// naming another namespace is refused (as kubectl does). Failures are reported
// with the file and document position and the server's Status message, and the
// command goes on with the next object, exiting 1 at the end. An unreachable
// server or a refused token stops it at once (every object would fail alike).
#pragma once

#include <string>
#include <vector>

#include "cli/commands/command_context.h"

namespace tessera {

struct ApplyOptions {
  std::vector<std::string> files;  // -f, in order
  bool server_side = false;        // --server-side: the server merges (server-side apply)
  bool force_conflicts = false;    // --force-conflicts: take over fields other managers own
  std::string field_manager = "tessera";  // --field-manager
};

int RunApply(const CommandContext& ctx, const ApplyOptions& options);

}  // namespace tessera
