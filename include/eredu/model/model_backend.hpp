#pragma once
// ModelBackend<B>: what a family's model needs of a backend beyond NeuralBackend (its operators)
// and ParameterBackend (how weights are materialized and bound):
//   B::declare_parameter(std::string id, std::vector<std::uint64_t> shape) -> B::parameter
//       an unbound slot that knows its expected shape (validate_bind checks against it);
//   B::parameter_weight(const B::parameter&) -> const B::weight&
//       the weight bound to a slot, as the operators consume it;
// and error types that convert to eredu::Error.

#include <concepts>
#include <cstdint>
#include <string>
#include <vector>

#include "eredu/core/concepts/neural_backend.hpp"
#include "eredu/core/concepts/optional_operators.hpp"
#include "eredu/core/concepts/parameter_backend.hpp"
#include "eredu/core/error.hpp"

namespace eredu::model {

template <typename B>
concept ModelBackend = NeuralBackend<B> && ParameterBackend<B> && OptionalOperatorsConsistent<B> &&
    std::convertible_to<typename B::error, Error> &&
    std::convertible_to<typename B::parameter_error, Error> &&
    requires(std::string id, std::vector<std::uint64_t> shape, const typename B::parameter& p) {
  { B::declare_parameter(std::move(id), std::move(shape)) } -> std::same_as<typename B::parameter>;
  { B::parameter_weight(p) } -> std::same_as<const typename B::weight&>;
};

}  // namespace eredu::model
