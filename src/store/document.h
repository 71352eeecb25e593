// The parts of a stored document every store treats alike: the key named in
// messages, the metadata object, metadata.uid and the compact JSON text.
#pragma once

#include <functional>
#include <string>

#include <nlohmann/json.hpp>

#include "common/result.h"
#include "store/store.h"

namespace tessera {

// "Pod team-a/nb1", "kueue.x-k8s.io/ClusterQueue team-a": for messages.
std::string DescribeKey(const ObjectKey& key);
Status ValidateKey(const ObjectKey& key);
// The document's metadata object, created when absent.
Result<nlohmann::json*> MetadataOf(nlohmann::json& object, const ObjectKey& key);
// metadata.uid as it is to be stored: the document's own, or `new_uid()` when
// it has none; set in `metadata`.
Result<std::string> AssignUid(nlohmann::json& metadata, const ObjectKey& key,
                              const std::function<std::string()>& new_uid);
// Compact text, as stored. Throws nothing: nlohmann's dump throws on strings
// that are not UTF-8, which is the caller's error.
Result<std::string> DumpDocument(const nlohmann::json& object, const ObjectKey& key);

}  // namespace tessera
