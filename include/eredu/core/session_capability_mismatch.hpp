#pragma once
// session_capability_mismatch(backend, admitted, realized): the customization point that builds a
// backend's error for a session whose realized capabilities differ from those admitted before
// materialization (ModelRuntime reports the difference through it).
//
// Resolution, in order:
//   1. the backend's member `b.session_capability_mismatch(admitted, realized)` returning
//      `B::error`, when it has one;
//   2. otherwise, when `B::error` is constructible from eredu::Error, an internal error
//      (ErrorCode::kInternal) naming both capability sets.
// A backend that has neither does not satisfy BackendProvider (the concept checks that this call
// is well-formed). Backends whose admitted and realized reports cannot differ may rely on 2.

#include <concepts>
#include <string>

#include "eredu/core/capabilities.hpp"
#include "eredu/core/error.hpp"

namespace eredu {

// The default error: "session realized capabilities {...} but {...} were admitted ...".
[[nodiscard]] inline Error default_session_capability_mismatch(
    const SessionCapabilities& admitted, const SessionCapabilities& realized) {
  return Error(ErrorCode::kInternal,
               "session realized capabilities {" + describe_capabilities(realized) + "} but {" +
                   describe_capabilities(admitted) + "} were admitted before materialization")
      .with_subject("session capabilities");
}

namespace detail {

template <typename B>
concept has_member_session_capability_mismatch = requires(const B& backend,
                                                          const SessionCapabilities& caps) {
  typename B::error;
  { backend.session_capability_mismatch(caps, caps) } -> std::same_as<typename B::error>;
};

template <typename B>
concept has_default_session_capability_mismatch = requires {
  typename B::error;
}
&&std::constructible_from<typename B::error, Error>;

struct SessionCapabilityMismatchFn {
  template <typename B>
  requires has_member_session_capability_mismatch<B> || has_default_session_capability_mismatch<B>
  typename B::error operator()(const B& backend, const SessionCapabilities& admitted,
                               const SessionCapabilities& realized) const {
    if constexpr (has_member_session_capability_mismatch<B>) {
      return backend.session_capability_mismatch(admitted, realized);
    } else {
      return typename B::error(default_session_capability_mismatch(admitted, realized));
    }
  }
};

}  // namespace detail

inline constexpr detail::SessionCapabilityMismatchFn session_capability_mismatch{};

}  // namespace eredu
