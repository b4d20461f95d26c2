// Template: parse once (lex, parse), render with a fresh evaluator each time.

#include "eredu/jinja/template.hpp"

#include "ast.hpp"
#include "evaluator.hpp"
#include "lexer.hpp"
#include "parser.hpp"

namespace eredu::jinja {

struct Template::Impl {
  detail::Body body;
  TemplateOptions options;
};

Result<Template> Template::parse(std::string_view source, TemplateOptions options) {
  if (source.size() > options.limits.max_source_bytes) {
    return fail(ErrorCode::kLimitExceeded,
                "1:1: template source of " + std::to_string(source.size()) +
                    " bytes is larger than " + std::to_string(options.limits.max_source_bytes) +
                    " (TemplateLimits::max_source_bytes)");
  }
  EREDU_TRY(const std::vector<detail::Token> tokens, detail::tokenize(source));
  EREDU_TRY(detail::Body body, detail::parse(tokens, options.limits.max_nesting_depth));
  auto impl = std::make_shared<Impl>();
  impl->body = std::move(body);
  impl->options = options;
  return Template(std::move(impl));
}

Result<std::string> Template::render(const RenderInput& input) const {
  detail::Evaluator evaluator(impl_->options, input);
  return evaluator.render(impl_->body);
}

}  // namespace eredu::jinja
