// WriteFileAtomically: replaces a file whole, so that a reader (or a crash)
// sees the old content or the new one, never part of either: the text goes to
// PATH.tmp, created afresh (never through a link planted there) with `mode`
// whatever the umask (and, when asked, given to an owner and synced to disk),
// which is then renamed over PATH. Secrets
// (tokens, keys, the CLI's config) are written this way with mode 0600, so
// that they are never readable by others, not even for a moment.
//
// Thread-safety: safe to call concurrently for different paths.
#pragma once

#include <sys/types.h>

#include <optional>
#include <string>
#include <string_view>
#include <utility>

#include "common/status.h"

namespace tessera {

struct AtomicWriteOptions {
  bool create_parent = false;  // create the parent directories first (mode 0700 for the last)
  bool sync = false;           // fsync the file before the rename
  std::optional<std::pair<uid_t, gid_t>> owner;  // chown it (when running as root)
};

// IoError saying which file and why on failure, when nothing was replaced.
Status WriteFileAtomically(const std::string& path, std::string_view text, mode_t mode,
                           const AtomicWriteOptions& options = {});

}  // namespace tessera
