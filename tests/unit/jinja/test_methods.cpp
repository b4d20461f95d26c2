// Python str/dict/list methods called from templates.
// Every expected string is what Python jinja2 3.1.6 renders for the same template and context in
// an ImmutableSandboxedEnvironment(trim_blocks=True, lstrip_blocks=True, loopcontrols) with HF's
// tojson filter; they were produced with that environment, not with this engine.
#include <gtest/gtest.h>

#include "render_case.hpp"

namespace eredu::jinja {
namespace {

const RenderCase kMethodsCases[] = {
    {"strip_family",
     "[{{ '  a b  '.strip() }}][{{ 'xxaxx'.lstrip('x') }}][{{ 'xxaxx'.rstrip('x') }}][{{ '\\n "
     "a'.lstrip() }}]",
     "{}", "[a b][axx][xxa][a]"},
    {"split_without_and_with_separator",
     "{{ '  a  b c '.split() }} {{ 'a,b,,c'.split(',') }} {{ 'a b c'.split(' ', 1) }} {{ 'a b "
     "c'.rsplit(' ', 1) }} {{ 'a  b'.split(maxsplit=1) }} {{ ''.split() }} {{ ''.split(',') }}",
     "{}", "['a', 'b', 'c'] ['a', 'b', '', 'c'] ['a', 'b c'] ['a b', 'c'] ['a', 'b'] [] ['']"},
    {"starts_ends_with",
     "{{ 'hello'.startswith('he') }} {{ 'hello'.endswith('lo') }} {{ 'hello'.startswith(('x', "
     "'h')) }} {{ 'hello'.endswith('x') }}",
     "{}", "True True True False"},
    {"replace_find_count",
     "{{ 'aaa'.replace('a', 'b', 2) }} {{ 'hello'.find('l') }} {{ 'hello'.find('z') }} {{ "
     "'hello'.rfind('l') }} {{ 'hello'.count('l') }}",
     "{}", "bba 2 -1 3 2"},
    {"case_methods",
     "{{ 'hello world'.title() }} {{ 'hello'.capitalize() }} {{ 'Hi'.upper() }}{{ 'Hi'.lower() }} "
     "{{ \"they're bill's\".title() }}",
     "{}", "Hello World Hello HIhi They'Re Bill'S"},
    {"format_method",
     "{{ '{} and {}'.format('a', 'b') }} {{ '{0}{1}{0}'.format('x', 'y') }} {{ "
     "'{name}!'.format(name='n') }} {{ '{{}}'.format() }}",
     "{}", "a and b xyx n! {}"},
    {"join_splitlines", "{{ ', '.join(['a', 'b']) }} {{ 'a\\nb\\r\\nc'.splitlines() }}", "{}",
     "a, b ['a', 'b', 'c']"},
    {"dict_methods",
     "{{ d.keys()|list }} {{ d.values()|list }} {{ d.items()|list }} {{ d.get('a') }} {{ "
     "d.get('z') }} {{ d.get('z', 0) }}",
     "{\"d\": {\"a\": 1, \"b\": 2}}", "['a', 'b'] [1, 2] [('a', 1), ('b', 2)] 1 None 0"},
    {"list_methods", "{{ l.index(2) }} {{ l.count(1) }}", "{\"l\": [1, 2, 1]}", "1 2"},
};

class MethodsMatchJinja2 : public ::testing::TestWithParam<RenderCase> {};

TEST_P(MethodsMatchJinja2, RendersLikeJinja2) {
  expect_renders_like_jinja2(GetParam());
}

INSTANTIATE_TEST_SUITE_P(Jinja2, MethodsMatchJinja2, ::testing::ValuesIn(kMethodsCases),
                         render_case_name);

}  // namespace
}  // namespace eredu::jinja
