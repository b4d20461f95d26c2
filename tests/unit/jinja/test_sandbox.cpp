// The sandbox: nothing outside the template is reachable, every resource a hostile template could
// exhaust is bounded by TemplateLimits, and errors say where (LINE:COLUMN) and what.
#include <gtest/gtest.h>

#include <chrono>
#include <string>

#include "eredu/jinja/template.hpp"

namespace eredu::jinja {
namespace {

Result<std::string> render(const std::string& source, TemplateOptions options = {},
                           RenderInput input = {}) {
  EREDU_TRY(const Template t, Template::parse(source, options));
  return t.render(input);
}

TEST(JinjaSandbox, IncludeImportExtendsAreRefusedAtParseTime) {
  for (const char* source : {"{% include 'x.jinja' %}", "{% import 'x' as y %}",
                             "{% from 'x' import y %}", "{% extends 'base' %}"}) {
    const auto parsed = Template::parse(source);
    ASSERT_FALSE(parsed.has_value()) << source;
    EXPECT_NE(parsed.error().message().find("sandbox"), std::string::npos)
        << parsed.error().message();
    EXPECT_EQ(parsed.error().message().rfind("1:4: ", 0), 0u) << parsed.error().message();
  }
}

TEST(JinjaSandbox, ParseErrorsGiveLineAndColumn) {
  const auto parsed = Template::parse("line one\n{% if x %}\n  {{ 1 + }}\n{% endif %}");
  ASSERT_FALSE(parsed.has_value());
  EXPECT_EQ(parsed.error().message().rfind("3:10: ", 0), 0u) << parsed.error().message();
  const auto unclosed = Template::parse("{% for x in y %}\nbody");
  ASSERT_FALSE(unclosed.has_value());
  EXPECT_NE(unclosed.error().message().find("'endfor'"), std::string::npos)
      << unclosed.error().message();
  const auto unknown = Template::parse("{% do x %}");
  ASSERT_FALSE(unknown.has_value());
  EXPECT_NE(unknown.error().message().find("unknown tag 'do'"), std::string::npos);
}

TEST(JinjaSandbox, RenderErrorsGiveTheLineAndColumnOfTheFailingExpression) {
  const auto r = render("a\nb {{ 'x' }} {{ raise_exception('bad input') }}");
  ASSERT_FALSE(r.has_value());
  EXPECT_EQ(r.error().message(), "2:16: raise_exception: bad input");
  const auto in_macro = render("{% macro m() %}\n  {{ 1 // 0 }}{% endmacro %}\n{{ m() }}");
  ASSERT_FALSE(in_macro.has_value());
  EXPECT_EQ(in_macro.error().message().rfind("2:", 0), 0u) << in_macro.error().message();
}

TEST(JinjaSandbox, BreakOutsideALoopIsAParseError) {
  EXPECT_FALSE(Template::parse("{% break %}").has_value());
  EXPECT_FALSE(Template::parse("{% for x in y %}{% macro m() %}{% continue %}{% endmacro %}"
                               "{% endfor %}")
                   .has_value());
}

TEST(JinjaSandbox, LoopIterationsAreBounded) {
  TemplateOptions options;
  options.limits.max_loop_iterations = 1000;
  const auto r =
      render("{% for i in range(100) %}{% for j in range(100) %}{% endfor %}{% endfor %}", options);
  ASSERT_FALSE(r.has_value());
  EXPECT_EQ(r.error().code(), ErrorCode::kLimitExceeded);
  EXPECT_TRUE(render("{% for i in range(10) %}{% endfor %}", options).has_value());
}

TEST(JinjaSandbox, HugeRangeIsBoundedBeforeAllocating) {
  const auto r = render("{{ range(9223372036854775807)|length }}");
  ASSERT_FALSE(r.has_value());
  EXPECT_EQ(r.error().code(), ErrorCode::kLimitExceeded);
}

TEST(JinjaSandbox, OutputSizeIsBounded) {
  TemplateOptions options;
  options.limits.max_output_bytes = 1000;
  const auto repeat = render("{{ 'x' * 100000 }}", options);
  ASSERT_FALSE(repeat.has_value());
  EXPECT_EQ(repeat.error().code(), ErrorCode::kLimitExceeded);
  const auto loop = render("{% for i in range(600) %}ab{% endfor %}", options);
  ASSERT_FALSE(loop.has_value());
  EXPECT_EQ(loop.error().code(), ErrorCode::kLimitExceeded);
  const auto doubling = render(
      "{% set ns = namespace(s='x') %}{% for i in range(64) %}{% set ns.s = ns.s ~ ns.s %}"
      "{% endfor %}",
      options);
  ASSERT_FALSE(doubling.has_value());
  EXPECT_EQ(doubling.error().code(), ErrorCode::kLimitExceeded);
}

TEST(JinjaSandbox, MacroRecursionIsBounded) {
  const auto r = render("{% macro f() %}{{ f() }}{% endmacro %}{{ f() }}");
  ASSERT_FALSE(r.has_value());
  EXPECT_EQ(r.error().code(), ErrorCode::kLimitExceeded);
}

TEST(JinjaSandbox, DeepNestingIsAParseErrorNotAStackOverflow) {
  const std::string deep =
      "{{ " + std::string(100000, '(') + "1" + std::string(100000, ')') + " }}";
  const auto parsed = Template::parse(deep);
  ASSERT_FALSE(parsed.has_value());
  EXPECT_EQ(parsed.error().code(), ErrorCode::kLimitExceeded);
  std::string blocks;
  for (int i = 0; i < 5000; ++i)
    blocks += "{% if true %}";
  EXPECT_FALSE(Template::parse(blocks).has_value());
}

TEST(JinjaSandbox, SelfReferencingNamespacePrintsWithoutRecursingForever) {
  const auto r = render("{% set ns = namespace() %}{% set ns.me = ns %}{{ ns|string|length > 0 }}");
  ASSERT_TRUE(r.has_value()) << r.error().what();
  EXPECT_EQ(*r, "True");
}

TEST(JinjaSandbox, MutatingMethodsWorkWhenTheSandboxIsNotImmutable) {
  TemplateOptions options;
  options.immutable = false;
  const auto r = render(
      "{% set l = [1] %}{% set _ = l.append(2) %}{% set _ = l.extend([3, 4]) %}"
      "{% set _ = l.insert(0, 0) %}{{ l.pop() }}{{ l }}{% set d = {'a': 1} %}"
      "{{ d.pop('a') }}{{ d }}",
      options);
  ASSERT_TRUE(r.has_value()) << r.error().what();
  EXPECT_EQ(*r, "4[0, 1, 2, 3]1{}");
  EXPECT_FALSE(render("{% set l = [] %}{{ l.append(1) }}").has_value());
}

TEST(JinjaSandbox, StrftimeNowReadsTheInjectedClock) {
  RenderInput input;
  input.clock = [] {
    return std::chrono::system_clock::time_point(std::chrono::seconds(1741944413));
  };
  const auto r =
      render("{{ strftime_now('%Y-%m-%d %H:%M:%S') }}|{{ strftime_now('%d %b %Y') }}", {}, input);
  ASSERT_TRUE(r.has_value()) << r.error().what();
  EXPECT_EQ(*r, "2025-03-14 09:26:53|14 Mar 2025");
}

TEST(JinjaSandbox, GenerationBlockRendersItsBody) {
  const auto r = render(
      "{% for m in ['a', 'b'] %}{% generation %}[{{ m }}]{% endgeneration %}"
      "{% endfor %}");
  ASSERT_TRUE(r.has_value()) << r.error().what();
  EXPECT_EQ(*r, "[a][b]");
}

TEST(JinjaSandbox, TemplatesRenderRepeatedlyWithDifferentVariables) {
  const auto t = Template::parse("Hi {{ name }}!");
  ASSERT_TRUE(t.has_value());
  for (const char* name : {"a", "b"}) {
    RenderInput input;
    input.variables.emplace_back("name", Value(name));
    const auto r = t->render(input);
    ASSERT_TRUE(r.has_value());
    EXPECT_EQ(*r, std::string("Hi ") + name + "!");
  }
}

}  // namespace
}  // namespace eredu::jinja
