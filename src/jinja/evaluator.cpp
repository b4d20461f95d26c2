// Rendering: statements write into an output string, expressions evaluate to Values with
// Python's semantics. Scoping follows jinja2: every loop iteration, macro call and call/filter/
// generation block body gets its own frame; `set` writes into the innermost one; namespaces are
// the shared objects that let a loop body change what is seen outside it.

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

Unexpected<Error> undefined_error(const Value& v) {
  return type_error(v.undefined_hint().empty() ? "value is undefined" : v.undefined_hint());
}

std::string article_name(const Value& v) {
  if (v.is_none()) return "'None'";
  return quoted(v.type_name() + " object");
}

bool is_integral(const Value& v) {
  return v.is_int() || v.is_bool();
}
std::int64_t to_int(const Value& v) {
  return v.is_int() ? v.as_int() : (v.as_bool() ? 1 : 0);
}

}  // namespace

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
      if (v == nullptr) return Value::undefined(quoted(e.name) + " is undefined");
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
    return type_error(quoted(callee.type_name()) + " object is not callable");
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
      return type_error(quoted(v.type_name()) + " object is not iterable");
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

Result<Value> Evaluator::binary(const std::string& op, const Value& a, const Value& b) {
  if (op == "~") {
    std::string s = to_str(a);
    const std::string t = to_str(b);
    EREDU_TRY_VOID(check_size(s.size() + t.size()));
    return Value(s + t);
  }
  if (a.is_undefined()) return undefined_error(a);
  if (b.is_undefined()) return undefined_error(b);
  auto unsupported = [&]() {
    return type_error("unsupported operand type(s) for " + op + ": '" + a.type_name() + "' and '" +
                      b.type_name() + "'");
  };
  if (a.is_number() && b.is_number()) {
    const bool ints = !a.is_float() && !b.is_float();
    if (ints) {
      const std::int64_t x = to_int(a);
      const std::int64_t y = to_int(b);
      std::int64_t r = 0;
      if (op == "+") {
        if (__builtin_add_overflow(x, y, &r)) return type_error("integer overflow");
        return Value(r);
      }
      if (op == "-") {
        if (__builtin_sub_overflow(x, y, &r)) return type_error("integer overflow");
        return Value(r);
      }
      if (op == "*") {
        if (__builtin_mul_overflow(x, y, &r)) return type_error("integer overflow");
        return Value(r);
      }
      if (op == "/") {
        if (y == 0) return type_error("division by zero");
        return Value(static_cast<double>(x) / static_cast<double>(y));
      }
      if (op == "//" || op == "%") {
        if (y == 0) return type_error("integer division or modulo by zero");
        if (x == std::numeric_limits<std::int64_t>::min() && y == -1) {
          return type_error("integer overflow");
        }
        std::int64_t q = x / y;
        std::int64_t m = x % y;
        if (m != 0 && ((m < 0) != (y < 0))) {
          --q;
          m += y;
        }
        return Value(op == "//" ? q : m);
      }
      if (op == "**") {
        if (y < 0) return Value(std::pow(static_cast<double>(x), static_cast<double>(y)));
        std::int64_t result = 1;
        std::int64_t base = x;
        std::int64_t exp = y;
        while (exp > 0) {
          if ((exp & 1) != 0 && __builtin_mul_overflow(result, base, &result)) {
            return type_error("integer overflow");
          }
          exp >>= 1;
          if (exp > 0 && __builtin_mul_overflow(base, base, &base)) {
            return type_error("integer overflow");
          }
        }
        return Value(result);
      }
    } else {
      const double x = a.as_number();
      const double y = b.as_number();
      if (op == "+") return Value(x + y);
      if (op == "-") return Value(x - y);
      if (op == "*") return Value(x * y);
      if (op == "/") {
        if (y == 0) return type_error("float division by zero");
        return Value(x / y);
      }
      if (op == "//" || op == "%") {
        if (y == 0) return type_error("float modulo");
        double m = std::fmod(x, y);
        if (m != 0 && ((m < 0) != (y < 0))) m += y;
        if (op == "%") return Value(m);
        return Value(std::floor(x / y));
      }
      if (op == "**") return Value(std::pow(x, y));
    }
    return unsupported();
  }
  if (op == "+") {
    if (a.is_string() && b.is_string() && (a.is_markup() || b.is_markup())) {
      std::string out = a.is_markup() ? a.as_string() : html_escape(a.as_string());
      out += b.is_markup() ? b.as_string() : html_escape(b.as_string());
      EREDU_TRY_VOID(check_size(out.size()));
      return Value::markup(std::move(out));
    }
    if (a.is_string() && b.is_string()) {
      EREDU_TRY_VOID(check_size(a.as_string().size() + b.as_string().size()));
      return Value(a.as_string() + b.as_string());
    }
    if (a.is_string()) {
      return type_error("can only concatenate str (not \"" + b.type_name() + "\") to str");
    }
    if (a.is_list() && b.is_list() && !a.list_ptr()->generator && !b.list_ptr()->generator &&
        a.list_ptr()->tuple == b.list_ptr()->tuple) {
      std::vector<Value> items = a.items();
      items.insert(items.end(), b.items().begin(), b.items().end());
      return Value::list(std::move(items), a.list_ptr()->tuple);
    }
    return unsupported();
  }
  if (op == "*") {
    const Value* seq = is_integral(b) ? &a : (is_integral(a) ? &b : nullptr);
    const Value* count = seq == &a ? &b : &a;
    if (seq != nullptr && (seq->is_string() || (seq->is_list() && !seq->list_ptr()->generator))) {
      const std::int64_t n = std::max<std::int64_t>(0, to_int(*count));
      const std::size_t unit = seq->is_string() ? seq->as_string().size() : seq->items().size();
      if (unit != 0 && static_cast<std::uint64_t>(n) > options_.limits.max_output_bytes / unit) {
        return Unexpected(check_size(options_.limits.max_output_bytes + 1).error());
      }
      if (seq->is_string()) {
        std::string out;
        for (std::int64_t i = 0; i < n; ++i)
          out += seq->as_string();
        return Value(std::move(out));
      }
      std::vector<Value> items;
      for (std::int64_t i = 0; i < n; ++i) {
        items.insert(items.end(), seq->items().begin(), seq->items().end());
      }
      return Value::list(std::move(items), seq->list_ptr()->tuple);
    }
    return unsupported();
  }
  if (op == "%" && a.is_string()) {
    EREDU_TRY(std::string s, py_percent_format(a.as_string(), b));
    return Value(std::move(s));
  }
  return unsupported();
}

