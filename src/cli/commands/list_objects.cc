#include "cli/commands/list_objects.h"

#include "api/object_fields.h"
#include "cli/commands/resource_paths.h"
#include "cli/commands/server_errors.h"

namespace tessera {

std::expected<ObjectList, std::string> ListObjects(ApiClient& client, const ClientConfig& config,
                                                   const std::string& collection_path, const std::string& selector,
                                                   int64_t chunk_size, const std::string& field_selector) {
  ObjectList list;
  std::string next;  // metadata.continue of the page before
  do {
    const std::string target =
        WithQuery(collection_path, {{"labelSelector", selector},
                                    {"fieldSelector", field_selector},
                                    {"limit", chunk_size > 0 ? std::to_string(chunk_size) : ""},
                                    {"continue", next}});
    auto r = client.Request("GET", target);
    if (!r) return std::unexpected(LocalError(r.error()));
    if (r->status != 200) return std::unexpected(ServerError(*r, config));
    nlohmann::json page = nlohmann::json::parse(r->body, nullptr, /*allow_exceptions=*/false);
    if (list.resource_version.empty()) list.resource_version = TextAt(page, "metadata.resourceVersion");
    if (page.is_object() && page.contains("items") && page["items"].is_array()) {
      for (nlohmann::json& item : page["items"]) list.items.push_back(std::move(item));
    }
    next = TextAt(page, "metadata.continue");
  } while (!next.empty());
  return list;
}

}  // namespace tessera
