// Where jinja2 raises, the engine fails too (a Result error located at the failing construct),
// never crashing. The jinja2 message each case provoked is kept beside it.
#include <gtest/gtest.h>

#include "render_case.hpp"

namespace eredu::jinja {
namespace {

struct ErrorCase {
  const char* name;
  const char* source;
  const char* jinja2_error;
};

const ErrorCase kErrorCases[] = {
    {"undefined_attribute_of_undefined_fails", "{{ x.y }}", "UndefinedError: 'x' is undefined"},
    {"calling_undefined_fails", "{{ nothing() }}", "UndefinedError: 'nothing' is undefined"},
    {"adding_none_fails", "{{ none + 'a' }}",
     "TypeError: unsupported operand type(s) for +: 'NoneType' and 'str'"},
    {"iterating_none_fails", "{% for x in none %}{% endfor %}",
     "TypeError: 'NoneType' object is not iterable"},
    {"raise_exception_fails", "{{ raise_exception('stop here') }}", "TemplateError: stop here"},
    {"append_is_refused_by_immutable_sandbox", "{% set l = [] %}{{ l.append(1) }}",
     "SecurityError: access to attribute 'append' of 'list' object is unsafe."},
    {"unknown_filter_fails_when_used", "{{ 1|nosuchfilter }}",
     "TemplateAssertionError: No filter named 'nosuchfilter'."},
    {"generator_is_not_json", "{{ [1]|map('string')|tojson }}",
     "TypeError: Object of type generator is not JSON serializable"},
    {"generator_has_no_length", "{{ ([1]|select)|length }}",
     "TypeError: object of type 'generator' has no len()"},
    {"division_by_zero_fails", "{{ 1 / 0 }}", "ZeroDivisionError: division by zero"},
};

class FailsWhereJinja2Raises : public ::testing::TestWithParam<ErrorCase> {};

TEST_P(FailsWhereJinja2Raises, RenderIsALocatedError) {
  const ErrorCase& c = GetParam();
  auto parsed = Template::parse(c.source);
  ASSERT_TRUE(parsed.has_value()) << parsed.error().what();
  auto rendered = parsed->render({});
  ASSERT_FALSE(rendered.has_value()) << "rendered " << *rendered << "; jinja2: " << c.jinja2_error;
  EXPECT_TRUE(rendered.error().message().rfind("1:", 0) == 0) << rendered.error().message();
}

std::string error_case_name(const ::testing::TestParamInfo<ErrorCase>& param_info) {
  return param_info.param.name;
}

INSTANTIATE_TEST_SUITE_P(Jinja2, FailsWhereJinja2Raises, ::testing::ValuesIn(kErrorCases),
                         error_case_name);

}  // namespace
}  // namespace eredu::jinja
