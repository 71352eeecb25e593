// RenderedCreate: a document to create, rendered to its stored JSON text on
// the caller's thread, before its revision is known.
//
// A store has one writer thread, and every write waits for it: building the
// text (about 3 us for a Workload) and freeing the parsed tree (as much again:
// its nodes were allocated by the caller's thread) there made each create cost
// the writer a third more. So CreateAsync renders here, with a placeholder
// where metadata.resourceVersion goes, and the writer only puts the revision in.
//
// The placeholder is a string with a control character and 128 random bits
// drawn once per process; a document that holds it anywhere else (which no
// client can arrange without those bits) is kept as a tree and dumped again
// with its revision instead, so the text is always what dumping the object
// with metadata.resourceVersion set would give.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "common/result.h"
#include "store/store.h"

namespace tessera {

class RenderedCreate {
 public:
  // Sets metadata.uid (to `new_uid()` unless the document has one) and renders
  // `object`. Fails, with the store's messages, where Create would on the
  // document alone: not an object, metadata or uid of the wrong type, text
  // that is not UTF-8.
  static Result<RenderedCreate> Render(const ObjectKey& key, nlohmann::json object,
                                       const std::function<std::string()>& new_uid) {
    return Render(key, std::move(object), new_uid, ProcessPlaceholder());
  }
  // With a placeholder of the caller's (tests).
  static Result<RenderedCreate> Render(const ObjectKey& key, nlohmann::json object,
                                       const std::function<std::string()>& new_uid, const std::string& placeholder);
  // The placeholder drawn for this process.
  static const std::string& ProcessPlaceholder();

  const std::string& uid() const { return uid_; }
  // False when the placeholder was found elsewhere too, and the document is
  // kept as a tree to be dumped again.
  bool spliced() const { return !tree_.has_value(); }
  // The stored text with metadata.resourceVersion `revision`.
  std::string WithRevision(int64_t revision) const;

 private:
  std::string uid_;
  std::string text_;  // with the placeholder's text at placeholder_at_
  size_t placeholder_at_ = 0;
  size_t placeholder_size_ = 0;
  std::optional<nlohmann::json> tree_;  // only when the placeholder is not unique in text_
};

}  // namespace tessera
