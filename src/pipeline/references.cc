// Assumptions: references are short ASCII paths of dot-separated words; the
// text around them is arbitrary (UTF-8 passes through untouched).
// Steps of SubstituteString: find each "{{" and its closing "}}", parse the
// inner text, and splice in the bound value or keep the original characters.
#include "pipeline/references.h"

#include <fmt/format.h>

#include "common/suggest.h"

namespace tessera::pipeline {
namespace {

constexpr std::string_view kForms =
    "use {{params.NAME}}, {{item}}, {{item.KEY}}, {{steps.STEP.status}} or {{steps.STEP.outputs.result}}";

std::string_view Trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return s;
}

std::vector<std::string_view> SplitDots(std::string_view s) {
  std::vector<std::string_view> parts;
  size_t start = 0;
  while (true) {
    size_t dot = s.find('.', start);
    parts.push_back(s.substr(start, dot == std::string_view::npos ? std::string_view::npos : dot - start));
    if (dot == std::string_view::npos) return parts;
    start = dot + 1;
  }
}

Status RefError(std::string_view inner, std::string_view what) {
  return Status::InvalidArgument(fmt::format("{{{{{}}}}}: {}", inner, what));
}

}  // namespace

std::string Reference::Key() const {
  switch (kind) {
    case ReferenceKind::kParam: return "params." + name;
    case ReferenceKind::kItem: return "item";
    case ReferenceKind::kItemKey: return "item." + name;
    case ReferenceKind::kStepStatus: return "steps." + name + ".status";
    case ReferenceKind::kStepResult: return "steps." + name + ".outputs.result";
  }
  return "";
}

Result<Reference> ParseReference(std::string_view raw) {
  const std::string_view inner = Trim(raw);
  if (inner.empty()) return Err(RefError(inner, fmt::format("empty reference; {}", kForms)));
  const std::vector<std::string_view> parts = SplitDots(inner);
  for (std::string_view p : parts) {
    if (p.empty()) return Err(RefError(inner, fmt::format("empty name between dots; {}", kForms)));
  }
  const std::string_view root = parts[0];
  if (root == "params") {
    if (parts.size() != 2) return Err(RefError(inner, "name one parameter: {{params.NAME}}"));
    return Reference{ReferenceKind::kParam, std::string(parts[1])};
  }
  if (root == "item") {
    if (parts.size() == 1) return Reference{ReferenceKind::kItem, ""};
    if (parts.size() == 2) return Reference{ReferenceKind::kItemKey, std::string(parts[1])};
    return Err(RefError(inner, "items are read one level deep: {{item}} or {{item.KEY}}"));
  }
  if (root == "steps") {
    if (parts.size() == 3 && parts[2] == "status") return Reference{ReferenceKind::kStepStatus, std::string(parts[1])};
    if (parts.size() == 4 && parts[2] == "outputs" && parts[3] == "result") {
      return Reference{ReferenceKind::kStepResult, std::string(parts[1])};
    }
    if (parts.size() < 2)
      return Err(RefError(inner, "name the step: {{steps.STEP.status}} or {{steps.STEP.outputs.result}}"));
    return Err(RefError(
        inner, fmt::format("a step offers {{{{steps.{0}.status}}}} and {{{{steps.{0}.outputs.result}}}}", parts[1])));
  }
  std::string hint;
  if (auto s = Suggest(root, {"params", "item", "steps"})) hint = fmt::format(" (did you mean \"{}\"?)", *s);
  return Err(RefError(inner, fmt::format("unknown reference{}; {}", hint, kForms)));
}

std::string BindingText(const nlohmann::json& value) {
  if (value.is_string()) return value.get<std::string>();
  return value.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

std::vector<ReferenceSpan> FindReferences(std::string_view text) {
  std::vector<ReferenceSpan> out;
  size_t pos = 0;
  while (true) {
    const size_t open = text.find("{{", pos);
    if (open == std::string_view::npos) return out;
    const size_t close = text.find("}}", open + 2);
    if (close == std::string_view::npos) return out;  // unclosed: literal text
    out.push_back({open, close + 2, Trim(text.substr(open + 2, close - open - 2))});
    pos = close + 2;
  }
}

namespace {

// Shared by SubstituteString and SubstituteAll: `strict` decides what an
// unbound reference does: keep it as written, or fail (strict).
Result<std::string> Substitute(std::string_view text, const Bindings& bindings, bool strict) {
  std::string out;
  size_t pos = 0;
  for (const ReferenceSpan& span : FindReferences(text)) {
    out.append(text.substr(pos, span.begin - pos));
    auto ref = ParseReference(span.inner);
    auto it = ref.has_value() ? bindings.find(ref->Key()) : bindings.end();
    if (it != bindings.end()) {
      out.append(it->second);
    } else if (strict) {
      return Err(Status::InvalidArgument(fmt::format("{{{{{}}}}} has no value", span.inner)));
    } else {
      out.append(text.substr(span.begin, span.end - span.begin));
    }
    pos = span.end;
  }
  out.append(text.substr(pos));
  return out;
}

}  // namespace

std::string SubstituteString(std::string_view text, const Bindings& bindings) {
  return *Substitute(text, bindings, /*strict=*/false);
}

Result<std::string> SubstituteAll(std::string_view text, const Bindings& bindings) {
  return Substitute(text, bindings, /*strict=*/true);
}

nlohmann::json SubstituteJson(const nlohmann::json& doc, const Bindings& bindings) {
  if (doc.is_string()) return SubstituteString(doc.get_ref<const std::string&>(), bindings);
  if (doc.is_array()) {
    nlohmann::json out = nlohmann::json::array();
    for (const nlohmann::json& v : doc) out.push_back(SubstituteJson(v, bindings));
    return out;
  }
  if (doc.is_object()) {
    nlohmann::json out = nlohmann::json::object();
    for (auto it = doc.begin(); it != doc.end(); ++it) out[it.key()] = SubstituteJson(*it, bindings);
    return out;
  }
  return doc;
}

Status VisitJsonStrings(const nlohmann::json& doc, const std::string& path,
                        const std::function<Status(const std::string& path, const std::string& value)>& visit) {
  if (doc.is_string()) return visit(path, doc.get_ref<const std::string&>());
  if (doc.is_array()) {
    for (size_t i = 0; i < doc.size(); ++i)
      RETURN_IF_ERROR(VisitJsonStrings(doc[i], fmt::format("{}[{}]", path, i), visit));
  } else if (doc.is_object()) {
    for (auto it = doc.begin(); it != doc.end(); ++it) {
      RETURN_IF_ERROR(VisitJsonStrings(*it, fmt::format("{}.{}", path, it.key()), visit));
    }
  }
  return Status::Ok();
}

}  // namespace tessera::pipeline
