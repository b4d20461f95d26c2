#pragma once
// The families eredu runs, keyed by GGUF `general.architecture`, resolved at compile time: adding
// a family is one folder under include/eredu/model/<family>/ and one line in `Families` below.
// Everything above (admission, the generic runtime, the backends) takes the list from here.

#include <array>
#include <cstddef>
#include <string>
#include <string_view>
#include <type_traits>
#include <variant>

#include "eredu/model/architecture.hpp"
#include "eredu/model/llama/family.hpp"
#include "eredu/model/mistral/family.hpp"
#include "eredu/model/qwen2/family.hpp"
#include "eredu/model/qwen3/family.hpp"

namespace eredu::model {

namespace detail {
// std::variant of the distinct types among Ts (families may share a config or a model type).
template <typename V, typename... Ts>
struct unique_variant {
  using type = V;
};
template <typename... Vs, typename T, typename... Ts>
struct unique_variant<std::variant<Vs...>, T, Ts...> {
  using type = typename std::conditional_t<(std::is_same_v<T, Vs> || ...),
                                           unique_variant<std::variant<Vs...>, Ts...>,
                                           unique_variant<std::variant<Vs..., T>, Ts...>>::type;
};
}  // namespace detail

template <Architecture... Fs>
struct FamilyList {
  static constexpr std::size_t size = sizeof...(Fs);
  static constexpr std::array<std::string_view, size> names{Fs::name...};
  // Any family's config / any family's model on backend B.
  using any_config = typename detail::unique_variant<std::variant<>, typename Fs::config...>::type;
  template <typename B>
  using any_model =
      typename detail::unique_variant<std::variant<>, typename Fs::template model<B>...>::type;

  // Calls fn.template operator()<F>() for the family at `index` (< size); returns its result.
  template <typename R, typename Fn>
  static R with_family(std::size_t index, Fn&& fn) {
    return with_family_impl<R, 0, Fs...>(index, fn);
  }

 private:
  template <typename R, std::size_t I, typename F, typename... Rest, typename Fn>
  static R with_family_impl(std::size_t index, Fn& fn) {
    if (index == I || sizeof...(Rest) == 0) return fn.template operator()<F>();
    if constexpr (sizeof...(Rest) > 0) {
      return with_family_impl<R, I + 1, Rest...>(index, fn);
    } else {
      return fn.template operator()<F>();
    }
  }
};

// ---- the registry: one line per family ----
using Families = FamilyList<llama::Family,    // general.architecture = llama
                            mistral::Family,  // mistral
                            qwen2::Family,    // qwen2
                            qwen3::Family>;   // qwen3

template <typename B>
using AnyModel = Families::any_model<B>;
using AnyConfig = Families::any_config;

// The index of `architecture` in Families, or Families::size.
[[nodiscard]] constexpr std::size_t family_index(std::string_view architecture) noexcept {
  for (std::size_t i = 0; i < Families::size; ++i)
    if (Families::names[i] == architecture) return i;
  return Families::size;
}
[[nodiscard]] constexpr bool is_supported_architecture(std::string_view architecture) noexcept {
  return family_index(architecture) < Families::size;
}
// "llama, mistral, qwen2, qwen3" (for messages).
[[nodiscard]] std::string supported_architectures();

}  // namespace eredu::model
