// Fuzzes the Jinja engine with template source as the input: parse, then render with a small
// chat-like context under tight limits. Every input must end in a string or a located error: no
// crash, leak, abort, unbounded recursion, time or memory, or sanitizer report.
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <string>

#include "eredu/jinja/json.hpp"
#include "eredu/jinja/template.hpp"
#include "fuzz_support.hpp"

namespace {

eredu::jinja::RenderInput make_input() {
  eredu::jinja::RenderInput input;
  const auto messages = nlohmann::ordered_json::parse(R"([
    {"role": "system", "content": "sys"},
    {"role": "user", "content": "hi \"there\"", "name": "u"},
    {"role": "assistant", "content": "", "tool_calls": [
      {"id": "c1", "type": "function", "function": {"name": "f", "arguments": {"a": [1, 2.5]}}}]},
    {"role": "tool", "content": "{}", "tool_call_id": "c1"}])");
  input.variables.emplace_back("messages", eredu::jinja::from_json(messages));
  input.variables.emplace_back("tools", eredu::jinja::Value::none());
  input.variables.emplace_back("add_generation_prompt", eredu::jinja::Value(true));
  input.variables.emplace_back("bos_token", eredu::jinja::Value("<s>"));
  input.variables.emplace_back("eos_token", eredu::jinja::Value("</s>"));
  input.clock = [] { return std::chrono::system_clock::time_point(std::chrono::seconds(0)); };
  return input;
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int* /*argc*/, char*** /*argv*/) {
  eredu::fuzz::silence_library_logging();
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  static const eredu::jinja::RenderInput input = make_input();
  eredu::jinja::TemplateOptions options;
  options.limits.max_loop_iterations = 20'000;
  options.limits.max_output_bytes = 1 << 20;
  options.limits.max_call_depth = 40;
  const auto parsed = eredu::jinja::Template::parse(eredu::fuzz::as_text(data, size), options);
  if (!parsed.has_value()) {
    (void)parsed.error().what();
    return 0;
  }
  const auto rendered = parsed->render(input);
  if (!rendered.has_value()) (void)rendered.error().what();
  return 0;
}
