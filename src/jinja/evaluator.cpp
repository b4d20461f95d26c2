// Rendering: statements write into an output string, expressions evaluate to Values with
// Python's semantics. Scoping follows jinja2: every loop iteration, macro call and call/filter/
// generation block body gets its own frame; `set` writes into the innermost one; namespaces are
// the shared objects that let a loop body change what is seen outside it.
// Python's operators and built-in semantics (binary, compare, py_*) are in python_ops.cpp.

#include "evaluator.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

#include "lexer.hpp"
#include "pytext.hpp"

namespace eredu::jinja::detail {
namespace {

bool has_location(const std::string& message) {
  std::size_t i = 0;
  auto digits = [&] {
    const std::size_t start = i;
    while (i < message.size() && message[i] >= '0' && message[i] <= '9')
      ++i;
    return i > start;
  };
  if (!digits() || i >= message.size() || message[i] != ':') return false;
  ++i;
  if (!digits() || i + 1 >= message.size() || message[i] != ':') return false;
  return message[i + 1] == ' ';
}

Error locate(Error error, std::size_t line, std::size_t column) {
  if (has_location(error.message())) return error;
  Error located(error.code(), location_prefix(line, column) + error.message());
  return located;
}

std::string article_name(const Value& v) {
  if (v.is_none()) return "'None'";
  return repr_quoted(v.type_name() + " object");
}

}  // namespace

Unexpected<Error> undefined_error(const Value& v) {
  return type_error(v.undefined_hint().empty() ? "value is undefined" : v.undefined_hint());
}

bool is_integral(const Value& v) {
  return v.is_int() || v.is_bool();
}
std::int64_t to_int(const Value& v) {
  return v.is_int() ? v.as_int() : (v.as_bool() ? 1 : 0);
}

Unexpected<Error> type_error(std::string message) {
  return fail(ErrorCode::kInvalidArgument, std::move(message));
}

const Value* Frame::find(std::string_view name) const {
  for (const Frame* f = this; f != nullptr; f = f->parent.get()) {
    for (auto it = f->vars.rbegin(); it != f->vars.rend(); ++it) {
      if (it->first == name) return &it->second;
    }
  }
  return nullptr;
}

void Frame::set(std::string_view name, Value value) {
  for (auto& [k, v] : vars) {
    if (k == name) {
      v = std::move(value);
      return;
    }
  }
  vars.emplace_back(std::string(name), std::move(value));
}

const Value* Arguments::get(std::size_t position, std::string_view name) const {
  if (position < args_.positional.size()) return &args_.positional[position];
  for (const auto& [k, v] : args_.keywords) {
    if (k == name) return &v;
  }
  return nullptr;
}

Value Arguments::get_or(std::size_t position, std::string_view name, Value fallback) const {
  const Value* v = get(position, name);
  return v != nullptr ? *v : std::move(fallback);
}

Evaluator::Evaluator(const TemplateOptions& options, const RenderInput& input)
    : options_(options), input_(input), root_(std::make_shared<Frame>()) {
  add_globals(*this, *root_);
  for (const auto& [name, value] : input.variables)
    root_->set(name, value);
}

Evaluator::~Evaluator() {
  for (const auto& d : mutated_dicts_)
    d->entries.clear();
  for (const auto& l : mutated_lists_)
    l->items.clear();
}

std::chrono::system_clock::time_point Evaluator::now() const {
  return input_.clock ? input_.clock() : std::chrono::system_clock::now();
}

Result<void> Evaluator::check_size(std::size_t bytes) const {
  if (bytes > options_.limits.max_output_bytes) {
    return fail(ErrorCode::kLimitExceeded, "output larger than " +
                                               std::to_string(options_.limits.max_output_bytes) +
                                               " bytes (TemplateLimits::max_output_bytes)");
  }
  return ok();
}

Result<void> Evaluator::count_iterations(std::size_t n) {
  iterations_ += n;
  if (iterations_ > options_.limits.max_loop_iterations) {
    return fail(ErrorCode::kLimitExceeded,
                "more than " + std::to_string(options_.limits.max_loop_iterations) +
                    " loop iterations (TemplateLimits::max_loop_iterations)");
  }
  return ok();
}

Result<std::string> Evaluator::render(const Body& body) {
  std::string out;
  EREDU_TRY(const Flow flow, exec_body(body, root_, out));
  (void)flow;
  return out;
}

Result<Evaluator::Flow> Evaluator::exec_body(const Body& body, const std::shared_ptr<Frame>& frame,
                                             std::string& out) {
  for (const StmtPtr& s : body) {
    auto flow = exec(*s, frame, out);
    if (!flow) return Unexpected(locate(std::move(flow).error(), s->line, s->column));
    if (*flow != Flow::kNormal) return *flow;
    if (out.size() > options_.limits.max_output_bytes) {
      return Unexpected(locate(check_size(out.size()).error(), s->line, s->column));
    }
  }
  return Flow::kNormal;
}

Result<Evaluator::Flow> Evaluator::exec(const Stmt& s, const std::shared_ptr<Frame>& frame,
                                        std::string& out) {
  switch (s.kind) {
    case Stmt::Kind::kText:
      out += s.text;
      return Flow::kNormal;
    case Stmt::Kind::kOutput: {
      EREDU_TRY(const Value v, eval(*s.expr, frame));
      out += to_str(v);
      return Flow::kNormal;
    }
    case Stmt::Kind::kIf: {
      for (std::size_t i = 0; i < s.conditions.size(); ++i) {
        EREDU_TRY(const Value c, eval(*s.conditions[i], frame));
        if (c.truthy()) return exec_body(s.bodies[i], frame, out);
      }
      return exec_body(s.else_body, frame, out);
    }
    case Stmt::Kind::kFor:
      return exec_for(s, frame, out);
    case Stmt::Kind::kSet: {
      EREDU_TRY(Value v, eval(*s.expr, frame));
      EREDU_TRY_VOID(assign(*s.target, std::move(v), frame));
      return Flow::kNormal;
    }
    case Stmt::Kind::kSetBlock: {
      auto inner = std::make_shared<Frame>();
      inner->parent = frame;
      std::string text;
      EREDU_TRY(const Flow flow, exec_body(s.body, inner, text));
      (void)flow;
      Value v(std::move(text));
      if (s.expr) {
        EREDU_TRY(v, apply_filter_chain(*s.expr, std::move(v), frame));
      }
      frame->set(s.text, std::move(v));
      return Flow::kNormal;
    }
    case Stmt::Kind::kMacro:
      frame->set(s.text, make_macro(s, s.params, s.body, s.text, frame));
      return Flow::kNormal;
    case Stmt::Kind::kCallBlock: {
      const Expr& call_expr = *s.expr;
      EREDU_TRY(const Value callee, eval(*call_expr.children[0], frame));
      EREDU_TRY(CallArgs args, eval_arguments(call_expr, 1, frame));
      args.keywords.emplace_back("caller", make_macro(s, s.params, s.body, "caller", frame));
      EREDU_TRY(const Value v, call(callee, args));
      out += to_str(v);
      return Flow::kNormal;
    }
    case Stmt::Kind::kFilterBlock: {
      auto inner = std::make_shared<Frame>();
      inner->parent = frame;
      std::string text;
      EREDU_TRY(const Flow flow, exec_body(s.body, inner, text));
      (void)flow;
      EREDU_TRY(const Value v, apply_filter_chain(*s.expr, Value(std::move(text)), frame));
      out += to_str(v);
      return Flow::kNormal;
    }
    case Stmt::Kind::kBreak:
      return Flow::kBreak;
    case Stmt::Kind::kContinue:
      return Flow::kContinue;
    case Stmt::Kind::kScope: {
      auto inner = std::make_shared<Frame>();
      inner->parent = frame;
      for (const Parameter& p : s.params) {
        EREDU_TRY(Value v, eval(*p.default_value, frame));
        inner->set(p.name, std::move(v));
      }
      // A generation block is a call block in jinja2: break/continue cannot cross it.
      EREDU_TRY(const Flow flow, exec_body(s.body, inner, out));
      (void)flow;
      return Flow::kNormal;
    }
  }
  return Flow::kNormal;
}

Result<Evaluator::Flow> Evaluator::exec_for(const Stmt& s, const std::shared_ptr<Frame>& frame,
                                            std::string& out) {
  EREDU_TRY(const Value iterable, eval(*s.expr, frame));
  EREDU_TRY(std::vector<Value> items, iterate(iterable));
  auto bind = [&](Frame& f, const Value& item) -> Result<void> {
    if (s.targets.size() == 1) {
      f.set(s.targets[0], item);
      return ok();
    }
    EREDU_TRY(std::vector<Value> parts, iterate(item));
    if (parts.size() != s.targets.size()) {
      return type_error("cannot unpack " + std::to_string(parts.size()) + " values into " +
                        std::to_string(s.targets.size()) + " loop variables");
    }
    for (std::size_t i = 0; i < parts.size(); ++i)
      f.set(s.targets[i], parts[i]);
    return ok();
  };
  if (s.condition) {
    std::vector<Value> kept;
    for (const Value& item : items) {
      EREDU_TRY_VOID(count_iterations(1));
      auto f = std::make_shared<Frame>();
      f->parent = frame;
      EREDU_TRY_VOID(bind(*f, item));
      EREDU_TRY(const Value c, eval(*s.condition, f));
      if (c.truthy()) kept.push_back(item);
    }
    items = std::move(kept);
  }
  if (items.empty()) {
    auto f = std::make_shared<Frame>();
    f->parent = frame;
    return exec_body(s.else_body, f, out);
  }
  const auto n = static_cast<std::int64_t>(items.size());
  for (std::int64_t i = 0; i < n; ++i) {
    EREDU_TRY_VOID(count_iterations(1));
    auto f = std::make_shared<Frame>();
    f->parent = frame;
    EREDU_TRY_VOID(bind(*f, items[static_cast<std::size_t>(i)]));
    auto loop = std::make_shared<DictObject>();
    loop->set("index", Value(i + 1));
    loop->set("index0", Value(i));
    loop->set("revindex", Value(n - i));
    loop->set("revindex0", Value(n - i - 1));
    loop->set("first", Value(i == 0));
    loop->set("last", Value(i == n - 1));
    loop->set("length", Value(n));
    loop->set("depth", Value(1));
    loop->set("depth0", Value(0));
    if (i > 0) loop->set("previtem", items[static_cast<std::size_t>(i - 1)]);
    if (i + 1 < n) loop->set("nextitem", items[static_cast<std::size_t>(i + 1)]);
    loop->set("cycle", Value::function("loop.cycle", [i](const CallArgs& args) -> Result<Value> {
                if (args.positional.empty()) return type_error("no items for cycling given");
                return args.positional[static_cast<std::size_t>(i) % args.positional.size()];
              }));
    f->set("loop", Value(std::move(loop)));
    EREDU_TRY(const Flow flow, exec_body(s.body, f, out));
    if (flow == Flow::kBreak) break;
  }
  return Flow::kNormal;
}

Result<void> Evaluator::assign(const Expr& target, Value value,
                               const std::shared_ptr<Frame>& frame) {
  switch (target.kind) {
    case Expr::Kind::kName:
      frame->set(target.name, std::move(value));
      return ok();
    case Expr::Kind::kTuple: {
      EREDU_TRY(std::vector<Value> parts, iterate(value));
      if (parts.size() != target.children.size()) {
        return type_error("cannot unpack " + std::to_string(parts.size()) + " values into " +
                          std::to_string(target.children.size()) + " names");
      }
      for (std::size_t i = 0; i < parts.size(); ++i) {
        EREDU_TRY_VOID(assign(*target.children[i], parts[i], frame));
      }
      return ok();
    }
    case Expr::Kind::kGetAttr: {
      const std::string& base = target.children[0]->name;
      const Value* ns = frame->find(base);
      if (ns == nullptr || !ns->is_namespace()) {
        return type_error("cannot assign attribute '" + target.name + "' on '" + base +
                          "': it is not a namespace object");
      }
      track(ns->dict_ptr());
      ns->dict_ptr()->set(Value(target.name), std::move(value));
      return ok();
    }
    default:
      return type_error("cannot assign to this expression");
  }
}

Value Evaluator::make_macro(const Stmt& stmt, const std::vector<Parameter>& params,
                            const Body& body, std::string name,
                            const std::shared_ptr<Frame>& closure) {
  auto fn = std::make_shared<Function>();
  fn->name = name;
  fn->is_macro = true;
  std::weak_ptr<Frame> weak = closure;
  // The closure is held strongly: macros stored in their own defining frame form a cycle that
  // the render's end breaks (Evaluator::render's frames die with the evaluator only if weak),
  // so hold the frame weakly and fall back to the root when it is gone.
  fn->call = [this, &stmt, &params, &body, name, weak](const CallArgs& args) -> Result<Value> {
    if (call_depth_ >= options_.limits.max_call_depth) {
      return fail(ErrorCode::kLimitExceeded, location_prefix(stmt.line, stmt.column) + "macro '" +
                                                 name + "' nested deeper than " +
                                                 std::to_string(options_.limits.max_call_depth) +
                                                 " calls (TemplateLimits::max_call_depth)");
    }
    auto f = std::make_shared<Frame>();
    f->parent = weak.lock();
    if (!f->parent) f->parent = root_;
    std::size_t used_keywords = 0;
    for (std::size_t i = 0; i < params.size(); ++i) {
      const Parameter& p = params[i];
      const Value* given = nullptr;
      if (i < args.positional.size()) given = &args.positional[i];
      for (const auto& [k, v] : args.keywords) {
        if (k == p.name) {
          given = &v;
          ++used_keywords;
        }
      }
      if (given != nullptr) {
        f->set(p.name, *given);
      } else if (p.default_value) {
        auto v = eval(*p.default_value, f);
        if (!v) return Unexpected(std::move(v).error());
        f->set(p.name, std::move(v).value());
      } else {
        f->set(p.name, Value::undefined("parameter '" + p.name + "' was not provided"));
      }
    }
    std::vector<Value> extra;
    for (std::size_t i = params.size(); i < args.positional.size(); ++i) {
      extra.push_back(args.positional[i]);
    }
    f->set("varargs", Value::list(std::move(extra)));
    auto kwargs = std::make_shared<DictObject>();
    for (const auto& keyword : args.keywords) {
      const std::string& k = keyword.first;
      const Value& v = keyword.second;
      const bool is_param = std::any_of(params.begin(), params.end(),
                                        [&k](const Parameter& p) { return p.name == k; });
      if (k == "caller") {
        f->set("caller", v);
      } else if (!is_param) {
        kwargs->set(Value(k), v);
      }
    }
    (void)used_keywords;
    f->set("kwargs", Value(std::move(kwargs)));
    ++call_depth_;
    std::string out;
    auto flow = exec_body(body, f, out);
    --call_depth_;
    if (!flow) return Unexpected(std::move(flow).error());
    return Value(std::move(out));
  };
  return Value(std::move(fn));
}

Result<Value> Evaluator::apply_filter_chain(const Expr& chain, Value input,
                                            const std::shared_ptr<Frame>& frame) {
  if (chain.kind != Expr::Kind::kFilter) return eval(chain, frame);
  Value base = std::move(input);
  if (chain.children[0]) {
    EREDU_TRY(base, apply_filter_chain(*chain.children[0], std::move(base), frame));
  }
  EREDU_TRY(const CallArgs args, eval_arguments(chain, 1, frame));
  auto r = apply_filter(chain.name, base, args);
  if (!r) return Unexpected(locate(std::move(r).error(), chain.line, chain.column));
  return r;
}

Result<CallArgs> Evaluator::eval_arguments(const Expr& expr, std::size_t first,
                                           const std::shared_ptr<Frame>& frame) {
  CallArgs args;
  for (std::size_t i = first; i < expr.children.size(); ++i) {
    EREDU_TRY(Value v, eval(*expr.children[i], frame));
    args.positional.push_back(std::move(v));
  }
  for (const auto& [k, e] : expr.keywords) {
    EREDU_TRY(Value v, eval(*e, frame));
    args.keywords.emplace_back(k, std::move(v));
  }
  return args;
}

Result<Value> Evaluator::eval(const Expr& expr, const std::shared_ptr<Frame>& frame) {
  auto r = eval_inner(expr, frame);
  if (!r) return Unexpected(locate(std::move(r).error(), expr.line, expr.column));
  return r;
}

Result<Value> Evaluator::eval_inner(const Expr& e, const std::shared_ptr<Frame>& frame) {
  switch (e.kind) {
    case Expr::Kind::kLiteral:
      return e.value;
    case Expr::Kind::kName: {
      const Value* v = frame->find(e.name);
      if (v == nullptr) return Value::undefined(repr_quoted(e.name) + " is undefined");
      return *v;
    }
    case Expr::Kind::kList:
    case Expr::Kind::kTuple: {
      std::vector<Value> items;
      for (const ExprPtr& c : e.children) {
        EREDU_TRY(Value v, eval(*c, frame));
        items.push_back(std::move(v));
      }
      return Value::list(std::move(items), e.kind == Expr::Kind::kTuple);
    }
    case Expr::Kind::kDict: {
      auto d = std::make_shared<DictObject>();
      for (std::size_t i = 0; i + 1 < e.children.size(); i += 2) {
        EREDU_TRY(Value k, eval(*e.children[i], frame));
        EREDU_TRY(Value v, eval(*e.children[i + 1], frame));
        if (k.is_list() || k.is_dict() || k.is_undefined()) {
          return type_error("unhashable type: '" + k.type_name() + "'");
        }
        d->set(std::move(k), std::move(v));
      }
      return Value(std::move(d));
    }
    case Expr::Kind::kGetAttr: {
      EREDU_TRY(const Value base, eval(*e.children[0], frame));
      return get_attribute(base, e.name);
    }
    case Expr::Kind::kGetItem: {
      EREDU_TRY(const Value base, eval(*e.children[0], frame));
      EREDU_TRY(const Value key, eval(*e.children[1], frame));
      return get_item(base, key);
    }
    case Expr::Kind::kSlice: {
      EREDU_TRY(const Value base, eval(*e.children[0], frame));
      Value parts[3] = {Value::none(), Value::none(), Value::none()};
      for (int i = 0; i < 3; ++i) {
        if (e.children[static_cast<std::size_t>(i) + 1]) {
          EREDU_TRY(parts[i], eval(*e.children[static_cast<std::size_t>(i) + 1], frame));
        }
      }
      if (base.is_undefined()) return undefined_error(base);
      return py_slice(base, parts[0], parts[1], parts[2]);
    }
    case Expr::Kind::kCall: {
      EREDU_TRY(const Value callee, eval(*e.children[0], frame));
      EREDU_TRY(const CallArgs args, eval_arguments(e, 1, frame));
      return call(callee, args);
    }
    case Expr::Kind::kFilter: {
      Value input;
      if (e.children[0]) {
        EREDU_TRY(input, eval(*e.children[0], frame));
      }
      EREDU_TRY(const CallArgs args, eval_arguments(e, 1, frame));
      return apply_filter(e.name, input, args);
    }
    case Expr::Kind::kTest: {
      EREDU_TRY(const Value subject, eval(*e.children[0], frame));
      EREDU_TRY(const CallArgs args, eval_arguments(e, 1, frame));
      EREDU_TRY(const bool r, apply_test(e.name, subject, args));
      return Value(r != e.negated);
    }
    case Expr::Kind::kUnary: {
      EREDU_TRY(const Value v, eval(*e.children[0], frame));
      if (e.name == "not") return Value(!v.truthy());
      if (v.is_undefined()) return undefined_error(v);
      if (!v.is_number()) {
        return type_error("bad operand type for unary " + e.name + ": '" + v.type_name() + "'");
      }
      if (e.name == "+") return v.is_bool() ? Value(to_int(v)) : v;
      if (v.is_float()) return Value(-v.as_float());
      const std::int64_t i = to_int(v);
      if (i == std::numeric_limits<std::int64_t>::min()) return type_error("integer overflow");
      return Value(-i);
    }
    case Expr::Kind::kBinary: {
      EREDU_TRY(const Value a, eval(*e.children[0], frame));
      if (e.name == "and") {
        if (!a.truthy()) return a;
        return eval(*e.children[1], frame);
      }
      if (e.name == "or") {
        if (a.truthy()) return a;
        return eval(*e.children[1], frame);
      }
      EREDU_TRY(const Value b, eval(*e.children[1], frame));
      return binary(e.name, a, b);
    }
    case Expr::Kind::kCompare: {
      EREDU_TRY(Value left, eval(*e.children[0], frame));
      for (std::size_t i = 0; i < e.ops.size(); ++i) {
        EREDU_TRY(Value right, eval(*e.children[i + 1], frame));
        EREDU_TRY(const bool r, compare(e.ops[i], left, right));
        if (!r) return Value(false);
        left = std::move(right);
      }
      return Value(true);
    }
    case Expr::Kind::kCondition: {
      EREDU_TRY(const Value c, eval(*e.children[1], frame));
      if (c.truthy()) return eval(*e.children[0], frame);
      if (e.children[2]) return eval(*e.children[2], frame);
      return Value::undefined(
          "the inline if-expression evaluated to false and no else section "
          "was defined");
    }
  }
  return type_error("unknown expression");
}

Result<Value> Evaluator::call(const Value& callee, const CallArgs& args) {
  if (callee.is_undefined()) return undefined_error(callee);
  if (!callee.is_function()) {
    return type_error(repr_quoted(callee.type_name()) + " object is not callable");
  }
  return callee.function_ptr()->call(args);
}

Result<std::vector<Value>> Evaluator::iterate(const Value& v) {
  switch (v.kind()) {
    case Value::Kind::kUndefined:
      return std::vector<Value>{};
    case Value::Kind::kList:
      return v.items();
    case Value::Kind::kDict: {
      if (v.is_namespace()) return type_error("'Namespace' object is not iterable");
      std::vector<Value> keys;
      for (const auto& [k, val] : v.dict_ptr()->entries)
        keys.push_back(k);
      return keys;
    }
    case Value::Kind::kString: {
      std::vector<Value> chars;
      const auto cps = decode_utf8(v.as_string());
      for (std::size_t i = 0; i < cps.size(); ++i)
        chars.emplace_back(encode_utf8(cps, i, i + 1));
      return chars;
    }
    default:
      return type_error(repr_quoted(v.type_name()) + " object is not iterable");
  }
}

Result<Value> Evaluator::get_attribute(const Value& object, std::string_view name) {
  if (object.is_undefined()) return undefined_error(object);
  const std::string missing =
      article_name(object) + " has no attribute '" + std::string(name) + "'";
  if (!name.empty() && name[0] == '_') return Value::undefined(missing);
  if (object.is_namespace()) {
    const Value* v = object.dict_ptr()->find(name);
    if (v != nullptr) return *v;
    return Value::undefined(missing);
  }
  EREDU_TRY(std::optional<Value> method, bound_method(*this, object, name));
  if (method) return *method;
  if (object.is_dict()) {
    const Value* v = object.dict_ptr()->find(name);
    if (v != nullptr) return *v;
  }
  return Value::undefined(missing);
}

Result<Value> Evaluator::get_item(const Value& object, const Value& key) {
  if (object.is_undefined()) return undefined_error(object);
  if (object.is_dict() && !object.is_namespace()) {
    const Value* v = object.dict_ptr()->find(key);
    if (v != nullptr) return *v;
  } else if (object.is_list() && is_integral(key)) {
    if (object.list_ptr()->generator) return type_error("'generator' object is not subscriptable");
    const auto& items = object.items();
    std::int64_t i = to_int(key);
    const auto n = static_cast<std::int64_t>(items.size());
    if (i < 0) i += n;
    if (i >= 0 && i < n) return items[static_cast<std::size_t>(i)];
    return Value::undefined(article_name(object) + " has no element " + to_str(key));
  } else if (object.is_string() && is_integral(key)) {
    const auto cps = decode_utf8(object.as_string());
    std::int64_t i = to_int(key);
    const auto n = static_cast<std::int64_t>(cps.size());
    if (i < 0) i += n;
    if (i >= 0 && i < n) {
      return Value(encode_utf8(cps, static_cast<std::size_t>(i), static_cast<std::size_t>(i) + 1));
    }
    return Value::undefined("'str object' has no element " + to_str(key));
  }
  if (key.is_string()) return get_attribute(object, key.as_string());
  return Value::undefined(article_name(object) + " has no element " + to_repr(key));
}

Result<Value> Evaluator::apply_filter(std::string_view name, const Value& input,
                                      const CallArgs& args) {
  return builtin_filter(*this, name, input, args);
}

Result<bool> Evaluator::apply_test(std::string_view name, const Value& input,
                                   const CallArgs& args) {
  return builtin_test(*this, name, input, args);
}

}  // namespace eredu::jinja::detail
