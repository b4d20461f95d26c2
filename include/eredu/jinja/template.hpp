#pragma once
// A sandboxed Jinja template: parsed once, rendered many times with different variables.
//
// The dialect is jinja2's as Hugging Face runs chat templates: trim_blocks and lstrip_blocks on,
// loop controls (break/continue), the `generation` tag, an immutable sandbox (list.append,
// dict.pop ... are refused as jinja2's ImmutableSandboxedEnvironment refuses them) and no access
// to files: include, import and extends are errors. Every resource a hostile template could
// exhaust is bounded (TemplateLimits), and every failure, parse or render, is an Error whose
// message starts with "LINE:COLUMN: " (1-based, in the template source).

#include <chrono>
#include <cstddef>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "eredu/core/result.hpp"
#include "eredu/jinja/value.hpp"

namespace eredu::jinja {

struct TemplateLimits {
  std::size_t max_source_bytes = 4u << 20;
  std::size_t max_nesting_depth = 200;          // parser nesting (expressions and blocks)
  std::size_t max_call_depth = 100;             // macro recursion
  std::size_t max_loop_iterations = 1'000'000;  // all loops of one render together
  std::size_t max_output_bytes = 64u << 20;     // the rendered text, and any one built string
};

struct TemplateOptions {
  TemplateLimits limits;
  // jinja2's ImmutableSandboxedEnvironment refuses methods that mutate lists and dicts; false
  // allows append/extend/pop/insert/update as a plain SandboxedEnvironment does.
  bool immutable = true;
};

// The wall clock strftime_now reads; injectable so that renders are reproducible.
using Clock = std::function<std::chrono::system_clock::time_point()>;

struct RenderInput {
  // Variables visible to the template, in addition to the builtins (range, namespace, dict,
  // raise_exception, strftime_now, cycler, joiner).
  std::vector<std::pair<std::string, Value>> variables;
  Clock clock;  // empty: the system clock
};

class Template {
 public:
  [[nodiscard]] static Result<Template> parse(std::string_view source,
                                              TemplateOptions options = {});

  [[nodiscard]] Result<std::string> render(const RenderInput& input) const;

  struct Impl;

 private:
  explicit Template(std::shared_ptr<const Impl> impl) : impl_(std::move(impl)) {}
  std::shared_ptr<const Impl> impl_;
};

}  // namespace eredu::jinja
