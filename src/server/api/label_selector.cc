#include "server/api/label_selector.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>

namespace tessera {
namespace {

std::string_view Trim(std::string_view s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front()))) s.remove_prefix(1);
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.remove_suffix(1);
  return s;
}

// Splits on commas that are not inside parentheses.
std::vector<std::string_view> SplitTerms(std::string_view s) {
  std::vector<std::string_view> out;
  int depth = 0;
  size_t start = 0;
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '(') ++depth;
    if (s[i] == ')') --depth;
    if (s[i] == ',' && depth == 0) {
      out.push_back(Trim(s.substr(start, i - start)));
      start = i + 1;
    }
  }
  out.push_back(Trim(s.substr(start)));
  return out;
}

bool ValidKey(std::string_view k) {
  return !k.empty() && std::all_of(k.begin(), k.end(), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_' || c == '.' || c == '/';
  });
}

}  // namespace

Result<LabelSelector> LabelSelector::Parse(std::string_view text) {
  LabelSelector sel;
  if (Trim(text).empty()) return sel;
  for (std::string_view term : SplitTerms(text)) {
    auto bad = [&](std::string_view why) {
      return Err(Status::InvalidArgument(fmt::format("label selector \"{}\": term \"{}\": {}", text, term, why)));
    };
    if (term.empty()) return bad("empty term (two commas in a row?)");
    Requirement r;
    if (term.front() == '!') {
      r.key = std::string(Trim(term.substr(1)));
      r.op = Op::kNotExists;
    } else if (auto pos = term.find("!="); pos != std::string_view::npos) {
      r.key = std::string(Trim(term.substr(0, pos)));
      r.op = Op::kNotEquals;
      r.values.emplace_back(Trim(term.substr(pos + 2)));
    } else if (auto pos2 = term.find("=="); pos2 != std::string_view::npos) {
      r.key = std::string(Trim(term.substr(0, pos2)));
      r.op = Op::kEquals;
      r.values.emplace_back(Trim(term.substr(pos2 + 2)));
    } else if (auto pos3 = term.find('='); pos3 != std::string_view::npos) {
      r.key = std::string(Trim(term.substr(0, pos3)));
      r.op = Op::kEquals;
      r.values.emplace_back(Trim(term.substr(pos3 + 1)));
    } else if (auto open = term.find('('); open != std::string_view::npos) {
      if (term.back() != ')') return bad("a set must end with ')'");
      std::string_view head = Trim(term.substr(0, open));
      const auto space = head.find_last_of(" \t");
      if (space == std::string_view::npos) return bad("expected KEY in (A,B) or KEY notin (A,B)");
      const std::string_view op = Trim(head.substr(space + 1));
      r.key = std::string(Trim(head.substr(0, space)));
      if (op == "in") {
        r.op = Op::kIn;
      } else if (op == "notin") {
        r.op = Op::kNotIn;
      } else {
        return bad(fmt::format("unknown operator \"{}\" (use in or notin)", op));
      }
      std::string_view inside = term.substr(open + 1, term.size() - open - 2);
      for (std::string_view v : SplitTerms(inside)) r.values.emplace_back(v);
    } else {
      r.key = std::string(term);
      r.op = Op::kExists;
    }
    if (!ValidKey(r.key)) return bad(fmt::format("\"{}\" is not a valid label key", r.key));
    sel.requirements_.push_back(std::move(r));
  }
  return sel;
}

bool LabelSelector::MatchesObject(const nlohmann::json& object) const {
  if (requirements_.empty()) return true;
  std::map<std::string, std::string> labels;
  auto meta = object.find("metadata");
  if (meta != object.end() && meta->is_object()) {
    auto l = meta->find("labels");
    if (l != meta->end() && l->is_object()) {
      for (const auto& [k, v] : l->items()) {
        if (v.is_string()) labels[k] = v.get<std::string>();
      }
    }
  }
  return Matches(labels);
}

bool LabelSelector::Matches(const std::map<std::string, std::string>& labels) const {
  for (const Requirement& r : requirements_) {
    auto it = labels.find(r.key);
    const bool has = it != labels.end();
    auto in_values = [&] { return has && std::find(r.values.begin(), r.values.end(), it->second) != r.values.end(); };
    switch (r.op) {
      case Op::kEquals:
      case Op::kIn:
        if (!in_values()) return false;
        break;
      case Op::kNotEquals:
      case Op::kNotIn:
        if (in_values()) return false;
        break;
      case Op::kExists:
        if (!has) return false;
        break;
      case Op::kNotExists:
        if (has) return false;
        break;
    }
  }
  return true;
}

}  // namespace tessera
