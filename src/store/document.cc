#include "store/document.h"

#include <fmt/format.h>

#include <string_view>

namespace tessera {

using nlohmann::json;

std::string DescribeKey(const ObjectKey& key) {
  std::string_view kind = key.kind;
  if (kind.starts_with('/')) kind.remove_prefix(1);
  if (key.ns.empty()) return fmt::format("{} {}", kind, key.name);
  return fmt::format("{} {}/{}", kind, key.ns, key.name);
}

Status ValidateKey(const ObjectKey& key) {
  if (key.kind.empty() || key.name.empty()) {
    return Status::InvalidArgument(fmt::format(
        "object key (kind '{}', name '{}') needs a kind and a name", key.kind, key.name));
  }
  return Status::Ok();
}

Result<json*> MetadataOf(json& object, const ObjectKey& key) {
  if (!object.is_object()) {
    return Err(Status::InvalidArgument(fmt::format(
        "{}: the document is a JSON {}, not an object: send an object with apiVersion, kind and metadata",
        DescribeKey(key), object.type_name())));
  }
  json& metadata = object["metadata"];
  if (metadata.is_null()) metadata = json::object();
  if (!metadata.is_object()) {
    return Err(Status::InvalidArgument(fmt::format(
        "{}: metadata is a JSON {}, not an object", DescribeKey(key), metadata.type_name())));
  }
  return &metadata;
}

Result<std::string> AssignUid(json& metadata, const ObjectKey& key, const std::function<std::string()>& new_uid) {
  std::string uid;
  if (auto it = metadata.find("uid"); it != metadata.end() && !it->is_null()) {
    if (!it->is_string()) {
      return Err(Status::InvalidArgument(fmt::format(
          "{}: metadata.uid is a JSON {}, not a string: leave it out and the store assigns one",
          DescribeKey(key), it->type_name())));
    }
    uid = it->get<std::string>();
  }
  if (uid.empty()) uid = new_uid();
  metadata["uid"] = uid;
  return uid;
}

Result<std::string> DumpDocument(const json& object, const ObjectKey& key) {
  try {
    return object.dump();
  } catch (const json::exception& e) {
    return Err(Status::InvalidArgument(fmt::format(
        "{}: the document cannot be stored: {} (strings must be valid UTF-8)", DescribeKey(key), e.what())));
  }
}

}  // namespace tessera
