#pragma once
// BackendErrorType<E>: what every backend error type must be (the C++ reading of Rust's
// `Error + Send + Sync + 'static`): an object type that can be moved and describes itself in one
// line. eredu::Error and eredu::BackendError both qualify.

#include <concepts>
#include <string>
#include <type_traits>

namespace eredu {

template <typename E>
concept BackendErrorType = std::is_object_v<E> && std::move_constructible<E> &&
    requires(const E& e) {
  { e.what() } -> std::convertible_to<std::string>;
};

}  // namespace eredu
