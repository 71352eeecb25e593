// `{{...}}` references in a pipeline's pod templates and when-conditions: their
// grammar, where they sit in a string, and substituting their values.
//
// The grammar (whitespace inside the braces is ignored):
//   {{params.NAME}}               a pipeline parameter
//   {{item}}  {{item.KEY}}        the withItems item of a fanned-out node (or a key of an object item)
//   {{steps.STEP.status}}         an upstream step's outcome: Succeeded, Failed, Skipped or Omitted
//   {{steps.STEP.outputs.result}} the text an upstream step wrote to TESSERA_OUTPUT_DIR/result
// Whether a name exists (a declared parameter, an upstream step) is checked by
// ParsePipelineSpec, which knows the spec; this file knows only the grammar.
//
// Substitution replaces references by their values in one pass: a value is never
// scanned again, so a parameter whose value contains "{{...}}" stays as written.
// An unclosed "{{" is literal text, not a reference.
//
// Thread-safety: pure functions and value types.
#pragma once

#include <functional>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "common/result.h"

namespace tessera::pipeline {

enum class ReferenceKind {
  kParam,       // {{params.NAME}}
  kItem,        // {{item}}
  kItemKey,     // {{item.KEY}}
  kStepStatus,  // {{steps.STEP.status}}
  kStepResult,  // {{steps.STEP.outputs.result}}
};

struct Reference {
  ReferenceKind kind = ReferenceKind::kParam;
  std::string name;  // the parameter, item key or step; empty for kItem

  // Known only once an upstream step has finished (FinalTemplate, Next).
  bool late() const { return kind == ReferenceKind::kStepStatus || kind == ReferenceKind::kStepResult; }

  // The key of its value in Bindings: "params.NAME", "item", "item.KEY",
  // "steps.STEP.status", "steps.STEP.outputs.result".
  std::string Key() const;

  friend bool operator==(const Reference&, const Reference&) = default;
};

// Parses the text between the braces. Errors (InvalidArgument) name the
// reference as written: "{{parms.x}}: unknown reference (did you mean "params"?); use ...".
Result<Reference> ParseReference(std::string_view inner);

// One `{{...}}` in a string: [begin, end) covers the braces; `inner` is the
// text between them, trimmed.
struct ReferenceSpan {
  size_t begin = 0;
  size_t end = 0;
  std::string_view inner;
};

// Every `{{...}}` in `text`, in order (views into `text`).
std::vector<ReferenceSpan> FindReferences(std::string_view text);

// Values of references by Reference::Key().
using Bindings = std::map<std::string, std::string, std::less<>>;

// The text a JSON value substitutes as: a string as it is, anything else as
// compact JSON with sorted keys (10, 0.5, true, {"lr":0.1}).
std::string BindingText(const nlohmann::json& value);

// `text` with each reference whose key (of its trimmed inner text, parsed) is
// in `bindings` replaced by its value; the others are left as written.
std::string SubstituteString(std::string_view text, const Bindings& bindings);

// Like SubstituteString, but a reference without a value is an error
// "{{X}} has no value" (a when-condition must be fully known to be decided).
Result<std::string> SubstituteAll(std::string_view text, const Bindings& bindings);

// SubstituteString applied to every string value of a JSON document (object
// keys are left alone: a pod template's keys are field names and label keys).
nlohmann::json SubstituteJson(const nlohmann::json& doc, const Bindings& bindings);

// Calls `visit(path, value)` for every string value in `doc`, with its field
// path below `path` ("spec.containers[0].args[1]"), in document order; stops at
// and returns the first error.
Status VisitJsonStrings(const nlohmann::json& doc, const std::string& path,
                        const std::function<Status(const std::string& path, const std::string& value)>& visit);

}  // namespace tessera::pipeline
