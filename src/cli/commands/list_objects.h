// ListObjects: a collection read the way kubectl reads it, in chunks: GET with
// ?limit=CHUNK, then again with ?continue=TOKEN while the list's
// metadata.continue says more remain, so that no response has to carry a huge
// list at once. Every page of one listing carries the first page's
// resourceVersion (docs/api.md), which is the one to watch from.
//
// Thread-safety: one call at a time per ApiClient.
#pragma once

#include <cstdint>
#include <expected>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "client/api_client.h"
#include "client/client_config.h"

namespace tessera {

// kubectl's --chunk-size default.
inline constexpr int64_t kDefaultChunkSize = 500;

struct ObjectList {
  std::vector<nlohmann::json> items;
  std::string resource_version;  // metadata.resourceVersion of the listing
};

// The objects of `collection_path` matching the label selector `selector` and
// the field selector `field_selector` (either may be empty), `chunk_size` per
// request (0: all in one). The error is the line to print, in kubectl's words
// (server_errors.h): no answer, or the server's refusal of any page.
std::expected<ObjectList, std::string> ListObjects(ApiClient& client, const ClientConfig& config,
                                                   const std::string& collection_path, const std::string& selector,
                                                   int64_t chunk_size = kDefaultChunkSize,
                                                   const std::string& field_selector = "");

}  // namespace tessera
