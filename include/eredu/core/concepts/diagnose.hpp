#pragma once
// The machinery shared by the concept diagnosers.
//
// Each concept header lists its requirements ONCE, as an X-macro of (condition, message) pairs, and
// derives three things from that list, so they cannot drift apart:
//   * the concept itself: the conjunction of every condition;
//   * `eredu::diagnose::<name>_unmet<T>()`: the message of the first unmet requirement, or an
//     empty string_view when T satisfies the concept (usable in tests and constant expressions);
//   * `eredu::diagnose::<name><T>()`: consteval; true when T satisfies the concept, otherwise a
//     static_assert failure whose message is the first unmet requirement, e.g.
//       "BackendProvider: missing create_session(PreparedModel<model>&&) -> Result<session, error>"
//     Backends write `static_assert(eredu::diagnose::backend_provider<MyBackend>());`.
// Each condition is itself a small concept, so a missing associated type makes the condition
// false instead of producing a hard error, and only the first failure is reported.

#include <string_view>

namespace eredu::diagnose::detail {
template <typename...>
inline constexpr bool dependent_false = false;
}  // namespace eredu::diagnose::detail

// `&& (cond)`: appended after `true` to form the concept's conjunction.
#define EREDU_DETAIL_REQUIREMENT_CONJUNCTION(cond, message) &&(cond)

// One link of an if-constexpr chain that returns the first unmet requirement's message.
#define EREDU_DETAIL_REQUIREMENT_FIRST_UNMET(cond, message) \
  if constexpr (!(cond)) {                                  \
    return std::string_view(message);                       \
  } else  // NOLINT(readability-misleading-indentation)

// One link of an if-constexpr chain that static_asserts the first unmet requirement.
#define EREDU_DETAIL_REQUIREMENT_ASSERT(cond, message)                                  \
  if constexpr (!(cond)) {                                                              \
    static_assert(::eredu::diagnose::detail::dependent_false<diagnosed_type>, message); \
    return false;                                                                       \
  } else  // NOLINT(readability-misleading-indentation)
