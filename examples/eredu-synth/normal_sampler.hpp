#pragma once
// Portable N(0, 1) samples: the same seed gives the same bits on every IEEE-754 platform.
//
// - Uniforms: xoshiro256** seeded through SplitMix64 (eredu/generation/rng.hpp), 53-bit doubles.
// - Normals: Marsaglia's polar form of the Box-Muller transform. It needs one logarithm and one
//   square root per pair and no trigonometry. sqrt is correctly rounded by IEEE-754; the
//   logarithm is computed here with + - * / only (frexp reduction plus an atanh series), so no
//   libm routine, whose last bits differ between C libraries, enters the result.
// - Streams: every (seed, tensor index, row) gets its own generator (seed_for_row), so rows can
//   be produced in any order or in parallel and a tensor's values do not depend on its encoding or
//   on the thread count.
//
// Bit-identical results assume IEEE binary64 arithmetic without contraction into fused
// multiply-adds (g++/clang++ in ISO mode, -std=c++20, do not contract).

#include <cmath>
#include <cstdint>
#include <span>

#include "eredu/generation/rng.hpp"

namespace eredu::synth {

// SplitMix64's output mixer, a bijection on 64-bit values.
[[nodiscard]] constexpr std::uint64_t mix64(std::uint64_t z) noexcept {
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
  return z ^ (z >> 31);
}

// The generator seed for one row of one tensor.
[[nodiscard]] constexpr std::uint64_t seed_for_row(std::uint64_t seed, std::uint64_t tensor,
                                                   std::uint64_t row) noexcept {
  constexpr std::uint64_t kGolden = 0x9E3779B97F4A7C15ULL;
  return mix64(mix64(seed + kGolden * (tensor + 1)) ^ (kGolden * (row + 1)));
}

// ln(x) for finite x > 0, from basic arithmetic only. x = m * 2^e with m in [sqrt(1/2), sqrt(2));
// ln(m) = 2 atanh(z) = 2 (z + z^3/3 + z^5/5 + ...) with z = (m - 1) / (m + 1), |z| < 0.1716,
// z^2 < 0.0295. Summed to z^25 by Horner's rule; the first omitted term is below 2^-60 of the
// result, under a double's rounding.
[[nodiscard]] inline double portable_log(double x) noexcept {
  int exponent = 0;
  double m = std::frexp(x, &exponent);  // exact: m in [0.5, 1)
  if (m < 0.70710678118654752440) {
    m *= 2.0;  // exact
    exponent -= 1;
  }
  const double z = (m - 1.0) / (m + 1.0);
  const double z2 = z * z;
  // 1/1, 1/3, ..., 1/25, each a correctly rounded constant.
  static constexpr double kInverseOdd[13] = {1.0 / 1,  1.0 / 3,  1.0 / 5,  1.0 / 7,  1.0 / 9,
                                             1.0 / 11, 1.0 / 13, 1.0 / 15, 1.0 / 17, 1.0 / 19,
                                             1.0 / 21, 1.0 / 23, 1.0 / 25};
  double poly = kInverseOdd[12];
  for (int i = 11; i >= 0; --i)
    poly = kInverseOdd[i] + z2 * poly;
  constexpr double kLn2 = 0.693147180559945309417232121458176568;
  return 2.0 * z * poly + exponent * kLn2;
}

// Standard normal samples from one xoshiro256** stream, two per accepted polar pair.
class NormalSampler {
 public:
  explicit NormalSampler(std::uint64_t seed) noexcept : rng_(seed) {}

  [[nodiscard]] double next() noexcept {
    if (has_spare_) {
      has_spare_ = false;
      return spare_;
    }
    for (;;) {
      const double u = 2.0 * rng_.next_double() - 1.0;
      const double v = 2.0 * rng_.next_double() - 1.0;
      const double s = u * u + v * v;
      if (s >= 1.0 || s == 0.0) continue;
      const double factor = std::sqrt(-2.0 * portable_log(s) / s);
      spare_ = v * factor;
      has_spare_ = true;
      return u * factor;
    }
  }

  // Fills `out` with N(0, stddev^2) samples rounded to float.
  void fill(std::span<float> out, double stddev) noexcept {
    for (float& x : out)
      x = static_cast<float>(stddev * next());
  }

 private:
  generation::Xoshiro256StarStar rng_;
  double spare_ = 0.0;
  bool has_spare_ = false;
};

}  // namespace eredu::synth
