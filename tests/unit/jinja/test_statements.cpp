// Statements: for loops and their loop variables, break/continue, set and namespace scoping,
// macros, call and filter blocks. Every expected string is what Python jinja2 3.1.6 renders for the
// same template and context in an ImmutableSandboxedEnvironment(trim_blocks=True,
// lstrip_blocks=True, loopcontrols) with HF's tojson filter; they were produced with that
// environment, not with this engine.
#include <gtest/gtest.h>

#include "render_case.hpp"

namespace eredu::jinja {
namespace {

const RenderCase kStatementsCases[] = {
    {"for_loop_variables",
     "{% for x in 'abc' %}{{ loop.index }}{{ loop.index0 }}{{ loop.revindex }}{{ loop.revindex0 "
     "}}{{ loop.first }}{{ loop.last }}{{ loop.length }};{% endfor %}",
     "{}", "1032TrueFalse3;2121FalseFalse3;3210FalseTrue3;"},
    {"for_previtem_nextitem",
     "{% for x in [1, 2, 3] %}({{ loop.previtem }}|{{ x }}|{{ loop.nextitem }}){% endfor %}", "{}",
     "(|1|2)(1|2|3)(2|3|)"},
    {"for_cycle", "{% for x in range(4) %}{{ loop.cycle('a', 'b') }}{% endfor %}", "{}", "abab"},
    {"for_with_filter_counts_filtered_items",
     "{% for x in range(10) if x is odd %}{{ x }}/{{ loop.length }} {% endfor %}", "{}",
     "1/5 3/5 5/5 7/5 9/5 "},
    {"for_else_runs_on_empty", "{% for x in [] %}x{% else %}empty{% endfor %}", "{}", "empty"},
    {"for_tuple_unpacking", "{% for k, v in d.items() %}{{ k }}={{ v }};{% endfor %}",
     "{\"d\": {\"b\": 1, \"a\": 2}}", "b=1;a=2;"},
    {"for_over_dict_yields_keys_in_insertion_order", "{% for k in d %}{{ k }}{% endfor %}",
     "{\"d\": {\"z\": 1, \"a\": 2, \"m\": 3}}", "zam"},
    {"break_and_continue",
     "{% for x in range(10) %}{% if x == 2 %}{% continue %}{% endif %}{% if x == 5 %}{% break %}{% "
     "endif %}{{ x }}{% endfor %}",
     "{}", "0134"},
    {"set_in_loop_does_not_leak",
     "{% set c = 0 %}{% for i in [1, 2] %}{% set c = c + i %}{{ c }}{% endfor %}|{{ c }}", "{}",
     "12|0"},
    {"namespace_carries_out_of_loop",
     "{% set ns = namespace(c=0, s='') %}{% for i in [1, 2, 3] %}{% set ns.c = ns.c + i %}{% set "
     "ns.s = ns.s ~ i %}{% endfor %}{{ ns.c }} {{ ns.s }}",
     "{}", "6 123"},
    {"block_set_captures_output", "{% set x %}a{{ 1 + 1 }}b{% endset %}[{{ x }}]", "{}", "[a2b]"},
    {"block_set_with_filter", "{% set x | upper %}abc{% endset %}{{ x }}", "{}", "ABC"},
    {"tuple_set", "{% set a, b = 1, 2 %}{{ a }}{{ b }}", "{}", "12"},
    {"if_elif_else",
     "{% for x in [1, 2, 3] %}{% if x == 1 %}one{% elif x == 2 %}two{% else %}many{% endif %} {% "
     "endfor %}",
     "{}", "one two many "},
    {"macro_with_defaults_and_keywords",
     "{% macro m(a, b='B', c='C') %}{{ a }}{{ b }}{{ c }}{% endmacro %}{{ m(1) }} {{ m(1, 2) }} {{ "
     "m(1, c=3) }}",
     "{}", "1BC 12C 1B3"},
    {"macro_sees_globals_at_call_time",
     "{% macro m() %}{{ g }}{% endmacro %}{% set g = 'late' %}{{ m() }}", "{}", "late"},
    {"recursive_macro",
     "{% macro f(n) %}{% if n > 0 %}{{ n }}{{ f(n - 1) }}{% endif %}{% endmacro %}{{ f(3) }}", "{}",
     "321"},
    {"call_block_passes_caller",
     "{% macro wrap() %}<{{ caller() }}>{% endmacro %}{% call wrap() %}inside{% endcall %}", "{}",
     "<inside>"},
    {"filter_block", "{% filter upper %}abc{{ 'd' }}{% endfilter %}", "{}", "ABCD"},
    {"missing_macro_argument_is_undefined", "{% macro m(a, b) %}[{{ b }}]{% endmacro %}{{ m(1) }}",
     "{}", "[]"},
};

class StatementsMatchJinja2 : public ::testing::TestWithParam<RenderCase> {};

TEST_P(StatementsMatchJinja2, RendersLikeJinja2) {
  expect_renders_like_jinja2(GetParam());
}

INSTANTIATE_TEST_SUITE_P(Jinja2, StatementsMatchJinja2, ::testing::ValuesIn(kStatementsCases),
                         render_case_name);

}  // namespace
}  // namespace eredu::jinja
