#pragma once
// PreparedModel<M>: proof that a backend prepared the executable M, carrying the session
// capabilities admitted BEFORE materialization.
//
// It is move-only (even when M is copyable): `create_session` consumes it, so an executable and its
// mutable cache state have exactly one owner, and nobody can pair a session with a second copy of
// the model. `into_parts()` is the one way to take it apart.

#include <type_traits>
#include <utility>

#include "eredu/core/capabilities.hpp"

namespace eredu {

template <typename M>
struct PreparedModelParts {
  M model;
  SessionCapabilities admitted;
};

template <typename M>
class PreparedModel {
  static_assert(std::is_object_v<M> && !std::is_const_v<M>,
                "PreparedModel<M>: M must be a non-const object type");

 public:
  using model_type = M;

  PreparedModel(M model, SessionCapabilities admitted)
      : model_(std::move(model)), admitted_(admitted) {}

  PreparedModel(const PreparedModel&) = delete;
  PreparedModel& operator=(const PreparedModel&) = delete;
  PreparedModel(PreparedModel&&) noexcept(std::is_nothrow_move_constructible_v<M>) = default;
  PreparedModel& operator=(PreparedModel&&) noexcept(std::is_nothrow_move_assignable_v<M>) =
      default;
  ~PreparedModel() = default;

  // The capabilities admitted before materialization; a session must realize exactly these.
  [[nodiscard]] const SessionCapabilities& admitted_capabilities() const noexcept {
    return admitted_;
  }
  [[nodiscard]] const M& model() const noexcept { return model_; }

  // Consumes the prepared model into its executable and its admitted capabilities.
  [[nodiscard]] PreparedModelParts<M> into_parts() && {
    return PreparedModelParts<M>{std::move(model_), admitted_};
  }

 private:
  M model_;
  SessionCapabilities admitted_;
};

}  // namespace eredu