Result<bool> Evaluator::compare(const std::string& op, const Value& a, const Value& b) {
  if (op == "==") return equals(a, b);
  if (op == "!=") return !equals(a, b);
  if (op == "in") return py_contains(b, a);
  if (op == "not in") {
    EREDU_TRY(const bool r, py_contains(b, a));
    return !r;
  }
  if (a.is_undefined()) return undefined_error(a);
  if (b.is_undefined()) return undefined_error(b);
  auto c = py_compare(a, b);
  if (!c) {
    return type_error(quoted(op) + " not supported between instances of '" + a.type_name() +
                      "' and '" + b.type_name() + "'");
  }
  const int r = *c;
  if (op == "<") return r < 0;
  if (op == "<=") return r <= 0;
  if (op == ">") return r > 0;
  return r >= 0;
}

Result<int> py_compare(const Value& a, const Value& b) {
  if (a.is_number() && b.is_number()) {
    if (!a.is_float() && !b.is_float()) {
      const std::int64_t x = to_int(a);
      const std::int64_t y = to_int(b);
      return x < y ? -1 : (x > y ? 1 : 0);
    }
    const double x = a.as_number();
    const double y = b.as_number();
    return x < y ? -1 : (x > y ? 1 : 0);
  }
  if (a.is_string() && b.is_string()) {
    const int c = a.as_string().compare(b.as_string());
    return c < 0 ? -1 : (c > 0 ? 1 : 0);
  }
  if (a.is_list() && b.is_list() && !a.list_ptr()->generator && !b.list_ptr()->generator) {
    const auto& x = a.items();
    const auto& y = b.items();
    for (std::size_t i = 0; i < x.size() && i < y.size(); ++i) {
      if (equals(x[i], y[i])) continue;
      return py_compare(x[i], y[i]);
    }
    return x.size() < y.size() ? -1 : (x.size() > y.size() ? 1 : 0);
  }
  return type_error("'<' not supported between instances of '" + a.type_name() + "' and '" +
                    b.type_name() + "'");
}

Result<bool> py_contains(const Value& container, const Value& item) {
  switch (container.kind()) {
    case Value::Kind::kUndefined:
      return false;
    case Value::Kind::kString:
      if (!item.is_string()) {
        return type_error("'in <string>' requires string as left operand, not " + item.type_name());
      }
      return container.as_string().find(item.as_string()) != std::string::npos;
    case Value::Kind::kList:
      return std::any_of(container.items().begin(), container.items().end(),
                         [&](const Value& v) { return equals(v, item); });
    case Value::Kind::kDict:
      if (container.is_namespace()) break;
      return container.dict_ptr()->find(item) != nullptr;
    default:
      break;
  }
  return type_error("argument of type '" + container.type_name() + "' is not iterable");
}

