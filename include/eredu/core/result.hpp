#pragma once
// Result<T, E>: an expected-like value-or-error for C++20 (std::expected is C++23).
//
// It is [[nodiscard]]; `value()` on an error (or `error()` on a value) is a programming bug and
// terminates rather than throwing, because no exception may escape the library. Use
// `EREDU_TRY(var, expr)` / `EREDU_TRY_VOID(expr)` to propagate errors.

#include <cstdio>
#include <exception>
#include <optional>
#include <type_traits>
#include <utility>
#include <variant>

#include "eredu/core/error.hpp"

namespace eredu {

// Wraps an error so that constructing a Result from it is unambiguous.
template <typename E>
class Unexpected {
 public:
  explicit Unexpected(E error) : error_(std::move(error)) {}
  [[nodiscard]] E& error() & noexcept { return error_; }
  [[nodiscard]] const E& error() const& noexcept { return error_; }
  [[nodiscard]] E&& error() && noexcept { return std::move(error_); }

 private:
  E error_;
};

template <typename E>
Unexpected(E) -> Unexpected<E>;

// Shorthand for the common case: `return fail(ErrorCode::kInvalidModel, "...")`.
inline Unexpected<Error> fail(ErrorCode code, std::string message) {
  return Unexpected<Error>(Error(code, std::move(message)));
}
inline Unexpected<Error> fail(Error error) {
  return Unexpected<Error>(std::move(error));
}

namespace detail {
[[noreturn]] inline void bad_result_access(const char* what) noexcept {
  std::fprintf(stderr, "eredu: fatal: %s\n", what);
  std::terminate();
}
}  // namespace detail

template <typename T, typename E = Error>
class [[nodiscard]] Result {
  static_assert(!std::is_reference_v<T>, "Result<T&> is not supported; use a pointer");

 public:
  using value_type = T;
  using error_type = E;

  template <typename U = T>
  requires std::is_constructible_v<T, U&&> &&(!std::is_same_v<std::remove_cvref_t<U>, Result>)&&(
      !std::is_same_v<std::remove_cvref_t<U>, Unexpected<E>>)Result(U&& value)
      : storage_(std::in_place_index<0>, std::forward<U>(value)) {}  // NOLINT

  template <typename G>
  requires std::is_constructible_v<E, G&&> Result(
      Unexpected<G> error)  // NOLINT: implicit like std::expected
      : storage_(std::in_place_index<1>, std::move(error).error()) {}

  [[nodiscard]] bool has_value() const noexcept { return storage_.index() == 0; }
  explicit operator bool() const noexcept { return has_value(); }

  [[nodiscard]] T& value() & { return check_value(), std::get<0>(storage_); }
  [[nodiscard]] const T& value() const& { return check_value(), std::get<0>(storage_); }
  [[nodiscard]] T&& value() && { return check_value(), std::get<0>(std::move(storage_)); }
  [[nodiscard]] E& error() & { return check_error(), std::get<1>(storage_); }
  [[nodiscard]] const E& error() const& { return check_error(), std::get<1>(storage_); }
  [[nodiscard]] E&& error() && { return check_error(), std::get<1>(std::move(storage_)); }

  T& operator*() & { return value(); }
  const T& operator*() const& { return value(); }
  T&& operator*() && { return std::move(*this).value(); }
  T* operator->() { return &value(); }
  const T* operator->() const { return &value(); }

  template <typename U>
  [[nodiscard]] T value_or(U&& fallback) const& {
    return has_value() ? std::get<0>(storage_) : static_cast<T>(std::forward<U>(fallback));
  }

  // Calls f(value) -> Result<U, E> when holding a value; forwards the error otherwise.
  template <typename F>
  auto and_then(F&& f) && {
    using R = std::invoke_result_t<F, T&&>;
    if (has_value()) return std::forward<F>(f)(std::get<0>(std::move(storage_)));
    return R(Unexpected<E>(std::get<1>(std::move(storage_))));
  }
  // Maps the error with f(E) -> G, keeping the value.
  template <typename F>
  auto transform_error(F&& f) && {
    using G = std::invoke_result_t<F, E&&>;
    if (has_value()) return Result<T, G>(std::get<0>(std::move(storage_)));
    return Result<T, G>(Unexpected<G>(std::forward<F>(f)(std::get<1>(std::move(storage_)))));
  }

 private:
  void check_value() const noexcept {
    if (!has_value()) detail::bad_result_access("Result::value() called on an error");
  }
  void check_error() const noexcept {
    if (has_value()) detail::bad_result_access("Result::error() called on a value");
  }
  std::variant<T, E> storage_;
};

// Result<void, E>: success carries nothing.
template <typename E>
class [[nodiscard]] Result<void, E> {
 public:
  using value_type = void;
  using error_type = E;

  Result() = default;
  template <typename G>
  requires std::is_constructible_v<E, G&&> Result(
      Unexpected<G> error)  // NOLINT: implicit like std::expected
      : error_(std::in_place, std::move(error).error()) {}

  [[nodiscard]] bool has_value() const noexcept { return !error_.has_value(); }
  explicit operator bool() const noexcept { return has_value(); }
  void value() const {
    if (!has_value()) detail::bad_result_access("Result<void>::value() called on an error");
  }
  [[nodiscard]] E& error() & { return check_error(), *error_; }
  [[nodiscard]] const E& error() const& { return check_error(), *error_; }
  [[nodiscard]] E&& error() && { return check_error(), std::move(*error_); }

  template <typename F>
  auto and_then(F&& f) && {
    using R = std::invoke_result_t<F>;
    if (has_value()) return std::forward<F>(f)();
    return R(Unexpected<E>(std::move(*error_)));
  }
  template <typename F>
  auto transform_error(F&& f) && {
    using G = std::invoke_result_t<F, E&&>;
    if (has_value()) return Result<void, G>();
    return Result<void, G>(Unexpected<G>(std::forward<F>(f)(std::move(*error_))));
  }

 private:
  void check_error() const noexcept {
    if (has_value()) detail::bad_result_access("Result<void>::error() called on a value");
  }
  std::optional<E> error_;
};

// A successful Result<void>.
template <typename E = Error>
[[nodiscard]] inline Result<void, E> ok() {
  return Result<void, E>();
}

}  // namespace eredu

#define EREDU_CONCAT_INNER_(a, b) a##b
#define EREDU_CONCAT_(a, b) EREDU_CONCAT_INNER_(a, b)

// EREDU_TRY(auto x, expr): evaluates expr (a Result); on error returns it from the enclosing
// function, otherwise declares `x` initialized with the moved value.
#define EREDU_TRY(decl, expr)                                                           \
  auto EREDU_CONCAT_(eredu_try_, __LINE__) = (expr);                                    \
  if (!EREDU_CONCAT_(eredu_try_, __LINE__).has_value())                                 \
    return ::eredu::Unexpected(std::move(EREDU_CONCAT_(eredu_try_, __LINE__)).error()); \
  decl = std::move(EREDU_CONCAT_(eredu_try_, __LINE__)).value()

// EREDU_TRY_VOID(expr): evaluates expr (a Result<void>); on error returns it.
#define EREDU_TRY_VOID(expr)                                          \
  do {                                                                \
    auto eredu_try_void_ = (expr);                                    \
    if (!eredu_try_void_.has_value())                                 \
      return ::eredu::Unexpected(std::move(eredu_try_void_).error()); \
  } while (false)
