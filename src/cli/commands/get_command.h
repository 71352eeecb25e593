// `tessera get KIND [NAME...] [-n NS|-A] [-o wide|yaml|json|name] [-l SELECTOR] [-w]`
// (or `get KIND/NAME...`), like kubectl get:
//   - a table per kind (columns.h); "No resources found in NS namespace." on
//     stderr when a list is empty;
//   - -o yaml / -o json: the object when one was named, else a `kind: List`;
//     -o name: kind.group/name per line;
//   - -w: after the current objects, a row (or object) per change, from a watch
//     that starts at the list's resourceVersion, until the server ends it;
//   - lists are read in chunks of --chunk-size objects (list_objects.h);
//   - a workload's PRIORITY without a class is the default class's (columns.h).
// A named object that does not exist is reported ("Error from server
// (NotFound): ...") and the others are still printed; the exit code is then 1.
#pragma once

#include <string>
#include <vector>

#include "cli/commands/command_context.h"
#include "cli/commands/list_objects.h"

namespace tessera {

struct GetOptions {
  std::vector<std::string> args;  // KIND [NAME...] or TYPE/NAME...
  std::string output;             // "", "wide", "yaml", "json", "name"
  std::string selector;           // -l
  std::string field_selector;     // --field-selector
  bool watch = false;             // -w
  bool all_namespaces = false;    // -A
  bool show_labels = false;       // --show-labels
  int64_t chunk_size = kDefaultChunkSize;  // --chunk-size: objects per list request; 0: all in one
  int max_watch_events_for_test = 0;  // stop watching after this many events (0: never)
};

int RunGet(const CommandContext& ctx, const GetOptions& options);

}  // namespace tessera
