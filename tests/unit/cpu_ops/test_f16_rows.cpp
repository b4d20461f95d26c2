// KernelTable::to_f16 (an F16 KV cache's rows) against the scalar encoder: every table rounds every
// finite value (normals, subnormals, halfway cases, overflow to infinity, both zeros) exactly as
// encoding::fp32_to_fp16 does, and keeps infinities and NaNs.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <random>
#include <vector>

#include "eredu/backends/cpu/kernels.hpp"
#include "eredu/checkpoint/encoding/half.hpp"

namespace {

using eredu::cpu::Isa;

std::vector<float> probe_values() {
  std::vector<float> x = {0.0F,
                          -0.0F,
                          1.0F,
                          -1.0F,
                          65504.0F,
                          65520.0F,
                          -65520.0F,
                          1e6F,
                          6.1035156e-05F,
                          5.9604645e-08F,
                          2.9802322e-08F,
                          8.940697e-08F,
                          1e-10F,
                          -3.0e-06F,
                          1.00048828125F,
                          1.000732421875F,
                          2049.0F,
                          2051.0F,
                          std::numeric_limits<float>::infinity(),
                          -std::numeric_limits<float>::infinity()};
  std::mt19937 rng(42);
  std::uniform_int_distribution<std::uint32_t> bits;
  while (x.size() < 4099) {  // not a multiple of the vector width: the tail runs too
    std::uint32_t u = bits(rng);
    // Exponents around the F16 range, so subnormals, normals and overflow all occur.
    u = (u & 0x807FFFFFU) | ((100U + bits(rng) % 60U) << 23);
    float f;
    std::memcpy(&f, &u, 4);
    x.push_back(f);
  }
  return x;
}

TEST(F16Rows, EveryTableRoundsFiniteValuesAsTheScalarEncoderAndKeepsNaN) {
  std::vector<float> x = probe_values();
  x.push_back(std::numeric_limits<float>::quiet_NaN());
  for (Isa isa : {Isa::kGeneric, Isa::kAvx2, Isa::kAvx512}) {
    const auto* table = eredu::cpu::kernels_for(isa);
    if (table == nullptr) continue;  // this CPU cannot run it (test_dispatch.cpp says which)
    std::vector<std::uint16_t> out(x.size(), 0xDEAD);
    table->to_f16(x.data(), x.size(), out.data());
    for (std::size_t i = 0; i + 1 < x.size(); ++i) {
      ASSERT_EQ(out[i], eredu::encoding::fp32_to_fp16(x[i]))
          << eredu::cpu::isa_name(isa) << " value " << x[i] << " at " << i;
    }
    EXPECT_TRUE(std::isnan(eredu::encoding::fp16_to_fp32(out.back()))) << eredu::cpu::isa_name(isa);
  }
}

}  // namespace
