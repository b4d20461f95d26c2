#pragma once
// ParameterBackend<B> (seed 002): materializes checkpoint data into backend-native weights and
// binds them to parameter slots. Refines NeuralBackend. Operations are STATIC member functions
// (Rust associated functions): they need no backend instance, only the materialization context.
//
// Associated types: parameter (one native parameter slot), materialized_weight,
// materialization_context (e.g. the streams used only while loading), materialization (an in-flight
// guard that retains the encoded source until exact completion), parameter_error. Operations:
//   B::preflight_recipe(const DerivedWeightRecipe&, const CheckpointSource&) -> Result<void,
//   parameter_error>
//       metadata only: no payload lease, no allocation, no device work
//   B::materialize(CheckpointLease&&, const materialization_context&)
//       -> Result<materialization, parameter_error>   (format-preserving: packed stays packed;
//       consumes the lease: by value or by rvalue reference, never by lvalue reference)
//   B::materialize_recipe(const DerivedWeightRecipe&, const CheckpointSource&,
//                         const materialization_context&) -> Result<materialization,
//                         parameter_error>
//   B::borrow_materialized_weight(const materialization&) -> const materialized_weight&
//       (upstream `materialized_weight`; renamed because C++ cannot give a member function and a
//       member type the same name)
//   B::finish_materialization(materialization&&) -> Result<materialized_weight, parameter_error>
//       waits for exactly this work, then releases the lease
//   B::share_materialized_weight(const materialized_weight&) -> Result<materialized_weight,
//   parameter_error>
//       a second handle to the same storage (tied weights), no re-read
//   B::validate_bind(const parameter&, const materialized_weight&) -> Result<void, parameter_error>
//   B::bind(parameter&, materialized_weight&&) noexcept -> void
//       infallible, so a unit is validated entirely before anything is published

#include <concepts>
#include <string_view>
#include <type_traits>
#include <utility>

#include "eredu/checkpoint/fwd.hpp"
#include "eredu/core/concepts/backend_error_type.hpp"
#include "eredu/core/concepts/diagnose.hpp"
#include "eredu/core/concepts/neural_backend.hpp"
#include "eredu/core/result.hpp"

namespace eredu::parameter_backend_requirements {

using checkpoint::CheckpointLease;
using checkpoint::CheckpointSource;
using checkpoint::DerivedWeightRecipe;

template <typename B>
concept has_parameter = requires {
  typename B::parameter;
};
template <typename B>
concept has_materialized_weight = requires {
  typename B::materialized_weight;
};
template <typename B>
concept has_materialization_context = requires {
  typename B::materialization_context;
};
template <typename B>
concept has_materialization = requires {
  typename B::materialization;
};
template <typename B>
concept has_parameter_error = requires {
  typename B::parameter_error;
};
template <typename B>
concept parameter_error_is_backend_error =
    has_parameter_error<B> && BackendErrorType<typename B::parameter_error>;

template <typename B>
concept has_preflight_recipe = has_parameter_error<B> &&
    requires(const DerivedWeightRecipe& recipe, const CheckpointSource& source) {
  {
    B::preflight_recipe(recipe, source)
    } -> std::same_as<Result<void, typename B::parameter_error>>;
};
template <typename B>
concept has_materialize = has_materialization_context<B> && has_materialization<B> &&
    has_parameter_error<B> &&
    requires(CheckpointLease&& lease, const typename B::materialization_context& context) {
  {
    B::materialize(std::move(lease), context)
    } -> std::same_as<Result<typename B::materialization, typename B::parameter_error>>;
};
// materialize must consume its lease (the lease's bytes are released with the materialization):
// a parameter that also accepts an lvalue lease (e.g. `const CheckpointLease&`) would borrow it.
template <typename B>
concept materialize_consumes_lease = has_materialize<B> &&
    !requires(CheckpointLease & lease, const typename B::materialization_context& context) {
  B::materialize(lease, context);
};
template <typename B>
concept has_materialize_recipe = has_materialization_context<B> && has_materialization<B> &&
    has_parameter_error<B> &&
    requires(const DerivedWeightRecipe& recipe, const CheckpointSource& source,
             const typename B::materialization_context& context) {
  {
    B::materialize_recipe(recipe, source, context)
    } -> std::same_as<Result<typename B::materialization, typename B::parameter_error>>;
};
template <typename B>
concept has_borrow_materialized_weight = has_materialization<B> && has_materialized_weight<B> &&
    requires(const typename B::materialization& in_flight) {
  {
    B::borrow_materialized_weight(in_flight)
    } -> std::same_as<const typename B::materialized_weight&>;
};
template <typename B>
concept has_finish_materialization = has_materialization<B> && has_materialized_weight<B> &&
    has_parameter_error<B> && requires(typename B::materialization&& in_flight) {
  {
    B::finish_materialization(std::move(in_flight))
    } -> std::same_as<Result<typename B::materialized_weight, typename B::parameter_error>>;
};
template <typename B>
concept has_share_materialized_weight = has_materialized_weight<B> && has_parameter_error<B> &&
    requires(const typename B::materialized_weight& weight) {
  {
    B::share_materialized_weight(weight)
    } -> std::same_as<Result<typename B::materialized_weight, typename B::parameter_error>>;
};
template <typename B>
concept has_validate_bind = has_parameter<B> && has_materialized_weight<B> &&
    has_parameter_error<B> && requires(const typename B::parameter& parameter,
                                       const typename B::materialized_weight& weight) {
  {
    B::validate_bind(parameter, weight)
    } -> std::same_as<Result<void, typename B::parameter_error>>;
};
template <typename B>
concept has_bind = has_parameter<B> && has_materialized_weight<B> &&
    requires(typename B::parameter& parameter, typename B::materialized_weight&& weight) {
  { B::bind(parameter, std::move(weight)) } -> std::same_as<void>;
};
template <typename B>
concept bind_is_noexcept = has_bind<B> &&
    requires(typename B::parameter& parameter, typename B::materialized_weight&& weight) {
  { B::bind(parameter, std::move(weight)) }
  noexcept;
};

}  // namespace eredu::parameter_backend_requirements

