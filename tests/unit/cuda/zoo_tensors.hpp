#pragma once
// The quant-zoo fixtures (../shared/testdata/quant-zoo) as the CUDA tests use them: the 14
// variants with their tensor encoding, and the reference file of a tensor.

#include <filesystem>
#include <ostream>
#include <string>

#include "eredu/core/dtype.hpp"
#include "shared_data.hpp"

namespace eredu::testing {

struct ZooVariant {
  const char* name;  // as in the file names: zoo-NAME.gguf, NAME.TENSOR.f32
  DType dtype;       // the encoding of every matrix in that file
};

inline constexpr ZooVariant kZooVariants[] = {
    {"Q8_0", DType::kQ8_0},   {"Q4_0", DType::kQ4_0},     {"Q4_1", DType::kQ4_1},
    {"Q5_0", DType::kQ5_0},   {"Q5_1", DType::kQ5_1},     {"Q2_K", DType::kQ2_K},
    {"Q3_K_M", DType::kQ3_K}, {"Q4_K_M", DType::kQ4_K},   {"Q5_K_M", DType::kQ5_K},
    {"Q6_K", DType::kQ6_K},   {"IQ4_NL", DType::kIQ4_NL}, {"IQ4_XS", DType::kIQ4_XS},
    {"F16", DType::kF16},     {"BF16", DType::kBF16}};

// Names the variant in test output (instead of gtest's byte dump of the struct).
inline void PrintTo(const ZooVariant& v, std::ostream* os) {
  *os << v.name;
}

// The tensors that have a reference file per variant.
inline constexpr const char* kZooReferenceTensors[] = {"token_embd.weight", "blk.0.attn_q.weight",
                                                       "blk.1.ffn_down.weight"};

inline std::filesystem::path zoo_dir() {
  return testdata_dir() / "quant-zoo";
}
inline std::filesystem::path zoo_gguf(const ZooVariant& v) {
  return zoo_dir() / ("zoo-" + std::string(v.name) + ".gguf");
}
inline std::filesystem::path zoo_reference(const ZooVariant& v, const std::string& tensor) {
  return zoo_dir() / (std::string(v.name) + "." + tensor + ".f32");
}

}  // namespace eredu::testing
