#pragma once
// Completion<C>: an exact handle on one submission's work.
//   typename C::error_type
//   c.is_complete() -> Result<bool, error_type>   (non-blocking)
//   c.wait()        -> Result<void, error_type>   (blocks on this work only, never device-wide)
//   movable, not copyable (exactly one owner decides when to wait).
// A completion retains every resource its work needs; its destructor must block or hand the
// resources to an owner that frees them after completion.

#include <concepts>
#include <string_view>
#include <type_traits>

#include "eredu/core/concepts/diagnose.hpp"
#include "eredu/core/result.hpp"

namespace eredu::completion_requirements {
template <typename C>
concept has_error_type = requires {
  typename C::error_type;
};
template <typename C>
concept has_is_complete = has_error_type<C> && requires(C& c) {
  { c.is_complete() } -> std::same_as<Result<bool, typename C::error_type>>;
};
template <typename C>
concept has_wait = has_error_type<C> && requires(C& c) {
  { c.wait() } -> std::same_as<Result<void, typename C::error_type>>;
};
template <typename C>
concept is_movable = std::is_object_v<C> && std::movable<C>;
template <typename C>
concept is_not_copyable = !std::is_copy_constructible_v<C> && !std::is_copy_assignable_v<C>;
}  // namespace eredu::completion_requirements

// clang-format off
#define EREDU_COMPLETION_REQUIREMENTS(X)                                                   \
  X(::eredu::completion_requirements::has_error_type<C>,                                    \
    "Completion: missing associated type error_type")                                       \
  X(::eredu::completion_requirements::has_is_complete<C>,                                   \
    "Completion: missing is_complete() -> Result<bool, error_type>")                        \
  X(::eredu::completion_requirements::has_wait<C>,                                          \
    "Completion: missing wait() -> Result<void, error_type>")                               \
  X(::eredu::completion_requirements::is_movable<C>,                                        \
    "Completion: a completion must be movable")                                             \
  X(::eredu::completion_requirements::is_not_copyable<C>,                                   \
    "Completion: a completion must not be copyable (it is move-only: one owner waits)")
// clang-format on

namespace eredu {

template <typename C>
concept Completion = true EREDU_COMPLETION_REQUIREMENTS(EREDU_DETAIL_REQUIREMENT_CONJUNCTION);

namespace diagnose {
template <typename C>
constexpr std::string_view completion_unmet() noexcept {
  EREDU_COMPLETION_REQUIREMENTS(EREDU_DETAIL_REQUIREMENT_FIRST_UNMET)
  return {};
}
template <typename C>
consteval bool completion() {
  using diagnosed_type [[maybe_unused]] = C;
  EREDU_COMPLETION_REQUIREMENTS(EREDU_DETAIL_REQUIREMENT_ASSERT)
  return true;
}
}  // namespace diagnose

}  // namespace eredu
