// Recursive-descent parsing after jinja2's Parser: parse_condexpr > or > and > not > compare >
// math1 (+ -) > concat (~) > math2 (* / // %) > pow > unary (- +, then postfix and filters/tests).

#include "parser.hpp"

#include <charconv>
#include <cmath>
#include <cstdlib>
#include <initializer_list>
#include <string>

namespace eredu::jinja::detail {
namespace {

class Parser {
 public:
  Parser(const std::vector<Token>& tokens, std::size_t max_depth)
      : tokens_(tokens), max_depth_(max_depth) {}

  Result<Body> run() {
    std::string found;
    EREDU_TRY(Body body, parse_body({}, found));
    return body;
  }

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

  static std::string describe(const Token& t) {
    switch (t.kind) {
      case TokenKind::kText:
        return "text";
      case TokenKind::kVariableBegin:
        return "'{{'";
      case TokenKind::kVariableEnd:
        return "end of print statement '}}'";
      case TokenKind::kBlockBegin:
        return "'{%'";
      case TokenKind::kBlockEnd:
        return "end of statement block '%}'";
      case TokenKind::kName:
        return "name '" + t.text + "'";
      case TokenKind::kString:
        return "string literal";
      case TokenKind::kInteger:
      case TokenKind::kFloat:
        return "number " + t.text;
      case TokenKind::kOperator:
        return repr_quoted(t.text);
      case TokenKind::kEnd:
        return "end of template";
    }
    return "token";
  }

  Unexpected<Error> error(const Token& at, const std::string& message) const {
    return fail(ErrorCode::kInvalidArgument,
                location_prefix(at.line, at.column) + "syntax error: " + message);
  }
  Unexpected<Error> unexpected(const std::string& expected) const {
    return error(cur(), "expected " + expected + ", got " + describe(cur()));
  }

  Result<void> expect_op(std::string_view op) {
    if (!skip_op(op)) return unexpected(repr_quoted(op));
    return ok();
  }
  Result<void> expect_block_end(std::string_view tag) {
    if (cur().kind != TokenKind::kBlockEnd) {
      return unexpected("end of '" + std::string(tag) + "' tag ('%}')");
    }
    advance();
    return ok();
  }
  Result<std::string> expect_name() {
    if (cur().kind != TokenKind::kName) return unexpected("a name");
    std::string name = cur().text;
    advance();
    return name;
  }

  Result<void> enter(const Token& at) {
    if (++depth_ > max_depth_) {
      return fail(ErrorCode::kLimitExceeded,
                  location_prefix(at.line, at.column) + "template nesting deeper than " +
                      std::to_string(max_depth_) + " (TemplateLimits::max_nesting_depth)");
    }
    return ok();
  }
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

  // ---- statements ----