Result<std::int64_t> py_len(const Value& v) {
  switch (v.kind()) {
    case Value::Kind::kUndefined:
      return std::int64_t{0};
    case Value::Kind::kString:
      return static_cast<std::int64_t>(code_point_count(v.as_string()));
    case Value::Kind::kList:
      if (v.list_ptr()->generator) return type_error("object of type 'generator' has no len()");
      return static_cast<std::int64_t>(v.items().size());
    case Value::Kind::kDict:
      if (v.is_namespace()) break;
      return static_cast<std::int64_t>(v.dict_ptr()->entries.size());
    default:
      break;
  }
  return type_error("object of type '" + v.type_name() + "' has no len()");
}

Result<Value> py_slice(const Value& value, const Value& start_v, const Value& stop_v,
                       const Value& step_v) {
  std::vector<std::uint32_t> cps;
  std::int64_t n = 0;
  if (value.is_string()) {
    cps = decode_utf8(value.as_string());
    n = static_cast<std::int64_t>(cps.size());
  } else if (value.is_list() && !value.list_ptr()->generator) {
    n = static_cast<std::int64_t>(value.items().size());
  } else {
    return type_error(quoted(value.type_name()) + " object is not subscriptable");
  }
  auto as_index = [](const Value& v, const char* what) -> Result<std::optional<std::int64_t>> {
    if (v.is_none() || v.is_undefined()) return std::optional<std::int64_t>();
    if (!is_integral(v)) {
      return type_error(std::string("slice ") + what + " must be an integer or None");
    }
    return std::optional<std::int64_t>(to_int(v));
  };
  EREDU_TRY(const auto step_o, as_index(step_v, "step"));
  const std::int64_t step = step_o.value_or(1);
  if (step == 0) return type_error("slice step cannot be zero");
  EREDU_TRY(const auto start_o, as_index(start_v, "start"));
  EREDU_TRY(const auto stop_o, as_index(stop_v, "stop"));
  auto clamp = [&](std::optional<std::int64_t> i, std::int64_t dflt) {
    if (!i) return dflt;
    std::int64_t x = *i;
    if (x < 0) x = std::max<std::int64_t>(x + n, step < 0 ? -1 : 0);
    if (x >= n) x = step < 0 ? n - 1 : n;
    return x;
  };
  const std::int64_t start = clamp(start_o, step < 0 ? n - 1 : 0);
  const std::int64_t stop = clamp(stop_o, step < 0 ? -1 : n);
  std::vector<std::size_t> picks;
  if (step > 0) {
    for (std::int64_t i = start; i < stop; i += step)
      picks.push_back(static_cast<std::size_t>(i));
  } else {
    for (std::int64_t i = start; i > stop; i += step)
      picks.push_back(static_cast<std::size_t>(i));
  }
  if (value.is_string()) {
    std::string out;
    for (std::size_t i : picks)
      append_code_point(out, cps[i]);
    return Value(std::move(out));
  }
  std::vector<Value> items;
  for (std::size_t i : picks)
    items.push_back(value.items()[i]);
  return Value::list(std::move(items), value.list_ptr()->tuple);
}

Result<std::string> py_percent_format(const std::string& format, const Value& args) {
  std::vector<Value> values;
  if (args.is_list() && args.list_ptr()->tuple) {
    values = args.items();
  } else {
    values.push_back(args);
  }
  std::string out;
  std::size_t next = 0;
  for (std::size_t i = 0; i < format.size(); ++i) {
    if (format[i] != '%') {
      out += format[i];
      continue;
    }
    if (i + 1 >= format.size()) return type_error("incomplete format");
    const char spec = format[++i];
    if (spec == '%') {
      out += '%';
      continue;
    }
    if (next >= values.size()) return type_error("not enough arguments for format string");
    const Value& v = values[next++];
    if (spec == 's') {
      out += to_str(v);
    } else if (spec == 'r') {
      out += to_repr(v);
    } else if (spec == 'd' || spec == 'i') {
      if (!v.is_number()) return type_error("%d format: a real number is required");
      out += std::to_string(v.is_float() ? static_cast<std::int64_t>(v.as_float()) : to_int(v));
    } else if (spec == 'f') {
      if (!v.is_number()) return type_error("%f format: a real number is required");
      char buf[64];
      std::snprintf(buf, sizeof buf, "%f", v.as_number());
      out += buf;
    } else {
      return type_error(std::string("unsupported format character '") + spec + "'");
    }
  }
  if (next < values.size()) {
    return type_error("not all arguments converted during string formatting");
  }
  return out;
}

}  // namespace eredu::jinja::detail
