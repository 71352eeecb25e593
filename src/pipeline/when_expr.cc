// Assumptions: conditions are short (a line), so a recursive-descent parser
// over a token vector is plenty; nesting depth is bounded by the text's length.
// Steps: (1) lex into tokens, keeping each one's column and any `{{...}}` whole;
// (2) parse by precedence (|| < && < ! < comparison); (3) evaluate on demand,
// substituting references into values first.
#include "pipeline/when_expr.h"

#include <fmt/format.h>

#include <charconv>
#include <cmath>
#include <optional>

namespace tessera::pipeline {
namespace {

struct Token {
  enum class Kind { kLParen, kRParen, kNot, kAnd, kOr, kCompare, kValue, kEnd };
  Kind kind = Kind::kEnd;
  CompareOp op = CompareOp::kEq;
  std::string value;    // kValue: the content (quotes removed)
  std::string spelled;  // as written, for messages
  size_t column = 0;    // 1-based
};

bool IsBareWordStop(char c) {
  return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '(' || c == ')' || c == '!' || c == '&' || c == '|' ||
         c == '=' || c == '<' || c == '>' || c == '\'' || c == '"';
}

Status ColumnError(size_t column, std::string_view what) {
  return Status::InvalidArgument(fmt::format("column {}: {}", column, what));
}

Result<std::vector<Token>> Lex(std::string_view text) {
  std::vector<Token> out;
  size_t i = 0;
  auto push = [&](Token::Kind kind, size_t len, CompareOp op = CompareOp::kEq) {
    out.push_back({kind, op, "", std::string(text.substr(i, len)), i + 1});
    i += len;
  };
  while (i < text.size()) {
    const char c = text[i];
    const char next = i + 1 < text.size() ? text[i + 1] : '\0';
    if (c == ' ' || c == '\t' || c == '\n' || c == '\r') {
      ++i;
    } else if (c == '(') {
      push(Token::Kind::kLParen, 1);
    } else if (c == ')') {
      push(Token::Kind::kRParen, 1);
    } else if (c == '!') {
      if (next == '=') {
        push(Token::Kind::kCompare, 2, CompareOp::kNe);
      } else {
        push(Token::Kind::kNot, 1);
      }
    } else if (c == '&' || c == '|') {
      if (next != c) return Err(ColumnError(i + 1, fmt::format("'{0}' is not an operator; did you mean '{0}{0}'?", c)));
      push(c == '&' ? Token::Kind::kAnd : Token::Kind::kOr, 2);
    } else if (c == '=') {
      if (next != '=') return Err(ColumnError(i + 1, "'=' is not an operator; did you mean '=='?"));
      push(Token::Kind::kCompare, 2, CompareOp::kEq);
    } else if (c == '<' || c == '>') {
      const bool eq = next == '=';
      const CompareOp op = c == '<' ? (eq ? CompareOp::kLe : CompareOp::kLt) : (eq ? CompareOp::kGe : CompareOp::kGt);
      push(Token::Kind::kCompare, eq ? 2 : 1, op);
    } else if (c == '\'' || c == '"') {
      const size_t close = text.find(c, i + 1);
      if (close == std::string_view::npos) {
        return Err(ColumnError(i + 1, fmt::format("unclosed quote {}: end the value with {}", c, c)));
      }
      Token t{Token::Kind::kValue, CompareOp::kEq, std::string(text.substr(i + 1, close - i - 1)),
              std::string(text.substr(i, close - i + 1)), i + 1};
      out.push_back(std::move(t));
      i = close + 1;
    } else {
      // A bare word; a `{{...}}` inside it is taken whole, operators and all.
      size_t j = i;
      while (j < text.size() && !IsBareWordStop(text[j])) {
        if (text.compare(j, 2, "{{") == 0) {
          const size_t close = text.find("}}", j + 2);
          if (close == std::string_view::npos) return Err(ColumnError(j + 1, "unclosed {{: end the reference with }}"));
          j = close + 2;
        } else {
          ++j;
        }
      }
      const std::string word(text.substr(i, j - i));
      out.push_back({Token::Kind::kValue, CompareOp::kEq, word, word, i + 1});
      i = j;
    }
  }
  out.push_back({Token::Kind::kEnd, CompareOp::kEq, "", "", text.size() + 1});
  return out;
}

std::string Describe(const Token& t) {
  if (t.kind == Token::Kind::kEnd) return "the end";
  if (t.kind == Token::Kind::kValue) {
    const bool quoted = t.spelled.front() == '\'' || t.spelled.front() == '"';
    return quoted ? t.spelled : "\"" + t.spelled + "\"";
  }
  return "'" + t.spelled + "'";
}

class Parser {
 public:
  Parser(std::vector<Token> tokens, std::vector<WhenExpr::Node>& nodes) : tokens_(std::move(tokens)), nodes_(nodes) {}

