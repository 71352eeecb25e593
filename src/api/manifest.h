// Manifests: request bodies and files turned into JSON documents.
//
// Input is JSON (one object) or YAML (one or more documents separated by "---").
// With ManifestFormat::kAuto, input whose first non-blank character is '{' or '['
// is JSON (as kubectl decides); anything else is YAML.
//
// YAML follows the YAML 1.2 core schema, so a file means the same here as it does
// to every YAML 1.2 tool:
//   plain scalars   null, Null, NULL, ~, (empty)       -> null
//                   true/True/TRUE, false/False/FALSE  -> boolean ("yes", "on" stay strings)
//                   [-+]?[0-9]+, 0x1F, 0o17            -> integer
//                   1.5, -2e3, .5                      -> number (float)
//                   .inf, .nan                          -> error (JSON has no such numbers)
//                   anything else                       -> string
//   quoted scalars and block scalars (| >) are always strings: "8" stays "8".
//   explicit tags !!str, !!int, !!float, !!bool, !!null are honoured.
//   anchors and aliases are expanded (with a size budget against alias bombs).
//   mapping keys are scalars (a key's text, whatever its type); duplicate keys
//   and complex keys are errors.
// Empty documents (only comments, or nothing between two "---") are skipped. A
// document `kind: List` with `items` is replaced by its items, recursively.
// Every document must be an object (a mapping).
//
// Errors are Status::InvalidArgument and say where and what:
//   "invalid YAML at line 4, column 9: end of map not found"
//   "invalid JSON at line 1, column 12: syntax error while parsing object ..."
//   "document 2 (line 7): expected an object with apiVersion and kind, got a list"
// No exception escapes this interface (yaml-cpp's and nlohmann's are caught here).
//
// Thread-safety: stateless; safe to call from any thread.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "common/result.h"

namespace tessera {

enum class ManifestFormat {
  kAuto,  // sniff: JSON when it starts with '{' or '[', else YAML
  kJson,  // Content-Type: application/json
  kYaml,  // Content-Type: application/yaml; YAML files
};

struct ManifestDocument {
  nlohmann::json object;  // always a JSON object
  int index = 0;          // 0-based position among the returned documents
  int line = 0;           // 1-based line where it starts in the input; 0 if unknown

  // "document 2 (line 14)", for messages about this document.
  std::string Where() const;
};

// Every object in `text`, in order, Lists expanded. Empty input gives an empty
// vector (the caller decides whether that is an error).
Result<std::vector<ManifestDocument>> ParseManifests(std::string_view text,
                                                     ManifestFormat format = ManifestFormat::kAuto);

// Exactly one object (an API request body). A List is not expanded here: it is
// returned as is. Errors when the input is empty or holds several documents.
Result<nlohmann::json> ParseSingleObject(std::string_view text,
                                         ManifestFormat format = ManifestFormat::kAuto);

// The JSON form of every YAML document in `text`, typed as described above,
// without the object and List rules (empty documents are still skipped).
// Exposed for tests and for YAML that is not a manifest (config files).
Result<std::vector<nlohmann::json>> YamlToJson(std::string_view text);

}  // namespace tessera
