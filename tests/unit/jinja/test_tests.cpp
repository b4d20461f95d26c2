// The `is` tests.
// Every expected string is what Python jinja2 3.1.6 renders for the same template and context in
// an ImmutableSandboxedEnvironment(trim_blocks=True, lstrip_blocks=True, loopcontrols) with HF's
// tojson filter; they were produced with that environment, not with this engine.
#include <gtest/gtest.h>

#include "render_case.hpp"

namespace eredu::jinja {
namespace {

const RenderCase kTestsCases[] = {
    {"defined_undefined_none",
     "{{ x is defined }} {{ x is undefined }} {{ n is none }} {{ n is defined }} {{ d.k is defined "
     "}}",
     "{\"n\": null, \"d\": {}}", "False True True True False"},
    {"type_tests",
     "{{ 's' is string }} {{ 1 is number }} {{ 1 is integer }} {{ 1.5 is float }} {{ 1.5 is "
     "integer }} {{ true is boolean }} {{ true is number }} {{ d is mapping }} {{ l is iterable }} "
     "{{ 's' is iterable }} {{ l is sequence }} {{ d is sequence }} {{ 1 is iterable }}",
     "{\"d\": {}, \"l\": []}",
     "True True True True False True True True True True True True False"},
    {"value_tests",
     "{{ true is true }} {{ 1 is true }} {{ false is false }} {{ 3 is odd }} {{ 4 is even }} {{ 9 "
     "is divisibleby 3 }} {{ 9 is divisibleby(2) }}",
     "{}", "True False True True True True False"},
    {"comparison_tests",
     "{{ 1 is eq 1 }} {{ 1 is equalto 2 }} {{ 1 is ne 2 }} {{ 2 is in [1, 2] }} {{ 3 is gt 2 }} {{ "
     "'x' is not in 'abc' }}",
     "{}", "True False True True True True"},
    {"case_and_callable_tests",
     "{{ 'abc' is lower }} {{ 'ABC' is upper }} {{ 'aB' is lower }} {{ range is callable }} {{ 'x' "
     "is callable }}",
     "{}", "True True False True False"},
    {"is_not_negates", "{{ x is not defined }} {{ 1 is not string }}", "{}", "True True"},
};

class TestsMatchJinja2 : public ::testing::TestWithParam<RenderCase> {};

TEST_P(TestsMatchJinja2, RendersLikeJinja2) {
  expect_renders_like_jinja2(GetParam());
}

INSTANTIATE_TEST_SUITE_P(Jinja2, TestsMatchJinja2, ::testing::ValuesIn(kTestsCases),
                         render_case_name);

}  // namespace
}  // namespace eredu::jinja
