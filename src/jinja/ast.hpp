#pragma once
// The parsed template: expression and statement trees. One node type each, with a kind and
// generic children, keeps the parser and evaluator small; every node remembers where it starts.

#include <cstddef>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "eredu/jinja/value.hpp"

namespace eredu::jinja::detail {

struct Expr;
struct Stmt;
using ExprPtr = std::unique_ptr<Expr>;
using StmtPtr = std::unique_ptr<Stmt>;
using Body = std::vector<StmtPtr>;

struct Expr {
  enum class Kind {
    kLiteral,    // value
    kName,       // name
    kList,       // children
    kTuple,      // children
    kDict,       // children: key0, value0, key1, value1, ...
    kGetAttr,    // children[0].name
    kGetItem,    // children[0][children[1]]
    kSlice,      // children[0][children[1]:children[2]:children[3]] (null: omitted)
    kCall,       // children[0](children[1..], keywords)
    kFilter,     // children[0] | name(children[1..], keywords); children[0] null in filter blocks
    kTest,       // children[0] is [not] name(children[1..])
    kUnary,      // op children[0]: "-", "+", "not"
    kBinary,     // children[0] op children[1]: + - * / // % ** ~ and or
    kCompare,    // children[0] ops[0] children[1] ops[1] children[2] ...
    kCondition,  // children[0] if children[1] else children[2] (null: no else)
  };
  Kind kind = Kind::kLiteral;
  std::size_t line = 0;
  std::size_t column = 0;
  std::string name;  // name, attribute, filter/test, or operator
  bool negated = false;
  Value value;
  std::vector<ExprPtr> children;
  std::vector<std::pair<std::string, ExprPtr>> keywords;
  std::vector<std::string> ops;
};

struct Parameter {
  std::string name;
  ExprPtr default_value;  // null: required
};

struct Stmt {
  enum class Kind {
    kText,         // text
    kOutput,       // {{ expr }}
    kIf,           // conditions[i] -> bodies[i]; else_body
    kFor,          // targets in expr [if condition] body [else else_body]
    kSet,          // target = expr (target: Name, Tuple of Names or GetAttr of a Name)
    kSetBlock,     // {% set name %}body{% endset %}, filters applied (expr: filter chain)
    kMacro,        // name(params) body
    kCallBlock,    // {% call(params) expr %}body{% endcall %}
    kFilterBlock,  // {% filter f %}body{% endfilter %}
    kBreak,
    kContinue,
    kScope,  // generation/with: body (with: params are the assignments)
  };
  Kind kind = Kind::kText;
  std::size_t line = 0;
  std::size_t column = 0;
  std::string text;  // text, macro or set-block name
  ExprPtr expr;
  ExprPtr target;
  ExprPtr condition;
  std::vector<std::string> targets;
  std::vector<ExprPtr> conditions;
  std::vector<Body> bodies;
  Body body;
  Body else_body;
  std::vector<Parameter> params;
  bool recursive = false;
};

}  // namespace eredu::jinja::detail