  // Statements up to a {% tag %} named in `ends` (consumed up to the tag name, which is left in
  // `found`); with no ends, up to the end of the template.
  Result<Body> parse_body(std::initializer_list<std::string_view> ends, std::string& found) {
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

  Result<StmtPtr> parse_statement(const Token& begin,
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

  Result<StmtPtr> parse_if(const Token& begin) {
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

  Result<StmtPtr> parse_for(const Token& begin) {
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

  Result<StmtPtr> parse_set(const Token& begin) {
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

  Result<std::vector<Parameter>> parse_parameters() {
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

  Result<StmtPtr> parse_macro(const Token& begin) {
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

  Result<StmtPtr> parse_call_block(const Token& begin) {
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

  Result<StmtPtr> parse_filter_block(const Token& begin) {
    auto s = stmt(Stmt::Kind::kFilterBlock, begin);
    EREDU_TRY(s->expr, parse_filter_chain(nullptr, /*leading_bar=*/false));
    EREDU_TRY_VOID(expect_block_end("filter"));
    std::string found;
    EREDU_TRY(s->body, parse_body({"endfilter"}, found));
    EREDU_TRY_VOID(expect_block_end("endfilter"));
    return s;
  }

  Result<StmtPtr> parse_scope(const Token& begin, const std::string& tag) {
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

  // ---- expressions ----

  // An expression, or several separated by commas (a tuple without parentheses).
  Result<ExprPtr> parse_tuple(bool with_condexpr) {
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

  Result<ExprPtr> parse_expression(bool with_condexpr) {
    if (with_condexpr) return parse_condexpr();
    return parse_or();
  }

  Result<ExprPtr> parse_condexpr() {
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

  ExprPtr binary(const Token& at, std::string op, ExprPtr left, ExprPtr right) {
    auto b = node(Expr::Kind::kBinary, at);
    b->name = std::move(op);
    b->children.push_back(std::move(left));
    b->children.push_back(std::move(right));
    return b;
  }

  Result<ExprPtr> parse_or() {
    EREDU_TRY(ExprPtr left, parse_and());
    while (is_name("or")) {
      const Token& at = cur();
      advance();
      EREDU_TRY(ExprPtr right, parse_and());
      left = binary(at, "or", std::move(left), std::move(right));
    }
    return left;
  }

  Result<ExprPtr> parse_and() {
    EREDU_TRY(ExprPtr left, parse_not());
    while (is_name("and")) {
      const Token& at = cur();
      advance();
      EREDU_TRY(ExprPtr right, parse_not());
      left = binary(at, "and", std::move(left), std::move(right));
    }
    return left;
  }

  Result<ExprPtr> parse_not() {
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

  Result<ExprPtr> parse_compare() {
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

  Result<ExprPtr> parse_math1() {
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

  Result<ExprPtr> parse_concat() {
    EREDU_TRY(ExprPtr left, parse_math2());
    while (is_op("~")) {
      const Token& at = cur();
      advance();
      EREDU_TRY(ExprPtr right, parse_math2());
      left = binary(at, "~", std::move(left), std::move(right));
    }
    return left;
  }

  Result<ExprPtr> parse_math2() {
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

  Result<ExprPtr> parse_pow() {
    EREDU_TRY(ExprPtr left, parse_unary(true));
    while (is_op("**")) {
      const Token& at = cur();
      advance();
      EREDU_TRY(ExprPtr right, parse_unary(true));
      left = binary(at, "**", std::move(left), std::move(right));
    }
    return left;
  }

  Result<ExprPtr> parse_unary(bool with_filter) {
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

  Result<ExprPtr> parse_primary() {
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

  Result<ExprPtr> parse_postfix(ExprPtr expr) {
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

  Result<ExprPtr> parse_subscript(ExprPtr base, const Token& at) {
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
  Result<void> parse_arguments(Expr& call) {
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

  Result<ExprPtr> parse_call(ExprPtr callee) {
    auto c = node(Expr::Kind::kCall, cur());
    c->line = callee->line;  // errors point at what was called, not at its '('
    c->column = callee->column;
    c->children.push_back(std::move(callee));
    EREDU_TRY_VOID(parse_arguments(*c));
    return c;
  }

  Result<ExprPtr> parse_filter_expr(ExprPtr expr) {
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
  Result<ExprPtr> parse_filter_chain(ExprPtr input, bool leading_bar = true) {
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

  Result<ExprPtr> parse_test(ExprPtr subject) {
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
                                  k == TokenKind::kInteger || k == TokenKind::kFloat ||
                                  is_op("(") || is_op("[") || is_op("{");
      if (starts_primary && !is_name("else") && !is_name("or") && !is_name("and")) {
        if (is_name("is")) return error(cur(), "tests cannot be chained with 'is'");
        EREDU_TRY(ExprPtr arg, parse_primary());
        EREDU_TRY(arg, parse_postfix(std::move(arg)));
        t->children.push_back(std::move(arg));
      }
    }
    return t;
  }

  const std::vector<Token>& tokens_;
  std::size_t pos_ = 0;
  std::size_t max_depth_;
  std::size_t depth_ = 0;
  std::size_t loop_depth_ = 0;
};

}  // namespace

Result<Body> parse(const std::vector<Token>& tokens, std::size_t max_depth) {
  return Parser(tokens, max_depth).run();
}

}  // namespace eredu::jinja::detail