  Result<int> ParseTop() {
    ASSIGN_OR_RETURN(int root, ParseOr());
    const Token& t = Peek();
    if (t.kind != Token::Kind::kEnd) {
      return Err(ColumnError(t.column, fmt::format("expected '&&', '||' or the end, found {}", Describe(t))));
    }
    return root;
  }

 private:
  const Token& Peek() const { return tokens_[pos_]; }
  const Token& Take() { return tokens_[pos_++]; }

  int Add(WhenExpr::Node node) {
    nodes_.push_back(std::move(node));
    return static_cast<int>(nodes_.size()) - 1;
  }

  Result<int> ParseOr() {
    ASSIGN_OR_RETURN(int lhs, ParseAnd());
    while (Peek().kind == Token::Kind::kOr) {
      Take();
      ASSIGN_OR_RETURN(int rhs, ParseAnd());
      lhs = Add({WhenExpr::Node::Kind::kOr, CompareOp::kEq, lhs, rhs, "", ""});
    }
    return lhs;
  }

  Result<int> ParseAnd() {
    ASSIGN_OR_RETURN(int lhs, ParseNot());
    while (Peek().kind == Token::Kind::kAnd) {
      Take();
      ASSIGN_OR_RETURN(int rhs, ParseNot());
      lhs = Add({WhenExpr::Node::Kind::kAnd, CompareOp::kEq, lhs, rhs, "", ""});
    }
    return lhs;
  }

  Result<int> ParseNot() {
    const Token& t = Peek();
    if (t.kind == Token::Kind::kNot) {
      Take();
      ASSIGN_OR_RETURN(int operand, ParseNot());
      return Add({WhenExpr::Node::Kind::kNot, CompareOp::kEq, operand, -1, "", ""});
    }
    if (t.kind == Token::Kind::kLParen) {
      const size_t open_column = Take().column;
      ASSIGN_OR_RETURN(int inner, ParseOr());
      const Token& close = Peek();
      if (close.kind != Token::Kind::kRParen) {
        return Err(
            ColumnError(close.column, fmt::format("expected '&&', '||' or ')' to close '(' at column {}, found {}",
                                                  open_column, Describe(close))));
      }
      Take();
      return inner;
    }
    if (t.kind != Token::Kind::kValue) {
      return Err(ColumnError(t.column, fmt::format("expected a value, '!' or '(', found {}", Describe(t))));
    }
    const Token& left = Take();
    if (Peek().kind != Token::Kind::kCompare) {
      return Add({WhenExpr::Node::Kind::kValue, CompareOp::kEq, -1, -1, left.value, ""});
    }
    const Token& op = Take();
    const Token& right = Peek();
    if (right.kind != Token::Kind::kValue) {
      return Err(
          ColumnError(right.column, fmt::format("expected a value after '{}', found {}", op.spelled, Describe(right))));
    }
    Take();
    return Add({WhenExpr::Node::Kind::kCompare, op.op, -1, -1, left.value, right.value});
  }

