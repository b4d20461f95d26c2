#pragma once
// DecoderFamily<F>: everything model::Architecture asks of a family built on the decoder block,
// written once. A family derives from it and states only what makes it itself:
//
//   struct Family : decoder::DecoderFamily<Family> {
//     static constexpr std::string_view name = "qwen3";          // general.architecture
//     static constexpr decoder::DecoderTraits traits{...};      // rotary layout, biases, norms
//   };

#include <string_view>
#include <vector>

#include "eredu/core/operator_capabilities.hpp"
#include "eredu/core/result.hpp"
#include "eredu/model/decoder/config.hpp"
#include "eredu/model/decoder/model.hpp"
#include "eredu/model/decoder/schema.hpp"
#include "eredu/model/geometry.hpp"
#include "eredu/model/parameter_schema.hpp"

namespace eredu::model::decoder {

template <typename F>
struct DecoderFamily {
  using config = DecoderConfig;
  template <typename B>
  using model = DecoderModel<B>;

  [[nodiscard]] static Result<config> read_config(const checkpoint::GgufContents& gguf,
                                                  const checkpoint::TensorCatalog& catalog) {
    return read_family_config(gguf, catalog, F::name, F::traits);
  }
  [[nodiscard]] static Result<std::vector<ParameterSchema>> schema(
      const config& c, const checkpoint::TensorCatalog& catalog) {
    return decoder_schema(c, catalog);
  }
  [[nodiscard]] static OperatorCapabilities required_operators(const config& c) noexcept {
    return decoder::required_operators(c);
  }
  [[nodiscard]] static ModelGeometry geometry(const config& c) noexcept {
    return decoder::geometry(c);
  }
};

}  // namespace eredu::model::decoder
