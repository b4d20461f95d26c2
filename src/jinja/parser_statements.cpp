// The parser's statement half: template text, {{ output }} and the {% tags %}. Expressions
// inside them come from parser_expressions.cpp.

#include <initializer_list>
#include <string>
#include <string_view>
#include <utility>

#include "parser_internal.hpp"

namespace eredu::jinja::detail {

// ---- statements ----

// Statements up to a {% tag %} named in `ends` (consumed up to the tag name, which is left in
// `found`); with no ends, up to the end of the template.
Result<Body> Parser::parse_body(std::initializer_list<std::string_view> ends, std::string& found) {
  Body body;
  while (true) {
    const Token& t = cur();
    switch (t.kind) {
      case TokenKind::kText: {
        auto s = stmt(Stmt::Kind::kText, t);
        s->text = t.text;
        body.push_back(std::move(s));
        advance();
        break;
      }
      case TokenKind::kVariableBegin: {
        auto s = stmt(Stmt::Kind::kOutput, t);
        advance();
        EREDU_TRY(s->expr, parse_tuple(true));
        if (cur().kind != TokenKind::kVariableEnd) return unexpected("'}}'");
        advance();
        body.push_back(std::move(s));
        break;
      }
      case TokenKind::kBlockBegin: {
        const Token& name = peek();
        if (name.kind == TokenKind::kName) {
          for (std::string_view end : ends) {
            if (name.text == end) {
              found = name.text;
              advance();
              advance();
              return body;
            }
          }
        }
        advance();
        EREDU_TRY(StmtPtr s, parse_statement(t, ends));
        body.push_back(std::move(s));
        break;
      }
      case TokenKind::kEnd: {
        if (ends.size() != 0) {
          std::string list;
          for (std::string_view end : ends) {
            list += list.empty() ? "" : " or ";
            list += repr_quoted(end);
          }
          return error(t, "unexpected end of template, expected " + list);
        }
        return body;
      }
      default:
        return error(t, "unexpected " + describe(t));
    }
  }
}

Result<StmtPtr> Parser::parse_statement(const Token& begin,
                                        std::initializer_list<std::string_view> outer_ends) {
  EREDU_TRY_VOID(enter(begin));
  Leave leave{depth_};
  if (cur().kind != TokenKind::kName) return unexpected("a tag name");
  const Token& tag = cur();
  const std::string name = tag.text;
  advance();
  if (name == "if") return parse_if(begin);
  if (name == "for") return parse_for(begin);
  if (name == "set") return parse_set(begin);
  if (name == "macro") return parse_macro(begin);
  if (name == "call") return parse_call_block(begin);
  if (name == "filter") return parse_filter_block(begin);
  if (name == "generation" || name == "with") return parse_scope(begin, name);
  if (name == "break" || name == "continue") {
    if (loop_depth_ == 0) {
      return error(tag, repr_quoted(name) + " outside of a loop");
    }
    EREDU_TRY_VOID(expect_block_end(name));
    return stmt(name == "break" ? Stmt::Kind::kBreak : Stmt::Kind::kContinue, begin);
  }
  if (name == "include" || name == "import" || name == "from" || name == "extends") {
    return error(tag, repr_quoted(name) +
                          " is not available: a sandboxed template cannot load other templates");
  }
  std::string message = "unknown tag '" + name + "'";
  if (outer_ends.size() != 0) {
    message += " (the innermost open block expects '" + std::string(*outer_ends.begin()) + "')";
  }
  return error(tag, message);
}

Result<StmtPtr> Parser::parse_if(const Token& begin) {
  auto s = stmt(Stmt::Kind::kIf, begin);
  std::string found = "if";
  while (true) {
    EREDU_TRY(ExprPtr cond, parse_expression(true));
    EREDU_TRY_VOID(expect_block_end(found));
    EREDU_TRY(Body body, parse_body({"elif", "else", "endif"}, found));
    s->conditions.push_back(std::move(cond));
    s->bodies.push_back(std::move(body));
    if (found == "elif") continue;
    if (found == "else") {
      EREDU_TRY_VOID(expect_block_end("else"));
      EREDU_TRY(s->else_body, parse_body({"endif"}, found));
    }
    EREDU_TRY_VOID(expect_block_end("endif"));
    return s;
  }
}

Result<StmtPtr> Parser::parse_for(const Token& begin) {
  auto s = stmt(Stmt::Kind::kFor, begin);
  const bool paren = skip_op("(");
  do {
    EREDU_TRY(std::string target, expect_name());
    s->targets.push_back(std::move(target));
  } while (skip_op(","));
  if (paren) EREDU_TRY_VOID(expect_op(")"));
  if (!skip_name("in")) return unexpected("'in'");
  EREDU_TRY(s->expr, parse_tuple(false));
  if (skip_name("recursive")) s->recursive = true;
  if (skip_name("if")) {
    EREDU_TRY(s->condition, parse_expression(true));
  }
  EREDU_TRY_VOID(expect_block_end("for"));
  ++loop_depth_;
  std::string found;
  auto body = parse_body({"else", "endfor"}, found);
  --loop_depth_;
  if (!body) return Unexpected(std::move(body).error());
  s->body = std::move(body).value();
  if (found == "else") {
    EREDU_TRY_VOID(expect_block_end("else"));
    EREDU_TRY(s->else_body, parse_body({"endfor"}, found));
  }
  EREDU_TRY_VOID(expect_block_end("endfor"));
  return s;
}

Result<StmtPtr> Parser::parse_set(const Token& begin) {
  const Token& first = cur();
  EREDU_TRY(std::string name, expect_name());
  ExprPtr target;
  if (is_op(".")) {
    advance();
    auto attr = node(Expr::Kind::kGetAttr, first);
    auto base = node(Expr::Kind::kName, first);
    base->name = name;
    attr->children.push_back(std::move(base));
    EREDU_TRY(attr->name, expect_name());
    target = std::move(attr);
  } else if (is_op(",")) {
    target = node(Expr::Kind::kTuple, first);
    auto n = node(Expr::Kind::kName, first);
    n->name = name;
    target->children.push_back(std::move(n));
    while (skip_op(",")) {
      const Token& at = cur();
      auto item = node(Expr::Kind::kName, at);
      EREDU_TRY(item->name, expect_name());
      target->children.push_back(std::move(item));
    }
  } else {
    target = node(Expr::Kind::kName, first);
    target->name = name;
  }
  if (skip_op("=")) {
    auto s = stmt(Stmt::Kind::kSet, begin);
    s->target = std::move(target);
    EREDU_TRY(s->expr, parse_tuple(true));
    EREDU_TRY_VOID(expect_block_end("set"));
    return s;
  }
  if (target->kind != Expr::Kind::kName) return unexpected("'='");
  auto s = stmt(Stmt::Kind::kSetBlock, begin);
  s->text = name;
  if (is_op("|")) {
    EREDU_TRY(s->expr, parse_filter_chain(nullptr));
  }
  EREDU_TRY_VOID(expect_block_end("set"));
  std::string found;
  EREDU_TRY(s->body, parse_body({"endset"}, found));
  EREDU_TRY_VOID(expect_block_end("endset"));
  return s;
}

Result<std::vector<Parameter>> Parser::parse_parameters() {
  std::vector<Parameter> params;
  EREDU_TRY_VOID(expect_op("("));
  while (!is_op(")")) {
    if (!params.empty()) EREDU_TRY_VOID(expect_op(","));
    if (is_op(")")) break;
    Parameter p;
    EREDU_TRY(p.name, expect_name());
    if (skip_op("=")) {
      EREDU_TRY(p.default_value, parse_expression(true));
    }
    params.push_back(std::move(p));
  }
  advance();
  return params;
}

Result<StmtPtr> Parser::parse_macro(const Token& begin) {
  auto s = stmt(Stmt::Kind::kMacro, begin);
  EREDU_TRY(s->text, expect_name());
  EREDU_TRY(s->params, parse_parameters());
  EREDU_TRY_VOID(expect_block_end("macro"));
  const std::size_t saved_loops = loop_depth_;
  loop_depth_ = 0;
  std::string found;
  auto body = parse_body({"endmacro"}, found);
  loop_depth_ = saved_loops;
  if (!body) return Unexpected(std::move(body).error());
  s->body = std::move(body).value();
  if (cur().kind == TokenKind::kName) advance();  // {% endmacro name %}
  EREDU_TRY_VOID(expect_block_end("endmacro"));
  return s;
}

Result<StmtPtr> Parser::parse_call_block(const Token& begin) {
  auto s = stmt(Stmt::Kind::kCallBlock, begin);
  if (is_op("(")) {
    EREDU_TRY(s->params, parse_parameters());
  }
  EREDU_TRY(s->expr, parse_expression(true));
  if (s->expr->kind != Expr::Kind::kCall) return error(begin, "'call' expects a macro call");
  EREDU_TRY_VOID(expect_block_end("call"));
  std::string found;
  EREDU_TRY(s->body, parse_body({"endcall"}, found));
  EREDU_TRY_VOID(expect_block_end("endcall"));
  return s;
}

Result<StmtPtr> Parser::parse_filter_block(const Token& begin) {
  auto s = stmt(Stmt::Kind::kFilterBlock, begin);
  EREDU_TRY(s->expr, parse_filter_chain(nullptr, /*leading_bar=*/false));
  EREDU_TRY_VOID(expect_block_end("filter"));
  std::string found;
  EREDU_TRY(s->body, parse_body({"endfilter"}, found));
  EREDU_TRY_VOID(expect_block_end("endfilter"));
  return s;
}

Result<StmtPtr> Parser::parse_scope(const Token& begin, const std::string& tag) {
  auto s = stmt(Stmt::Kind::kScope, begin);
  if (tag == "with") {
    while (cur().kind == TokenKind::kName) {
      Parameter p;
      EREDU_TRY(p.name, expect_name());
      EREDU_TRY_VOID(expect_op("="));
      EREDU_TRY(p.default_value, parse_expression(true));
      s->params.push_back(std::move(p));
      if (!skip_op(",")) break;
    }
  }
  EREDU_TRY_VOID(expect_block_end(tag));
  std::string found;
  const std::string end = "end" + tag;
  EREDU_TRY(s->body, parse_body({end}, found));
  EREDU_TRY_VOID(expect_block_end(end));
  return s;
}

}  // namespace eredu::jinja::detail
