// List paging (`?limit=N&continue=TOKEN`), as the Kubernetes API pages lists.
//
// The store lists a whole kind at once (Store::List, in key order: namespace,
// then name); a page is cut from that list here. When matching objects remain
// after a page, the list carries metadata.continue, a token the client sends
// back for the next page. The token is opaque to clients (base64url of a small
// JSON document): the list it belongs to (kind, namespace), the last key it
// returned and the revision of the first page.
//
// Consistency. The store cannot read at an old revision, so each page is read
// when it is asked for: an object that exists throughout the paging appears
// exactly once, as of when its page was read; one created or deleted meanwhile
// may or may not appear. Every page reports the first page's revision as the
// list's resourceVersion, so that a watch from it misses no change made while
// paging (it may repeat some). A token is too old (Gone) once the events after
// its revision have left the event log, since that watch would then be
// impossible; the client lists again from the start.
//
// Thread-safety: pure functions.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "common/result.h"
#include "server/api/label_selector.h"
#include "store/store.h"

namespace tessera {

struct ContinueToken {
  int64_t revision = 0;   // the first page's list revision
  std::string kind;       // store kind of the list ("<group>/<Kind>")
  std::string ns;         // the list's namespace; "" for all namespaces or a cluster-scoped kind
  std::string last_ns;    // the key of the last object returned
  std::string last_name;

  friend bool operator==(const ContinueToken&, const ContinueToken&) = default;
};

std::string EncodeContinueToken(const ContinueToken& token);
// InvalidArgument when `text` is not a token EncodeContinueToken made.
Result<ContinueToken> DecodeContinueToken(std::string_view text);

// `?limit=`: "" or "0" is no limit; anything but a non-negative integer is
// InvalidArgument.
Result<size_t> ParseListLimit(std::string_view text);

struct ListPage {
  std::vector<nlohmann::json> items;
  std::optional<ContinueToken> next;  // set when matching objects remain after this page
  size_t remaining = 0;               // how many matching objects remain
};

// The page of `all` (the store's list of `kind` in `ns`, in key order) that
// follows `after` (from the start when nullopt): the objects matching
// `selector`, at most `limit` of them (0: all). `revision` goes into the next
// token: the first page's list revision.
ListPage CutListPage(std::vector<StoredObject> all, const LabelSelector& selector,
                     const std::optional<ContinueToken>& after, size_t limit, int64_t revision, std::string_view kind,
                     std::string_view ns);

}  // namespace tessera
