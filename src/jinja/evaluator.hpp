#pragma once
// The tree-walking renderer. Builtin helpers (filters, tests, methods, globals) report errors
// without a location; the expression node that invoked them adds "LINE:COLUMN: ".

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "ast.hpp"
#include "eredu/jinja/template.hpp"
#include "eredu/jinja/value.hpp"

namespace eredu::jinja::detail {

struct Frame {
  std::vector<std::pair<std::string, Value>> vars;
  std::shared_ptr<Frame> parent;

  [[nodiscard]] const Value* find(std::string_view name) const;
  void set(std::string_view name, Value value);
};

// A builtin's error: kInvalidArgument, no location yet.
Unexpected<Error> type_error(std::string message);
// The TypeError for using an undefined value (its hint names what was undefined).
Unexpected<Error> undefined_error(const Value& v);
// Python's int-like values (int and bool) and their integer value.
bool is_integral(const Value& v);
std::int64_t to_int(const Value& v);

// Reads a builtin's arguments Python-style: by position or by keyword.
class Arguments {
 public:
  Arguments(const CallArgs& args, std::string_view function) : args_(args), function_(function) {}
  // The argument at `position` (0-based, after the bound object) or named `name`.
  [[nodiscard]] const Value* get(std::size_t position, std::string_view name) const;
  [[nodiscard]] Value get_or(std::size_t position, std::string_view name, Value fallback) const;
  [[nodiscard]] std::size_t positional_count() const { return args_.positional.size(); }
  [[nodiscard]] const CallArgs& raw() const { return args_; }
  [[nodiscard]] std::string_view function() const { return function_; }

 private:
  const CallArgs& args_;
  std::string_view function_;
};

class Evaluator {
 public:
  Evaluator(const TemplateOptions& options, const RenderInput& input);

  Result<std::string> render(const Body& body);

  // jinja2's environment.getattr (a.b: attribute, then item) and getitem (a[b]: item, then
  // attribute).
  Result<Value> get_attribute(const Value& object, std::string_view name);
  Result<Value> get_item(const Value& object, const Value& key);
  Result<Value> call(const Value& callee, const CallArgs& args);
  Result<std::vector<Value>> iterate(const Value& value);

  Result<Value> apply_filter(std::string_view name, const Value& input, const CallArgs& args);
  Result<bool> apply_test(std::string_view name, const Value& input, const CallArgs& args);

  // Fails once a built string would pass TemplateLimits::max_output_bytes.
  Result<void> check_size(std::size_t bytes) const;
  // Counts loop-like work against TemplateLimits::max_loop_iterations.
  Result<void> count_iterations(std::size_t n);

  [[nodiscard]] const TemplateOptions& options() const { return options_; }
  // Containers changed in place during the render: emptied when the render ends, which breaks
  // any reference cycle a template built (ns.self = ns) so nothing leaks.
  void track(std::shared_ptr<DictObject> dict) { mutated_dicts_.push_back(std::move(dict)); }
  void track(std::shared_ptr<ListObject> list) { mutated_lists_.push_back(std::move(list)); }
  ~Evaluator();
  Evaluator(const Evaluator&) = delete;
  Evaluator& operator=(const Evaluator&) = delete;
  [[nodiscard]] std::chrono::system_clock::time_point now() const;

 private:
  enum class Flow { kNormal, kBreak, kContinue };

  Result<Flow> exec_body(const Body& body, const std::shared_ptr<Frame>& frame, std::string& out);
  Result<Flow> exec(const Stmt& stmt, const std::shared_ptr<Frame>& frame, std::string& out);
  Result<Flow> exec_for(const Stmt& stmt, const std::shared_ptr<Frame>& frame, std::string& out);
  Result<void> assign(const Expr& target, Value value, const std::shared_ptr<Frame>& frame);
  Value make_macro(const Stmt& stmt, const std::vector<Parameter>& params, const Body& body,
                   std::string name, const std::shared_ptr<Frame>& closure);
  Result<Value> apply_filter_chain(const Expr& chain, Value input,
                                   const std::shared_ptr<Frame>& frame);

  Result<Value> eval(const Expr& expr, const std::shared_ptr<Frame>& frame);
  Result<Value> eval_inner(const Expr& expr, const std::shared_ptr<Frame>& frame);
  Result<CallArgs> eval_arguments(const Expr& expr, std::size_t first,
                                  const std::shared_ptr<Frame>& frame);
  Result<Value> binary(const std::string& op, const Value& a, const Value& b);
  Result<bool> compare(const std::string& op, const Value& a, const Value& b);

  const TemplateOptions& options_;
  const RenderInput& input_;
  std::shared_ptr<Frame> root_;
  std::size_t iterations_ = 0;
  std::size_t call_depth_ = 0;
  std::vector<std::shared_ptr<DictObject>> mutated_dicts_;
  std::vector<std::shared_ptr<ListObject>> mutated_lists_;
};

// Python semantics shared by the evaluator and the builtins.
Result<Value> py_slice(const Value& value, const Value& start, const Value& stop,
                       const Value& step);
Result<int> py_compare(const Value& a, const Value& b);  // <0, 0, >0; TypeError when unordered
Result<bool> py_contains(const Value& container, const Value& item);
Result<std::int64_t> py_len(const Value& value);
// str % args (printf-style formatting as Python's str.__mod__, for %s %d %i %r %f %%).
Result<std::string> py_percent_format(const std::string& format, const Value& args);

// markupsafe's escape (& < > " ').
std::string html_escape(const std::string& s);

// Builtins, in filters.cpp, tests.cpp and methods.cpp.
Result<Value> builtin_filter(Evaluator& ev, std::string_view name, const Value& input,
                             const CallArgs& args);
Result<bool> builtin_test(Evaluator& ev, std::string_view name, const Value& input,
                          const CallArgs& args);
// The bound method `object.name` (a function value), nullopt when the type has no such method,
// or an error for methods the immutable sandbox refuses.
Result<std::optional<Value>> bound_method(Evaluator& ev, const Value& object,
                                          std::string_view name);
// range, dict, namespace, raise_exception, strftime_now, cycler, joiner.
void add_globals(Evaluator& ev, Frame& frame);

}  // namespace eredu::jinja::detail
