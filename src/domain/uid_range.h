// UidRange: the block of user and group ids a namespace's pods run as, as
// OpenShift allocates them (its annotation openshift.io/sa.scc.uid-range has the
// same "FIRST/SIZE" form). The server gives each Namespace a block of its own
// (annotation tessera.dev/uid-range, e.g. "1000010000/10000"); a pod runs as
// the block's first id unless it asks for another id of the block. Pods of two
// namespaces thus never share a uid, so file permissions and /proc keep one
// team's processes and files from another's.
//
// Thread-safety: a value type.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "common/result.h"

namespace tessera {

inline constexpr std::string_view kUidRangeAnnotation = "tessera.dev/uid-range";
// Blocks start here (above the ids of a host's own users) and are this large.
inline constexpr uint32_t kFirstNamespaceUid = 1'000'000'000;
inline constexpr uint32_t kNamespaceUidBlock = 10'000;

struct UidRange {
  uint32_t first = 0;
  uint32_t size = 0;

  bool Contains(int64_t id) const { return id >= first && id < int64_t{first} + size; }
  uint32_t last() const { return first + size - 1; }
  std::string ToString() const;  // "1000010000/10000"
  friend bool operator==(const UidRange&, const UidRange&) = default;
};

// "FIRST/SIZE": InvalidArgument naming the text unless both are numbers, SIZE
// is at least 1 and the range ends below 2^32 - 1 (the "no id" value).
Result<UidRange> ParseUidRange(std::string_view text);

}  // namespace tessera
