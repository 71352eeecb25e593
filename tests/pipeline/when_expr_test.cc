// EvaluateWhen: the condition language of steps, its comparisons, logic,
// references and errors.
#include "pipeline/when_expr.h"

#include <gtest/gtest.h>

namespace tessera::pipeline {
namespace {

bool Eval(std::string_view expr, const Bindings& bindings = {}) {
  auto r = EvaluateWhen(expr, bindings);
  EXPECT_TRUE(r.has_value()) << expr << ": " << r.error().ToString();
  return r.value_or(false);
}

std::string EvalError(std::string_view expr, const Bindings& bindings = {}) {
  auto r = EvaluateWhen(expr, bindings);
  EXPECT_FALSE(r.has_value()) << expr;
  return r ? "" : r.error().message();
}

TEST(EvaluateWhen, ComparesNumbersNumericallyWhenBothSidesAreNumbers) {
  EXPECT_TRUE(Eval("10 > 9"));       // 10 > 9 as numbers ("10" < "9" as strings)
  EXPECT_TRUE(Eval("1.0 == 1"));     // the same number
  EXPECT_TRUE(Eval("-0.5 < 1e-3"));  // -0.5 < 0.001
  EXPECT_TRUE(Eval("0.92 >= 0.9"));
  EXPECT_FALSE(Eval("3 != 3.0"));
  EXPECT_TRUE(Eval("2 <= 2"));
}

TEST(EvaluateWhen, ComparesStringsWhenEitherSideIsNotANumber) {
  EXPECT_TRUE(Eval("10 < 9x"));  // "10" < "9x" byte by byte
  EXPECT_TRUE(Eval("abc < abd"));
  EXPECT_FALSE(Eval("Succeeded == succeeded"));  // case matters
  EXPECT_TRUE(Eval("'a b' == \"a b\""));         // both quote styles
  EXPECT_TRUE(Eval("inf != 1"));                 // "inf" is not a finite number: a string
}

TEST(EvaluateWhen, FollowsPrecedenceNotThenAndThenOr) {
  EXPECT_TRUE(Eval("true || false && false"));     // true || (false && false)
  EXPECT_FALSE(Eval("(true || false) && false"));  // parentheses first
  EXPECT_TRUE(Eval("!false && !(1 == 2)"));
  EXPECT_FALSE(Eval("!!false"));
}

TEST(EvaluateWhen, SubstitutesReferencesBeforeComparing) {
  const Bindings b = {{"params.evaluate", "true"},
                      {"steps.train.status", "Succeeded"},
                      {"steps.train.outputs.result", "accuracy 0.93"},
                      {"steps.score.outputs.result", "0.93"}};
  EXPECT_TRUE(Eval("{{params.evaluate}} == true && {{steps.train.status}} == Succeeded", b));
  // A value with a space is still one value, quoted or not.
  EXPECT_TRUE(Eval("{{steps.train.outputs.result}} == 'accuracy 0.93'", b));
  EXPECT_TRUE(Eval("'{{steps.train.outputs.result}}' != accuracy", b));
  EXPECT_TRUE(Eval("{{ steps.score.outputs.result }} > 0.9", b));  // 0.93 > 0.9
}

TEST(EvaluateWhen, ReadsAValueAloneAsABoolean) {
  EXPECT_TRUE(Eval("{{params.go}}", {{"params.go", "True"}}));  // any case
  EXPECT_FALSE(Eval("{{params.go}}", {{"params.go", "false"}}));
  EXPECT_EQ(EvalError("{{params.go}}", {{"params.go", "maybe"}}), "{{params.go}} is \"maybe\", not true or false");
  EXPECT_EQ(EvalError("yes"), "\"yes\" is not true or false");
}

TEST(EvaluateWhen, ShortCircuitsSoTheRightSideIsNotRead) {
  // "maybe" alone would be an error; false && ... never reads it.
  EXPECT_FALSE(Eval("false && maybe"));
  EXPECT_TRUE(Eval("true || maybe"));
}

TEST(EvaluateWhen, RefusesAReferenceWithoutAValue) {
  EXPECT_EQ(EvalError("{{params.go}} == true"), "{{params.go}} has no value");
}

TEST(ParseWhen, ListsItsReferencesInOrder) {
  auto expr = ParseWhen("{{params.a}} == x && '{{steps.b.status}}' == Succeeded || {{ item.k }}");
  ASSERT_TRUE(expr.has_value());
  EXPECT_EQ(expr->references(), (std::vector<std::string>{"params.a", "steps.b.status", "item.k"}));
}

TEST(ParseWhen, TakesAReferenceWithOperatorsInsideItsBracesWhole) {
  // Within {{...}} the lexer does not stop at '=' or spaces; the reference
  // grammar (checked by ParsePipelineSpec) refuses it later.
  auto expr = ParseWhen("{{a == b}} == c");
  ASSERT_TRUE(expr.has_value());
  EXPECT_EQ(expr->references(), (std::vector<std::string>{"a == b"}));
}

}  // namespace
}  // namespace tessera::pipeline
