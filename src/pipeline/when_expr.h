// When-conditions of pipeline steps: a tiny expression language like Argo's.
//
//   condition := or
//   or        := and ('||' and)*
//   and       := not ('&&' not)*
//   not       := '!' not | '(' or ')' | value [op value]
//   op        := '==' | '!=' | '<' | '<=' | '>' | '>='
//   value     := 'quoted' | "quoted" | bare-word
// Values may contain references ({{params.evaluate}}, {{steps.train.status}},
// see references.h), substituted before comparing; a reference's braces may
// hold spaces and operators, and its value may hold anything (it is one value).
// A bare word ends at whitespace or at one of ( ) ! & | = < > ' ".
//
// Semantics:
// - A comparison is numeric when both sides parse as finite decimal numbers
//   ("1.0" == "1"), else it compares the strings byte by byte.
// - A value alone is a boolean: "true" or "false" (any case); anything else is
//   an evaluation error ("{{params.go}} is "maybe", not true or false").
// - && and || short-circuit, so `{{params.go}} && ...` reads no further on false.
//
// Errors: parsing gives "column N: ..." (1-based byte column in the condition);
// evaluating gives the reference or value at fault. ParsePipelineSpec prefixes
// the field path ("spec.steps[2].when: column 14: ...").
//
// Thread-safety: WhenExpr is an immutable value type.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "common/result.h"
#include "pipeline/references.h"

namespace tessera::pipeline {

enum class CompareOp { kEq, kNe, kLt, kLe, kGt, kGe };

class WhenExpr {
 public:
  // The condition as written.
  const std::string& text() const { return text_; }

  // The inner text of every `{{...}}` in it, in order of appearance.
  const std::vector<std::string>& references() const { return references_; }

  // True or false once every reference it makes has a value in `bindings`.
  Result<bool> Evaluate(const Bindings& bindings) const;

  // One node of the syntax tree; public only so the parser can build it.
  struct Node {
    enum class Kind { kOr, kAnd, kNot, kCompare, kValue };
    Kind kind = Kind::kValue;
    CompareOp op = CompareOp::kEq;
    int lhs = -1;             // kOr, kAnd, kNot (operand); indices into nodes_
    int rhs = -1;             // kOr, kAnd
    std::string left, right;  // kCompare: both values; kValue: left (quotes removed, references kept)
  };

 private:
  friend Result<WhenExpr> ParseWhen(std::string_view text);
  Result<bool> EvaluateNode(int index, const Bindings& bindings) const;

  std::string text_;
  std::vector<std::string> references_;
  std::vector<Node> nodes_;
  int root_ = -1;
};

// Parses a condition; errors "column N: ...".
Result<WhenExpr> ParseWhen(std::string_view text);

// ParseWhen, then Evaluate.
Result<bool> EvaluateWhen(std::string_view text, const Bindings& bindings);

}  // namespace tessera::pipeline
