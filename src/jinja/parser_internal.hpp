#pragma once
// The parser's class, shared by the three files that implement it. Only they include this; the
// interface is parser.hpp.
//
// The split follows the grammar. Statements call into expressions (parse_tuple,
// parse_expression, parse_filter_chain) and expressions never call back into statements, so:
//   parser.cpp             the entry point and what both sides use: token descriptions, syntax
//                          errors, the expect_* steps and the nesting limit;
//   parser_statements.cpp  template text, {{ output }} and the {% tags %};
//   parser_expressions.cpp expressions, with jinja2's operator precedence.
// The small token helpers stay inline here, as they were when the class was one file.

#include <cstddef>
#include <initializer_list>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "ast.hpp"
#include "eredu/core/result.hpp"
#include "lexer.hpp"

namespace eredu::jinja::detail {

class Parser {
 public:
  Parser(const std::vector<Token>& tokens, std::size_t max_depth)
      : tokens_(tokens), max_depth_(max_depth) {}

  Result<Body> run();

 private:
  // ---- token helpers ----
  const Token& cur() const { return tokens_[pos_]; }
  const Token& peek(std::size_t n = 1) const {
    return tokens_[pos_ + n < tokens_.size() ? pos_ + n : tokens_.size() - 1];
  }
  void advance() {
    if (pos_ + 1 < tokens_.size()) ++pos_;
  }
  bool is_op(std::string_view op) const {
    return cur().kind == TokenKind::kOperator && cur().text == op;
  }
  bool is_name(std::string_view name) const {
    return cur().kind == TokenKind::kName && cur().text == name;
  }
  bool skip_op(std::string_view op) {
    if (!is_op(op)) return false;
    advance();
    return true;
  }
  bool skip_name(std::string_view name) {
    if (!is_name(name)) return false;
    advance();
    return true;
  }

  // ---- errors, expectations and the nesting limit (parser.cpp) ----

  static std::string describe(const Token& t);
  Unexpected<Error> error(const Token& at, const std::string& message) const;
  Unexpected<Error> unexpected(const std::string& expected) const;

  Result<void> expect_op(std::string_view op);
  Result<void> expect_block_end(std::string_view tag);
  Result<std::string> expect_name();

  Result<void> enter(const Token& at);
  struct Leave {
    std::size_t& depth;
    ~Leave() { --depth; }
  };

  ExprPtr node(Expr::Kind kind, const Token& at) const {
    auto e = std::make_unique<Expr>();
    e->kind = kind;
    e->line = at.line;
    e->column = at.column;
    return e;
  }
  StmtPtr stmt(Stmt::Kind kind, const Token& at) const {
    auto s = std::make_unique<Stmt>();
    s->kind = kind;
    s->line = at.line;
    s->column = at.column;
    return s;
  }

  // ---- statements (parser_statements.cpp) ----

  Result<Body> parse_body(std::initializer_list<std::string_view> ends, std::string& found);
  Result<StmtPtr> parse_statement(const Token& begin,
                                  std::initializer_list<std::string_view> outer_ends);
  Result<StmtPtr> parse_if(const Token& begin);
  Result<StmtPtr> parse_for(const Token& begin);
  Result<StmtPtr> parse_set(const Token& begin);
  Result<std::vector<Parameter>> parse_parameters();
  Result<StmtPtr> parse_macro(const Token& begin);
  Result<StmtPtr> parse_call_block(const Token& begin);
  Result<StmtPtr> parse_filter_block(const Token& begin);
  Result<StmtPtr> parse_scope(const Token& begin, const std::string& tag);

  // ---- expressions (parser_expressions.cpp) ----

  Result<ExprPtr> parse_tuple(bool with_condexpr);
  Result<ExprPtr> parse_expression(bool with_condexpr);
  Result<ExprPtr> parse_condexpr();
  ExprPtr binary(const Token& at, std::string op, ExprPtr left, ExprPtr right);
  Result<ExprPtr> parse_or();
  Result<ExprPtr> parse_and();
  Result<ExprPtr> parse_not();
  Result<ExprPtr> parse_compare();
  Result<ExprPtr> parse_math1();
  Result<ExprPtr> parse_concat();
  Result<ExprPtr> parse_math2();
  Result<ExprPtr> parse_pow();
  Result<ExprPtr> parse_unary(bool with_filter);
  Result<ExprPtr> parse_primary();
  Result<ExprPtr> parse_postfix(ExprPtr expr);
  Result<ExprPtr> parse_subscript(ExprPtr base, const Token& at);
  Result<void> parse_arguments(Expr& call);
  Result<ExprPtr> parse_call(ExprPtr callee);
  Result<ExprPtr> parse_filter_expr(ExprPtr expr);
  Result<ExprPtr> parse_filter_chain(ExprPtr input, bool leading_bar = true);
  Result<ExprPtr> parse_test(ExprPtr subject);

  const std::vector<Token>& tokens_;
  std::size_t pos_ = 0;
  std::size_t max_depth_;
  std::size_t depth_ = 0;
  std::size_t loop_depth_ = 0;
};

}  // namespace eredu::jinja::detail
