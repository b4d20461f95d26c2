// Recursive-descent parsing after jinja2's Parser: parse_condexpr > or > and > not > compare >
// math1 (+ -) > concat (~) > math2 (* / // %) > pow > unary (- +, then postfix and filters/tests).

#include <charconv>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <utility>

#include "parser_internal.hpp"

namespace eredu::jinja::detail {

// ---- expressions ----

// An expression, or several separated by commas (a tuple without parentheses).
Result<ExprPtr> Parser::parse_tuple(bool with_condexpr) {
  const Token& at = cur();
  EREDU_TRY(ExprPtr first, parse_expression(with_condexpr));
  if (!is_op(",")) return first;
  auto tuple = node(Expr::Kind::kTuple, at);
  tuple->children.push_back(std::move(first));
  while (skip_op(",")) {
    if (cur().kind == TokenKind::kBlockEnd || cur().kind == TokenKind::kVariableEnd) break;
    EREDU_TRY(ExprPtr item, parse_expression(with_condexpr));
    tuple->children.push_back(std::move(item));
  }
  return tuple;
}

Result<ExprPtr> Parser::parse_expression(bool with_condexpr) {
  if (with_condexpr) return parse_condexpr();
  return parse_or();
}

Result<ExprPtr> Parser::parse_condexpr() {
  const Token& at = cur();
  EREDU_TRY_VOID(enter(at));
  Leave leave{depth_};
  EREDU_TRY(ExprPtr expr, parse_or());
  while (skip_name("if")) {
    auto c = node(Expr::Kind::kCondition, at);
    EREDU_TRY(ExprPtr cond, parse_or());
    ExprPtr otherwise;
    if (skip_name("else")) {
      EREDU_TRY(otherwise, parse_condexpr());
    }
    c->children.push_back(std::move(expr));
    c->children.push_back(std::move(cond));
    c->children.push_back(std::move(otherwise));
    expr = std::move(c);
  }
  return expr;
}

ExprPtr Parser::binary(const Token& at, std::string op, ExprPtr left, ExprPtr right) {
  auto b = node(Expr::Kind::kBinary, at);
  b->name = std::move(op);
  b->children.push_back(std::move(left));
  b->children.push_back(std::move(right));
  return b;
}

Result<ExprPtr> Parser::parse_or() {
  EREDU_TRY(ExprPtr left, parse_and());
  while (is_name("or")) {
    const Token& at = cur();
    advance();
    EREDU_TRY(ExprPtr right, parse_and());
    left = binary(at, "or", std::move(left), std::move(right));
  }
  return left;
}

Result<ExprPtr> Parser::parse_and() {
  EREDU_TRY(ExprPtr left, parse_not());
  while (is_name("and")) {
    const Token& at = cur();
    advance();
    EREDU_TRY(ExprPtr right, parse_not());
    left = binary(at, "and", std::move(left), std::move(right));
  }
  return left;
}

Result<ExprPtr> Parser::parse_not() {
  if (is_name("not")) {
    const Token& at = cur();
    EREDU_TRY_VOID(enter(at));
    Leave leave{depth_};
    advance();
    auto n = node(Expr::Kind::kUnary, at);
    n->name = "not";
    EREDU_TRY(ExprPtr operand, parse_not());
    n->children.push_back(std::move(operand));
    return n;
  }
  return parse_compare();
}

Result<ExprPtr> Parser::parse_compare() {
  const Token& at = cur();
  EREDU_TRY(ExprPtr first, parse_math1());
  ExprPtr cmp;
  while (true) {
    std::string op;
    if (cur().kind == TokenKind::kOperator &&
        (cur().text == "==" || cur().text == "!=" || cur().text == "<" || cur().text == "<=" ||
         cur().text == ">" || cur().text == ">=")) {
      op = cur().text;
      advance();
    } else if (is_name("in")) {
      op = "in";
      advance();
    } else if (is_name("not") && peek().kind == TokenKind::kName && peek().text == "in") {
      op = "not in";
      advance();
      advance();
    } else {
      break;
    }
    if (!cmp) {
      cmp = node(Expr::Kind::kCompare, at);
      cmp->children.push_back(std::move(first));
    }
    EREDU_TRY(ExprPtr right, parse_math1());
    cmp->ops.push_back(std::move(op));
    cmp->children.push_back(std::move(right));
  }
  return cmp ? std::move(cmp) : std::move(first);
}

Result<ExprPtr> Parser::parse_math1() {
  EREDU_TRY(ExprPtr left, parse_concat());
  while (is_op("+") || is_op("-")) {
    const Token& at = cur();
    std::string op = at.text;
    advance();
    EREDU_TRY(ExprPtr right, parse_concat());
    left = binary(at, std::move(op), std::move(left), std::move(right));
  }
  return left;
}

Result<ExprPtr> Parser::parse_concat() {
  EREDU_TRY(ExprPtr left, parse_math2());
  while (is_op("~")) {
    const Token& at = cur();
    advance();
    EREDU_TRY(ExprPtr right, parse_math2());
    left = binary(at, "~", std::move(left), std::move(right));
  }
  return left;
}

Result<ExprPtr> Parser::parse_math2() {
  EREDU_TRY(ExprPtr left, parse_pow());
  while (is_op("*") || is_op("/") || is_op("//") || is_op("%")) {
    const Token& at = cur();
    std::string op = at.text;
    advance();
    EREDU_TRY(ExprPtr right, parse_pow());
    left = binary(at, std::move(op), std::move(left), std::move(right));
  }
  return left;
}

Result<ExprPtr> Parser::parse_pow() {
  EREDU_TRY(ExprPtr left, parse_unary(true));
  while (is_op("**")) {
    const Token& at = cur();
    advance();
    EREDU_TRY(ExprPtr right, parse_unary(true));
    left = binary(at, "**", std::move(left), std::move(right));
  }
  return left;
}

Result<ExprPtr> Parser::parse_unary(bool with_filter) {
  const Token& at = cur();
  EREDU_TRY_VOID(enter(at));
  Leave leave{depth_};
  ExprPtr expr;
  if (is_op("-") || is_op("+")) {
    auto u = node(Expr::Kind::kUnary, at);
    u->name = at.text;
    advance();
    EREDU_TRY(ExprPtr operand, parse_unary(false));
    u->children.push_back(std::move(operand));
    expr = std::move(u);
  } else {
    EREDU_TRY(expr, parse_primary());
  }
  EREDU_TRY(expr, parse_postfix(std::move(expr)));
  if (with_filter) {
    EREDU_TRY(expr, parse_filter_expr(std::move(expr)));
  }
  return expr;
}

Result<ExprPtr> Parser::parse_primary() {
  const Token& t = cur();
  switch (t.kind) {
    case TokenKind::kName: {
      advance();
      auto e = node(Expr::Kind::kLiteral, t);
      if (t.text == "true" || t.text == "True") {
        e->value = Value(true);
      } else if (t.text == "false" || t.text == "False") {
        e->value = Value(false);
      } else if (t.text == "none" || t.text == "None") {
        e->value = Value::none();
      } else {
        e->kind = Expr::Kind::kName;
        e->name = t.text;
      }
      return e;
    }
    case TokenKind::kString: {
      std::string text;
      while (cur().kind == TokenKind::kString) {
        text += cur().text;
        advance();
      }
      auto e = node(Expr::Kind::kLiteral, t);
      e->value = Value(std::move(text));
      return e;
    }
    case TokenKind::kInteger: {
      advance();
      auto e = node(Expr::Kind::kLiteral, t);
      std::int64_t v = 0;
      const auto [end, ec] = std::from_chars(t.text.data(), t.text.data() + t.text.size(), v);
      if (ec != std::errc() || end != t.text.data() + t.text.size()) {
        return error(t, "integer literal " + t.text + " does not fit in 64 bits");
      }
      e->value = Value(v);
      return e;
    }
    case TokenKind::kFloat: {
      advance();
      auto e = node(Expr::Kind::kLiteral, t);
      e->value = Value(std::strtod(t.text.c_str(), nullptr));
      return e;
    }
    case TokenKind::kOperator: {
      if (t.text == "(") {
        advance();
        if (skip_op(")")) {
          auto e = node(Expr::Kind::kTuple, t);
          return e;
        }
        EREDU_TRY(ExprPtr first, parse_expression(true));
        if (skip_op(")")) return first;
        if (!is_op(",")) return unexpected("')' or ','");
        auto tuple = node(Expr::Kind::kTuple, t);
        tuple->children.push_back(std::move(first));
        while (skip_op(",")) {
          if (is_op(")")) break;
          EREDU_TRY(ExprPtr item, parse_expression(true));
          tuple->children.push_back(std::move(item));
        }
        EREDU_TRY_VOID(expect_op(")"));
        return tuple;
      }
      if (t.text == "[") {
        advance();
        auto list = node(Expr::Kind::kList, t);
        while (!is_op("]")) {
          if (!list->children.empty()) EREDU_TRY_VOID(expect_op(","));
          if (is_op("]")) break;
          EREDU_TRY(ExprPtr item, parse_expression(true));
          list->children.push_back(std::move(item));
        }
        advance();
        return list;
      }
      if (t.text == "{") {
        advance();
        auto dict = node(Expr::Kind::kDict, t);
        while (!is_op("}")) {
          if (!dict->children.empty()) EREDU_TRY_VOID(expect_op(","));
          if (is_op("}")) break;
          EREDU_TRY(ExprPtr key, parse_expression(true));
          EREDU_TRY_VOID(expect_op(":"));
          EREDU_TRY(ExprPtr value, parse_expression(true));
          dict->children.push_back(std::move(key));
          dict->children.push_back(std::move(value));
        }
        advance();
        return dict;
      }
      break;
    }
    default:
      break;
  }
  return unexpected("an expression");
}

Result<ExprPtr> Parser::parse_postfix(ExprPtr expr) {
  while (true) {
    const Token& at = cur();
    if (is_op(".")) {
      advance();
      if (cur().kind == TokenKind::kName) {
        auto g = node(Expr::Kind::kGetAttr, at);
        g->name = cur().text;
        g->children.push_back(std::move(expr));
        advance();
        expr = std::move(g);
      } else if (cur().kind == TokenKind::kInteger) {
        auto g = node(Expr::Kind::kGetItem, at);
        auto index = node(Expr::Kind::kLiteral, cur());
        index->value =
            Value(static_cast<std::int64_t>(std::strtoll(cur().text.c_str(), nullptr, 10)));
        g->children.push_back(std::move(expr));
        g->children.push_back(std::move(index));
        advance();
        expr = std::move(g);
      } else {
        return unexpected("an attribute name");
      }
    } else if (is_op("[")) {
      advance();
      EREDU_TRY(expr, parse_subscript(std::move(expr), at));
    } else if (is_op("(")) {
      EREDU_TRY(expr, parse_call(std::move(expr)));
    } else {
      return expr;
    }
  }
}

Result<ExprPtr> Parser::parse_subscript(ExprPtr base, const Token& at) {
  ExprPtr start;
  if (!is_op(":")) {
    EREDU_TRY(start, parse_expression(true));
    if (skip_op("]")) {
      auto g = node(Expr::Kind::kGetItem, at);
      g->children.push_back(std::move(base));
      g->children.push_back(std::move(start));
      return g;
    }
    if (!is_op(":")) return unexpected("']' or ':'");
  }
  advance();  // ':'
  ExprPtr stop;
  ExprPtr step;
  if (!is_op("]") && !is_op(":")) {
    EREDU_TRY(stop, parse_expression(true));
  }
  if (skip_op(":")) {
    if (!is_op("]")) {
      EREDU_TRY(step, parse_expression(true));
    }
  }
  EREDU_TRY_VOID(expect_op("]"));
  auto s = node(Expr::Kind::kSlice, at);
  s->children.push_back(std::move(base));
  s->children.push_back(std::move(start));
  s->children.push_back(std::move(stop));
  s->children.push_back(std::move(step));
  return s;
}

// Arguments after '(' into `call` (children[1..] and keywords).
Result<void> Parser::parse_arguments(Expr& call) {
  EREDU_TRY_VOID(expect_op("("));
  bool first = true;
  while (!is_op(")")) {
    if (!first) EREDU_TRY_VOID(expect_op(","));
    first = false;
    if (is_op(")")) break;
    if (cur().kind == TokenKind::kName && peek().kind == TokenKind::kOperator &&
        peek().text == "=") {
      std::string key = cur().text;
      advance();
      advance();
      EREDU_TRY(ExprPtr value, parse_expression(true));
      call.keywords.emplace_back(std::move(key), std::move(value));
    } else {
      if (!call.keywords.empty()) {
        return error(cur(), "positional argument after keyword argument");
      }
      EREDU_TRY(ExprPtr value, parse_expression(true));
      call.children.push_back(std::move(value));
    }
  }
  advance();
  return ok();
}

Result<ExprPtr> Parser::parse_call(ExprPtr callee) {
  auto c = node(Expr::Kind::kCall, cur());
  c->line = callee->line;  // errors point at what was called, not at its '('
  c->column = callee->column;
  c->children.push_back(std::move(callee));
  EREDU_TRY_VOID(parse_arguments(*c));
  return c;
}

Result<ExprPtr> Parser::parse_filter_expr(ExprPtr expr) {
  while (true) {
    if (is_op("|")) {
      EREDU_TRY(expr, parse_filter_chain(std::move(expr)));
    } else if (is_name("is")) {
      EREDU_TRY(expr, parse_test(std::move(expr)));
    } else if (is_op("(")) {
      EREDU_TRY(expr, parse_call(std::move(expr)));
    } else {
      return expr;
    }
  }
}

// `| f(args) | g ...` applied to `input` (null in filter blocks and set blocks).
Result<ExprPtr> Parser::parse_filter_chain(ExprPtr input, bool leading_bar) {
  bool first = true;
  while (is_op("|") || (first && !leading_bar)) {
    if (!(first && !leading_bar)) advance();
    first = false;
    const Token& at = cur();
    auto f = node(Expr::Kind::kFilter, at);
    EREDU_TRY(f->name, expect_name());
    while (is_op(".") && peek().kind == TokenKind::kName) {
      advance();
      f->name += "." + cur().text;
      advance();
    }
    f->children.push_back(std::move(input));
    if (is_op("(")) EREDU_TRY_VOID(parse_arguments(*f));
    input = std::move(f);
  }
  return input;
}

Result<ExprPtr> Parser::parse_test(ExprPtr subject) {
  const Token& at = cur();
  advance();  // 'is'
  auto t = node(Expr::Kind::kTest, at);
  if (skip_name("not")) t->negated = true;
  EREDU_TRY(t->name, expect_name());
  while (is_op(".") && peek().kind == TokenKind::kName) {
    advance();
    t->name += "." + cur().text;
    advance();
  }
  t->children.push_back(std::move(subject));
  if (is_op("(")) {
    EREDU_TRY_VOID(parse_arguments(*t));
  } else {
    const TokenKind k = cur().kind;
    const bool starts_primary = k == TokenKind::kName || k == TokenKind::kString ||
                                k == TokenKind::kInteger || k == TokenKind::kFloat || is_op("(") ||
                                is_op("[") || is_op("{");
    if (starts_primary && !is_name("else") && !is_name("or") && !is_name("and")) {
      if (is_name("is")) return error(cur(), "tests cannot be chained with 'is'");
      EREDU_TRY(ExprPtr arg, parse_primary());
      EREDU_TRY(arg, parse_postfix(std::move(arg)));
      t->children.push_back(std::move(arg));
    }
  }
  return t;
}

}  // namespace eredu::jinja::detail
