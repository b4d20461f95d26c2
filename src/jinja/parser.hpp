#pragma once
// The Jinja parser: tokens to statement trees, with jinja2's operator precedence and the tags
// chat templates use. Tags that would reach outside the template (include, import, from,
// extends) are refused here, as are unknown tags.

#include <cstddef>
#include <string_view>

#include "ast.hpp"
#include "eredu/core/result.hpp"
#include "lexer.hpp"

namespace eredu::jinja::detail {

Result<Body> parse(const std::vector<Token>& tokens, std::size_t max_depth);

}  // namespace eredu::jinja::detail
