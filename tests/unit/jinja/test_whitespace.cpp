// The whitespace rules jinja2 applies with trim_blocks and lstrip_blocks on (as Hugging Face runs
// chat templates): -/+ markers, comments, raw blocks, newline normalisation. Every expected string
// is what Python jinja2 3.1.6 renders for the same template and context in an
// ImmutableSandboxedEnvironment(trim_blocks=True, lstrip_blocks=True, loopcontrols) with HF's
// tojson filter; they were produced with that environment, not with this engine.
#include <gtest/gtest.h>

#include "render_case.hpp"

namespace eredu::jinja {
namespace {

const RenderCase kWhitespaceCases[] = {
    {"trim_blocks_drops_newline_after_block_tag", "{% if true %}\nyes\n{% endif %}\nend", "{}",
     "yes\nend"},
    {"lstrip_blocks_strips_indent_before_block_tag",
     "a\n    {% if true %}\n    b\n    {% endif %}\nc", "{}", "a\n    b\nc"},
    {"minus_strips_whitespace_both_sides", "a  \n  {{- 'x' -}}  \n  b", "{}", "axb"},
    {"plus_disables_lstrip", "a\n  {%+ if true %}x{% endif %}", "{}", "a\n  x"},
    {"variable_tags_are_not_lstripped", "a\n  {{ 'x' }}\n  b", "{}", "a\n  x\n  b"},
    {"comment_is_removed_and_trimmed", "a\n  {# note #}\nb", "{}", "a\nb"},
    {"final_newline_is_dropped", "line\n", "{}", "line"},
    {"crlf_is_normalised", "a\015\nb\015c", "{}", "a\nb\nc"},
    {"raw_block_is_literal", "{% raw %}{{ x }}{% if %}{% endraw %}", "{}", "{{ x }}{% if %}"},
    {"text_after_minus_block_end", "{% set x = 1 -%}\n\n   y", "{}", "y"},
};

class WhitespaceMatchJinja2 : public ::testing::TestWithParam<RenderCase> {};

TEST_P(WhitespaceMatchJinja2, RendersLikeJinja2) {
  expect_renders_like_jinja2(GetParam());
}

INSTANTIATE_TEST_SUITE_P(Jinja2, WhitespaceMatchJinja2, ::testing::ValuesIn(kWhitespaceCases),
                         render_case_name);

}  // namespace
}  // namespace eredu::jinja
