// JSON -> YAML for `-o yaml`, written with yaml-cpp's emitter so that the text
// reads back (through api/manifest.h, YAML 1.2 core schema, or any YAML tool) as
// the same JSON:
//   - keys in the JSON's order (nlohmann sorts them, as kubectl's output is sorted);
//   - a string that would read back as something else is double-quoted:
//     "8", "0.25", "true", "null", "", "1e3", "0x1F", "yes"/"on" (YAML 1.1 readers)...
//   - multi-line strings as literal blocks (|);
//   - empty objects and lists as {} and [];
//   - numbers as JSON writes them (shortest exact form).
//
// Thread-safety: pure function.
#pragma once

#include <string>

#include <nlohmann/json.hpp>

namespace tessera {

// The YAML document for `value`, ending with a newline.
std::string ToYaml(const nlohmann::json& value);

// Whether a plain (unquoted) scalar with this text would read as anything other
// than the string itself under YAML 1.2 or YAML 1.1.
bool NeedsQuotes(const std::string& text);

}  // namespace tessera
