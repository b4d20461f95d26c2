// The parser's entry point and the helpers its statement and expression halves share (see
// parser_internal.hpp for where the split is and why).

#include "parser.hpp"

#include <string>
#include <string_view>

#include "parser_internal.hpp"

namespace eredu::jinja::detail {

Result<Body> Parser::run() {
  std::string found;
  EREDU_TRY(Body body, parse_body({}, found));
  return body;
}

std::string Parser::describe(const Token& t) {
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

Unexpected<Error> Parser::error(const Token& at, const std::string& message) const {
  return fail(ErrorCode::kInvalidArgument,
              location_prefix(at.line, at.column) + "syntax error: " + message);
}
Unexpected<Error> Parser::unexpected(const std::string& expected) const {
  return error(cur(), "expected " + expected + ", got " + describe(cur()));
}

Result<void> Parser::expect_op(std::string_view op) {
  if (!skip_op(op)) return unexpected(repr_quoted(op));
  return ok();
}
Result<void> Parser::expect_block_end(std::string_view tag) {
  if (cur().kind != TokenKind::kBlockEnd) {
    return unexpected("end of '" + std::string(tag) + "' tag ('%}')");
  }
  advance();
  return ok();
}
Result<std::string> Parser::expect_name() {
  if (cur().kind != TokenKind::kName) return unexpected("a name");
  std::string name = cur().text;
  advance();
  return name;
}

Result<void> Parser::enter(const Token& at) {
  if (++depth_ > max_depth_) {
    return fail(ErrorCode::kLimitExceeded,
                location_prefix(at.line, at.column) + "template nesting deeper than " +
                    std::to_string(max_depth_) + " (TemplateLimits::max_nesting_depth)");
  }
  return ok();
}

Result<Body> parse(const std::vector<Token>& tokens, std::size_t max_depth) {
  return Parser(tokens, max_depth).run();
}

}  // namespace eredu::jinja::detail
