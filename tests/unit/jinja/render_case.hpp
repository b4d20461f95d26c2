#pragma once
// One table row of the jinja2-comparison tests: a template, its variables as JSON, and the text
// Python jinja2 rendered for them.

#include <gtest/gtest.h>

#include <string>

#include <nlohmann/json.hpp>

#include "eredu/jinja/json.hpp"
#include "eredu/jinja/template.hpp"

namespace eredu::jinja {

struct RenderCase {
  const char* name;
  const char* source;
  const char* context;  // a JSON object: the template's variables
  const char* expected;
};

inline std::string render_case_name(const ::testing::TestParamInfo<RenderCase>& info) {
  return info.param.name;
}

inline RenderInput input_from_json(const std::string& context) {
  RenderInput input;
  const auto json = nlohmann::ordered_json::parse(context);
  for (const auto& [key, value] : json.items())
    input.variables.emplace_back(key, from_json(value));
  return input;
}

inline void expect_renders_like_jinja2(const RenderCase& c) {
  auto parsed = Template::parse(c.source);
  ASSERT_TRUE(parsed.has_value()) << parsed.error().what();
  auto rendered = parsed->render(input_from_json(c.context));
  ASSERT_TRUE(rendered.has_value()) << rendered.error().what();
  EXPECT_EQ(*rendered, c.expected) << "template: " << c.source;
}

}  // namespace eredu::jinja