// clang-format off
#define EREDU_PARAMETER_BACKEND_REQUIREMENTS(X)                                                   \
  X(::eredu::NeuralBackend<B>,                                                                     \
    "ParameterBackend: B must satisfy NeuralBackend; see eredu::diagnose::neural_backend<B>()")    \
  X(::eredu::parameter_backend_requirements::has_parameter<B>,                                     \
    "ParameterBackend: missing associated type parameter")                                         \
  X(::eredu::parameter_backend_requirements::has_materialized_weight<B>,                           \
    "ParameterBackend: missing associated type materialized_weight")                               \
  X(::eredu::parameter_backend_requirements::has_materialization_context<B>,                       \
    "ParameterBackend: missing associated type materialization_context")                           \
  X(::eredu::parameter_backend_requirements::has_materialization<B>,                               \
    "ParameterBackend: missing associated type materialization")                                   \
  X(::eredu::parameter_backend_requirements::has_parameter_error<B>,                               \
    "ParameterBackend: missing associated type parameter_error")                                   \
  X(::eredu::parameter_backend_requirements::parameter_error_is_backend_error<B>,                  \
    "ParameterBackend: parameter_error must be move-constructible and have what() -> std::string") \
  X(::eredu::parameter_backend_requirements::has_preflight_recipe<B>,                              \
    "ParameterBackend: missing static preflight_recipe(const DerivedWeightRecipe&, "               \
    "const CheckpointSource&) -> Result<void, parameter_error>")                                   \
  X(::eredu::parameter_backend_requirements::has_materialize<B>,                                   \
    "ParameterBackend: missing static materialize(CheckpointLease&&, "                             \
    "const materialization_context&) -> Result<materialization, parameter_error>")                 \
  X(::eredu::parameter_backend_requirements::materialize_consumes_lease<B>,                        \
    "ParameterBackend: materialize must consume its CheckpointLease (take it by value or by "      \
    "rvalue reference), not borrow it")                                                           \
  X(::eredu::parameter_backend_requirements::has_materialize_recipe<B>,                            \
    "ParameterBackend: missing static materialize_recipe(const DerivedWeightRecipe&, "             \
    "const CheckpointSource&, const materialization_context&) -> "                                 \
    "Result<materialization, parameter_error>")                                                    \
  X(::eredu::parameter_backend_requirements::has_borrow_materialized_weight<B>,                    \
    "ParameterBackend: missing static borrow_materialized_weight(const materialization&) -> "      \
    "const materialized_weight&")                                                                  \
  X(::eredu::parameter_backend_requirements::has_finish_materialization<B>,                        \
    "ParameterBackend: missing static finish_materialization(materialization&&) -> "               \
    "Result<materialized_weight, parameter_error>")                                                \
  X(::eredu::parameter_backend_requirements::has_share_materialized_weight<B>,                     \
    "ParameterBackend: missing static share_materialized_weight(const materialized_weight&) -> "   \
    "Result<materialized_weight, parameter_error>")                                                \
  X(::eredu::parameter_backend_requirements::has_validate_bind<B>,                                 \
    "ParameterBackend: missing static validate_bind(const parameter&, "                            \
    "const materialized_weight&) -> Result<void, parameter_error>")                                \
  X(::eredu::parameter_backend_requirements::has_bind<B>,                                          \
    "ParameterBackend: missing static bind(parameter&, materialized_weight&&) noexcept -> void")   \
  X(::eredu::parameter_backend_requirements::bind_is_noexcept<B>,                                  \
    "ParameterBackend: bind(parameter&, materialized_weight&&) must be noexcept (binding is "       \
    "infallible after validate_bind)")
// clang-format on

namespace eredu {

template <typename B>
concept ParameterBackend =
    true EREDU_PARAMETER_BACKEND_REQUIREMENTS(EREDU_DETAIL_REQUIREMENT_CONJUNCTION);

namespace diagnose {
template <typename B>
constexpr std::string_view parameter_backend_unmet() noexcept {
  EREDU_PARAMETER_BACKEND_REQUIREMENTS(EREDU_DETAIL_REQUIREMENT_FIRST_UNMET)
  return {};
}
template <typename B>
consteval bool parameter_backend() {
  using diagnosed_type [[maybe_unused]] = B;
  EREDU_PARAMETER_BACKEND_REQUIREMENTS(EREDU_DETAIL_REQUIREMENT_ASSERT)
  return true;
}
}  // namespace diagnose

}  // namespace eredu
