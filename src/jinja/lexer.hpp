#pragma once
// The Jinja lexer: splits a template into text and tag tokens, applying the whitespace rules
// jinja2 applies while lexing (newline normalisation, the dropped final newline, `-` and `+`
// markers, trim_blocks and lstrip_blocks), and tokenizes the expressions inside tags.

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include "eredu/core/result.hpp"

namespace eredu::jinja::detail {

enum class TokenKind {
  kText,
  kVariableBegin,  // {{
  kVariableEnd,    // }}
  kBlockBegin,     // {%
  kBlockEnd,       // %}
  kName,
  kString,  // text holds the decoded value
  kInteger,
  kFloat,
  kOperator,
  kEnd,
};

struct Token {
  TokenKind kind = TokenKind::kEnd;
  std::string text;
  std::size_t line = 1;
  std::size_t column = 1;
};

// 'text' in single quotes, for messages. (Built by appending: GCC 12 at -O3 warns falsely about
// `"'" + std::string`.)
std::string repr_quoted(std::string_view text);

// A "LINE:COLUMN: " prefix for messages.
std::string location_prefix(std::size_t line, std::size_t column);

Result<std::vector<Token>> tokenize(std::string_view source);

}  // namespace eredu::jinja::detail
