// DescribeWriter: the indented "Key:  value" text of `tessera describe`, laid
// out as kubectl describe lays it out: values of consecutive key lines line up
// two spaces after the longest key (a section header, a line without a value,
// starts a new block); further values of a key (labels) go on lines of their
// own under the first. JSON fields are shown with kubectl's labels for them
// (SmartLabel: "nominalQuota" -> "Nominal Quota"), objects as indented
// sections, lists of scalars one item per line.
//
// Thread-safety: a value type; not synchronised.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

namespace tessera {

class DescribeWriter {
 public:
  // "Key:" (the colon is added) with a value; nullopt: a section header.
  void Field(int indent, std::string_view key, std::optional<std::string> value);
  // A further value for the key above, under its first value.
  void Continue(int indent, std::string value);
  // A line as it is (tables), indented.
  void Raw(int indent, std::string_view text);
  void Blank() { Raw(0, ""); }

  // Every field of a JSON object (`skip`: keys left out), recursively.
  void Object(int indent, const nlohmann::json& object, const std::vector<std::string>& skip = {});

  std::string Render() const;

 private:
  struct Line {
    int indent = 0;
    std::string key;     // with its colon; "" for a continuation
    std::optional<std::string> value;
    bool raw = false;
  };
  void Value(int indent, const std::string& key, const nlohmann::json& value);
  std::vector<Line> lines_;
};

// kubectl's label for a field name: camelCase split into capitalised words,
// "API"/"URL"/"UID" upper-cased; names with characters other than letters and
// '-' ("nvidia.com/gpu") unchanged.
std::string SmartLabel(std::string_view field);

}  // namespace tessera