  std::vector<Token> tokens_;
  size_t pos_ = 0;
  std::vector<WhenExpr::Node>& nodes_;
};

std::optional<double> AsNumber(std::string_view s) {
  double v = 0;
  auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (s.empty() || ec != std::errc() || end != s.data() + s.size() || !std::isfinite(v)) return std::nullopt;
  return v;
}

bool Compare(CompareOp op, const std::string& a, const std::string& b) {
  const std::optional<double> x = AsNumber(a);
  const std::optional<double> y = AsNumber(b);
  // Numbers compare as numbers (both finite, so never unordered); else bytes.
  const std::partial_ordering order = x && y ? (*x <=> *y) : (a.compare(b) <=> 0);
  switch (op) {
    case CompareOp::kEq: return order == 0;
    case CompareOp::kNe: return order != 0;
    case CompareOp::kLt: return order < 0;
    case CompareOp::kLe: return order <= 0;
    case CompareOp::kGt: return order > 0;
    case CompareOp::kGe: return order >= 0;
  }
  return false;
}

std::string Lower(std::string s) {
  for (char& c : s) c = static_cast<char>(c >= 'A' && c <= 'Z' ? c - 'A' + 'a' : c);
  return s;
}

}  // namespace

Result<WhenExpr> ParseWhen(std::string_view text) {
  ASSIGN_OR_RETURN(std::vector<Token> tokens, Lex(text));
  WhenExpr expr;
  expr.text_ = std::string(text);
  for (const Token& t : tokens) {
    if (t.kind != Token::Kind::kValue) continue;
    for (const ReferenceSpan& span : FindReferences(t.value)) expr.references_.emplace_back(span.inner);
  }
  Parser parser(std::move(tokens), expr.nodes_);
  ASSIGN_OR_RETURN(expr.root_, parser.ParseTop());
  return expr;
}

Result<bool> WhenExpr::Evaluate(const Bindings& bindings) const { return EvaluateNode(root_, bindings); }

Result<bool> WhenExpr::EvaluateNode(int index, const Bindings& bindings) const {
  const Node& n = nodes_[static_cast<size_t>(index)];
  switch (n.kind) {
    case Node::Kind::kOr: {
      ASSIGN_OR_RETURN(bool lhs, EvaluateNode(n.lhs, bindings));
      if (lhs) return true;
      return EvaluateNode(n.rhs, bindings);
    }
    case Node::Kind::kAnd: {
      ASSIGN_OR_RETURN(bool lhs, EvaluateNode(n.lhs, bindings));
      if (!lhs) return false;
      return EvaluateNode(n.rhs, bindings);
    }
    case Node::Kind::kNot: {
      ASSIGN_OR_RETURN(bool operand, EvaluateNode(n.lhs, bindings));
      return !operand;
    }
    case Node::Kind::kCompare: {
      ASSIGN_OR_RETURN(std::string a, SubstituteAll(n.left, bindings));
      ASSIGN_OR_RETURN(std::string b, SubstituteAll(n.right, bindings));
      return Compare(n.op, a, b);
    }
    case Node::Kind::kValue: {
      ASSIGN_OR_RETURN(std::string v, SubstituteAll(n.left, bindings));
      const std::string lower = Lower(v);
      if (lower == "true") return true;
      if (lower == "false") return false;
      if (v == n.left) return Err(Status::InvalidArgument(fmt::format("\"{}\" is not true or false", v)));
      return Err(Status::InvalidArgument(fmt::format("{} is \"{}\", not true or false", n.left, v)));
    }
  }
  return false;
}

Result<bool> EvaluateWhen(std::string_view text, const Bindings& bindings) {
  ASSIGN_OR_RETURN(WhenExpr expr, ParseWhen(text));
  return expr.Evaluate(bindings);
}

}  // namespace tessera::pipeline
