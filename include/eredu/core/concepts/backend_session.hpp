#pragma once
// BackendSession<S, B>: the execution session of backend B (B::session).
//
// Associated types: prefill_input, decode_input, output (e.g. a logits handle that stays on the
// device), observation (what observe_output reads back to the host), completion (a Completion
// whose error_type is B::error).
// Operations:
//   s.capabilities() const                         -> SessionCapabilities (as realized)
//   s.prefill(const B&, prefill_input&&)           -> Result<Submission<output, completion>,
//   B::error> s.decode(const B&, decode_input&&)             -> Result<Submission<output,
//   completion>, B::error> s.observe_output(const B&, const output&) const -> Result<observation,
//   B::error>
// Each submission's completion observes only that submission's work; observe_output is the only
// host read-back (an explicit synchronization, never on the hot path).

#include <concepts>
#include <string_view>
#include <utility>

#include "eredu/core/capabilities.hpp"
#include "eredu/core/completion.hpp"
#include "eredu/core/concepts/completion.hpp"
#include "eredu/core/concepts/diagnose.hpp"
#include "eredu/core/result.hpp"

namespace eredu::backend_session_requirements {

template <typename S>
concept has_prefill_input = requires {
  typename S::prefill_input;
};
template <typename S>
concept has_decode_input = requires {
  typename S::decode_input;
};
template <typename S>
concept has_output = requires {
  typename S::output;
};
template <typename S>
concept has_observation = requires {
  typename S::observation;
};
template <typename S>
concept has_completion = requires {
  typename S::completion;
};
template <typename S>
concept completion_is_completion = has_completion<S> && Completion<typename S::completion>;
template <typename S, typename B>
concept completion_error_is_backend_error = completion_is_completion<S> && requires {
  typename B::error;
} && std::same_as<typename S::completion::error_type, typename B::error>;
template <typename S>
concept is_movable = std::is_object_v<S> && std::move_constructible<S>;
template <typename S>
concept has_capabilities = requires(const S& s) {
  { s.capabilities() } -> std::same_as<SessionCapabilities>;
};
template <typename S, typename B>
concept has_prefill = has_prefill_input<S> && has_output<S> &&
    completion_error_is_backend_error<S, B> &&
    requires(S& s, const B& backend, typename S::prefill_input&& input) {
  {
    s.prefill(backend, std::move(input))
    } -> std::same_as<
        Result<Submission<typename S::output, typename S::completion>, typename B::error>>;
};
template <typename S, typename B>
concept has_decode = has_decode_input<S> && has_output<S> &&
    completion_error_is_backend_error<S, B> &&
    requires(S& s, const B& backend, typename S::decode_input&& input) {
  {
    s.decode(backend, std::move(input))
    } -> std::same_as<
        Result<Submission<typename S::output, typename S::completion>, typename B::error>>;
};
template <typename S, typename B>
concept has_observe_output = has_output<S> && has_observation<S> && requires {
  typename B::error;
} && requires(const S& s, const B& backend, const typename S::output& output) {
  {
    s.observe_output(backend, output)
    } -> std::same_as<Result<typename S::observation, typename B::error>>;
};

}  // namespace eredu::backend_session_requirements

// clang-format off
#define EREDU_BACKEND_SESSION_REQUIREMENTS(X)                                                     \
  X(::eredu::backend_session_requirements::has_prefill_input<S>,                                   \
    "BackendSession: missing associated type prefill_input")                                       \
  X(::eredu::backend_session_requirements::has_decode_input<S>,                                    \
    "BackendSession: missing associated type decode_input")                                        \
  X(::eredu::backend_session_requirements::has_output<S>,                                          \
    "BackendSession: missing associated type output")                                              \
  X(::eredu::backend_session_requirements::has_observation<S>,                                     \
    "BackendSession: missing associated type observation")                                         \
  X(::eredu::backend_session_requirements::has_completion<S>,                                      \
    "BackendSession: missing associated type completion")                                          \
  X(::eredu::backend_session_requirements::completion_is_completion<S>,                            \
    "BackendSession: completion must satisfy Completion (error_type, is_complete(), wait(), "      \
    "move-only); see eredu::diagnose::completion<completion>()")                                   \
  X((::eredu::backend_session_requirements::completion_error_is_backend_error<S, B>),              \
    "BackendSession: completion::error_type must be the backend's error type B::error")            \
  X(::eredu::backend_session_requirements::is_movable<S>,                                          \
    "BackendSession: the session must be a move-constructible object type")                        \
  X(::eredu::backend_session_requirements::has_capabilities<S>,                                    \
    "BackendSession: missing capabilities() const -> SessionCapabilities")                         \
  X((::eredu::backend_session_requirements::has_prefill<S, B>),                                    \
    "BackendSession: missing prefill(const B&, prefill_input&&) -> "                               \
    "Result<Submission<output, completion>, B::error>")                                            \
  X((::eredu::backend_session_requirements::has_decode<S, B>),                                     \
    "BackendSession: missing decode(const B&, decode_input&&) -> "                                 \
    "Result<Submission<output, completion>, B::error>")                                            \
  X((::eredu::backend_session_requirements::has_observe_output<S, B>),                             \
    "BackendSession: missing observe_output(const B&, const output&) const -> "                    \
    "Result<observation, B::error>")
// clang-format on

namespace eredu {

template <typename S, typename B>
concept BackendSession =
    true EREDU_BACKEND_SESSION_REQUIREMENTS(EREDU_DETAIL_REQUIREMENT_CONJUNCTION);

namespace diagnose {
template <typename S, typename B>
constexpr std::string_view backend_session_unmet() noexcept {
  EREDU_BACKEND_SESSION_REQUIREMENTS(EREDU_DETAIL_REQUIREMENT_FIRST_UNMET)
  return {};
}
template <typename S, typename B>
consteval bool backend_session() {
  using diagnosed_type [[maybe_unused]] = S;
  EREDU_BACKEND_SESSION_REQUIREMENTS(EREDU_DETAIL_REQUIREMENT_ASSERT)
  return true;
}
}  // namespace diagnose

}  // namespace eredu
