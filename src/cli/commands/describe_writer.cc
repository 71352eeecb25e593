#include "cli/commands/describe_writer.h"

#include <algorithm>
#include <cctype>

#include "api/object_fields.h"
#include "cli/commands/table_printer.h"

namespace tessera {
namespace {

constexpr size_t kValueGap = 2;

bool IsScalar(const nlohmann::json& v) { return !v.is_object() && !v.is_array(); }

}  // namespace

std::string SmartLabel(std::string_view field) {
  // Steps: 1. keep names with anything but letters and '-' as they are;
  // 2. split into runs (lower case, upper case, other), an upper-case run
  //    giving its last letter to a following lower-case run ("APIVersion" ->
  //    "API", "Version"); 3. capitalise each word, upper-case acronyms.
  if (field.empty() || std::any_of(field.begin(), field.end(), [](char c) {
        return !std::isalpha(static_cast<unsigned char>(c)) && c != '-';
      })) {
    return std::string(field);
  }
  auto cls = [](char c) { return std::islower(static_cast<unsigned char>(c)) ? 0 : std::isupper(static_cast<unsigned char>(c)) ? 1 : 2; };
  std::vector<std::string> runs;
  for (char c : field) {
    if (runs.empty() || cls(runs.back().back()) != cls(c)) {
      runs.emplace_back(1, c);
    } else {
      runs.back() += c;
    }
  }
  for (size_t i = 0; i + 1 < runs.size(); ++i) {
    if (!runs[i].empty() && cls(runs[i][0]) == 1 && cls(runs[i + 1][0]) == 0) {
      runs[i + 1].insert(runs[i + 1].begin(), runs[i].back());
      runs[i].pop_back();
    }
  }
  std::string out;
  for (std::string word : runs) {
    if (word.empty()) continue;
    std::string upper = word;
    for (char& c : upper) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
    if (upper == "API" || upper == "URL" || upper == "UID" || upper == "OSB" || upper == "GUID") {
      word = upper;
    } else {
      word[0] = static_cast<char>(std::toupper(static_cast<unsigned char>(word[0])));
    }
    if (!out.empty()) out += ' ';
    out += word;
  }
  return out;
}

void DescribeWriter::Field(int indent, std::string_view key, std::optional<std::string> value) {
  lines_.push_back(Line{indent, std::string(key) + ":", std::move(value), false});
}

void DescribeWriter::Continue(int indent, std::string value) {
  lines_.push_back(Line{indent, "", std::move(value), false});
}

void DescribeWriter::Raw(int indent, std::string_view text) {
  lines_.push_back(Line{indent, std::string(text), std::nullopt, true});
}

void DescribeWriter::Value(int indent, const std::string& key, const nlohmann::json& v) {
  if (v.is_null()) return;
  if (IsScalar(v)) {
    Field(indent, key, Text(&v));
    return;
  }
  Field(indent, key, std::nullopt);
  if (v.is_object()) {
    Object(indent + 2, v);
    return;
  }
  for (const nlohmann::json& item : v) {
    if (IsScalar(item)) {
      Raw(indent + 2, Text(&item));
    } else if (item.is_object()) {
      Object(indent + 2, item);
    } else {
      Value(indent + 2, "-", item);
    }
  }
}

void DescribeWriter::Object(int indent, const nlohmann::json& object, const std::vector<std::string>& skip) {
  if (!object.is_object()) return;
  for (const auto& [key, value] : object.items()) {
    if (std::find(skip.begin(), skip.end(), key) != skip.end()) continue;
    Value(indent, SmartLabel(key), value);
  }
}

std::string DescribeWriter::Render() const {
  std::string out;
  size_t i = 0;
  while (i < lines_.size()) {
    // A block: consecutive lines that carry a value share one value column.
    size_t end = i;
    size_t width = 0;
    // Top-level lines (indent 0) and nested ones align separately, so that a
    // section's deep keys do not push the next top-level value far right.
    const bool top = lines_[i].indent == 0;
    while (end < lines_.size() && !lines_[end].raw && lines_[end].value && (lines_[end].indent == 0) == top) {
      width = std::max(width, lines_[end].indent + DisplayWidth(lines_[end].key));
      ++end;
    }
    if (end == i) {
      const Line& l = lines_[i];
      if (!l.raw || !l.key.empty()) out.append(l.indent, ' ');
      out += l.key;
      out += '\n';
      ++i;
      continue;
    }
    const size_t column = width + kValueGap;
    for (; i < end; ++i) {
      const Line& l = lines_[i];
      std::string line(l.indent, ' ');
      line += l.key;
      const std::string& value = *l.value;
      if (!value.empty()) {
        line.append(column - DisplayWidth(line), ' ');
        // A multi-line value keeps its later lines under the first.
        size_t start = 0;
        while (true) {
          const size_t nl = value.find('\n', start);
          line += value.substr(start, nl == std::string::npos ? std::string::npos : nl - start);
          if (nl == std::string::npos) break;
          line += '\n' + std::string(column, ' ');
          start = nl + 1;
        }
      }
      out += line;
      out += '\n';
    }
  }
  return out;
}

}  // namespace tessera
