// Expressions with Python semantics: operators, literals and how values print.
// Every expected string is what Python jinja2 3.1.6 renders for the same template and context in
// an ImmutableSandboxedEnvironment(trim_blocks=True, lstrip_blocks=True, loopcontrols) with HF's
// tojson filter; they were produced with that environment, not with this engine.
#include <gtest/gtest.h>

#include "render_case.hpp"

namespace eredu::jinja {
namespace {

const RenderCase kExpressionsCases[] = {
    {"tilde_concatenates_strings", "{{ 'a' ~ 1 ~ none ~ true }}", "{}", "a1NoneTrue"},
    {"plus_on_strings_and_lists", "{{ 'a' + 'b' }} {{ [1] + [2, 3] }}", "{}", "ab [1, 2, 3]"},
    {"string_repeat", "{{ 'ab' * 3 }}{{ 2 * '-' }}", "{}", "ababab--"},
    {"integer_and_float_division",
     "{{ 7 / 2 }} {{ 7 // 2 }} {{ -7 // 2 }} {{ -7 % 3 }} {{ 7 % -3 }} {{ 2 ** 10 }} {{ 2 ** -1 }}",
     "{}", "3.5 3 -4 2 -2 1024 0.5"},
    {"float_printing_as_python_repr",
     "{{ 1.0 }} {{ 0.1 + 0.2 }} {{ 1e20 }} {{ 1e16 }} {{ 1e15 }} {{ 1.5e-5 }} {{ 0.0001 }} {{ "
     "-2.50 }}",
     "{}", "1.0 0.30000000000000004 1e+20 1e+16 1000000000000000.0 1.5e-05 0.0001 -2.5"},
    {"comparisons_chain",
     "{{ 1 < 2 < 3 }} {{ 1 < 3 < 2 }} {{ 'a' < 'b' }} {{ [1, 2] < [1, 3] }} {{ 1 == 1.0 }} {{ true "
     "== 1 }}",
     "{}", "True False True True True True"},
    {"in_and_not_in",
     "{{ 'b' in 'abc' }} {{ 2 in [1, 2] }} {{ 'k' in {'k': 1} }} {{ 3 not in [1, 2] }}", "{}",
     "True True True True"},
    {"and_or_return_operands", "{{ 0 or 'x' }} {{ 'a' and 'b' }} {{ none or [] }} {{ not 0 }}",
     "{}", "x b [] True"},
    {"conditional_expression",
     "{{ 'yes' if x else 'no' }} {{ 'yes' if y else 'no' }} [{{ 'only' if y }}]",
     "{\"x\": 1, \"y\": 0}", "yes no []"},
    {"literals_print_as_python",
     "{{ none }} {{ None }} {{ true }} {{ False }} {{ [1, 'a', none] }} {{ {'k': 'v', 'n': [true]} "
     "}} {{ (1, 2) }} {{ (1,) }}",
     "{}", "None None True False [1, 'a', None] {'k': 'v', 'n': [True]} (1, 2) (1,)"},
    {"string_repr_quotes", "{{ [\"it's\", 'say \"hi\"', 'both \\' \"', 'nl\\n'] }}", "{}",
     "[\"it's\", 'say \"hi\"', 'both \\' \"', 'nl\\n']"},
    {"slicing_with_steps",
     "{{ 'hello'[1:3] }} {{ 'hello'[::-1] }} {{ [1,2,3,4,5][::2] }} {{ [1,2,3][-2:] }} {{ "
     "'h\303\251llo'[1:3] }} {{ [1,2,3][5:] }}",
     "{}", "el olleh [1, 3, 5] [2, 3] \303\251l []"},
    {"negative_index", "{{ [1, 2, 3][-1] }} {{ 'abc'[-1] }}", "{}", "3 c"},
    {"attribute_falls_back_to_item", "{{ d.k }} {{ d['k'] }} {{ l.0 }} [{{ d.missing }}]",
     "{\"d\": {\"k\": \"v\"}, \"l\": [\"first\"]}", "v v first []"},
    {"dict_method_beats_key_for_attribute", "{{ d.items is callable }} {{ d['items'] }}",
     "{\"d\": {\"items\": \"key\"}}", "True key"},
    {"unary_minus_binds_before_filters", "{{ -3|abs }} {{ -(3|abs) }}", "{}", "3 -3"},
    {"filter_binds_tighter_than_plus", "{{ 1 + [1, 2]|length }}", "{}", "3"},
    {"unicode_length_counts_code_points",
     "{{ 'na\303\257ve'|length }} {{ '\346\227\245\346\234\254'|length }}", "{}", "5 2"},
    {"string_escapes_in_literals", "{{ 'a\\tb\\\\n' }}|{{ \"\\u00e9\\x41\" }}", "{}",
     "a\011b\\n|\303\251A"},
    {"adjacent_string_literals_join", "{{ 'a' 'b' \"c\" }}", "{}", "abc"},
};

class ExpressionsMatchJinja2 : public ::testing::TestWithParam<RenderCase> {};

TEST_P(ExpressionsMatchJinja2, RendersLikeJinja2) {
  expect_renders_like_jinja2(GetParam());
}

INSTANTIATE_TEST_SUITE_P(Jinja2, ExpressionsMatchJinja2, ::testing::ValuesIn(kExpressionsCases),
                         render_case_name);

}  // namespace
}  // namespace eredu::jinja
