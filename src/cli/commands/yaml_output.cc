#include "cli/commands/yaml_output.h"

#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cctype>
#include <regex>

namespace tessera {
namespace {

std::string Lower(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return s;
}

void Emit(YAML::Emitter& out, const nlohmann::json& v) {
  switch (v.type()) {
    case nlohmann::json::value_t::object:
      if (v.empty()) {
        out << YAML::Flow << YAML::BeginMap << YAML::EndMap;
        return;
      }
      out << YAML::BeginMap;
      for (const auto& [key, value] : v.items()) {
        out << YAML::Key;
        if (NeedsQuotes(key)) out << YAML::DoubleQuoted;
        out << key << YAML::Value;
        Emit(out, value);
      }
      out << YAML::EndMap;
      return;
    case nlohmann::json::value_t::array:
      if (v.empty()) {
        out << YAML::Flow << YAML::BeginSeq << YAML::EndSeq;
        return;
      }
      out << YAML::BeginSeq;
      for (const auto& item : v) Emit(out, item);
      out << YAML::EndSeq;
      return;
    case nlohmann::json::value_t::string: {
      const std::string& s = v.get_ref<const std::string&>();
      if (s.find('\n') != std::string::npos) {
        out << YAML::Literal << s;
      } else if (NeedsQuotes(s)) {
        out << YAML::DoubleQuoted << s;
      } else {
        out << s;
      }
      return;
    }
    case nlohmann::json::value_t::null:
      out << YAML::Null;
      return;
    default:  // numbers and booleans: JSON's text is also YAML's
      out << v.dump();
      return;
  }
}

}  // namespace

bool NeedsQuotes(const std::string& text) {
  if (text.empty()) return true;
  static const char* const kWords[] = {"null", "~", "true", "false", "yes", "no", "on", "off", "y", "n",
                                       ".inf", "-.inf", "+.inf", ".nan", "<<", "="};
  const std::string lower = Lower(text);
  for (const char* w : kWords) {
    if (lower == w) return true;
  }
  // Numbers of YAML 1.2 and 1.1: ints (with _ separators, 0x, 0o, 0b, leading 0),
  // floats with exponents, sexagesimal 1:30, and dates (YAML 1.1 timestamps).
  static const std::regex kNumberLike(
      R"([-+]?(\.[0-9]+|[0-9][0-9_]*(\.[0-9_]*)?)([eE][-+]?[0-9]+)?|[-+]?0[xX][0-9a-fA-F_]+|[-+]?0[oO]?[0-7_]+|)"
      R"([-+]?0[bB][01_]+|[-+]?[0-9][0-9_]*(:[0-5]?[0-9])+(\.[0-9_]*)?|[0-9]{4}-[0-9]{1,2}-[0-9]{1,2}.*)");
  return std::regex_match(text, kNumberLike);
}

std::string ToYaml(const nlohmann::json& value) {
  YAML::Emitter out;
  out.SetIndent(2);
  Emit(out, value);
  std::string text = out.c_str();
  if (text.empty() || text.back() != '\n') text += '\n';
  return text;
}

}  // namespace tessera
