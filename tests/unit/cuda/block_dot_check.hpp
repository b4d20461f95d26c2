#pragma once
// Checks one weight row's q8_1 block dot (dot/block_dot.hpp) on the host, for the block-dot tests:
//   - integers: every sub-block's dp4a sums equal plain int loops over the traits' scalar codes
//     and the activation codes (exact);
//   - floats: row_dot equals the float64 sum over elements of (the existing decoder's weight) x
//     (the dequantized activation, code * F16 d) within a bound derived from the float steps: the
//     F32 roundings of the combination and of the sums over sub-blocks and blocks (relative to
//     the sum of |scale * code| + |min| times |activation|), plus, for formats that use the stored
//     F16 s, its rounding (about 2^-10 of |s| per sub-block times |min|).

#include <cmath>
#include <cstdint>
#include <sstream>
#include <string>

#include "eredu/backends/cuda/dot/all_dots.hpp"

namespace eredu::testing {

struct RowDotCheck {
  std::string failure;     // empty when the row passed
  double reference = 0.0;  // the float64 sum of decoded weight x dequantized activation
  double error = 0.0;      // |row_dot - float64 reference|
  double bound = 0.0;      // the allowed error
};

template <typename T>
RowDotCheck check_row_dot(const std::uint8_t* row, std::int64_t n_blocks,
                          const cuda::dot::BlockQ8_1* act) {
  namespace dot = cuda::dot;
  using Format = typename T::Format;
  constexpr int kSubs = Format::kBlockElements / dot::kQK8_1;
  RowDotCheck check;
  double reference = 0.0;
  double magnitude = 0.0;
  double s_rounding = 0.0;
  for (std::int64_t b = 0; b < n_blocks; ++b) {
    const std::uint8_t* block = row + b * Format::kBlockBytes;
    for (int sub = 0; sub < kSubs; ++sub) {
      const dot::BlockQ8_1& a = act[b * kSubs + sub];
      const double d = dot::act_scale(a);
      const dot::SubBlockSums sums = dot::sub_block_sums<T>(block, sub, a);
      dot::SubBlockSums plain{{0, 0}, {0, 0}};
      for (int l = 0; l < dot::kQK8_1; ++l) {
        const int i = dot::kQK8_1 * sub + l;
        const int h = l / T::kGroup;
        const int g = i / T::kGroup;
        const int code = T::code(block, i);
        plain.codes[h] += code * a.qs[l];
        if constexpr (T::kGroup == 16 && T::kMin) plain.act[h] += a.qs[l];
        const double x = static_cast<double>(a.qs[l]) * d;
        reference += static_cast<double>(Format::decode(block, i)) * x;
        double w_mag = std::fabs(static_cast<double>(T::scale(block, g)) * code);
        if constexpr (T::kMin) w_mag += std::fabs(static_cast<double>(T::min(block, g)));
        magnitude += w_mag * std::fabs(x);
      }
      if (sums.codes[0] != plain.codes[0] || sums.codes[1] != plain.codes[1] ||
          sums.act[0] != plain.act[0] || sums.act[1] != plain.act[1]) {
        std::ostringstream out;
        out << "block " << b << " sub-block " << sub << ": dp4a sums {" << sums.codes[0] << ", "
            << sums.codes[1] << " | " << sums.act[0] << ", " << sums.act[1] << "}, plain loop {"
            << plain.codes[0] << ", " << plain.codes[1] << " | " << plain.act[0] << ", "
            << plain.act[1] << "}";
        check.failure = out.str();
        return check;
      }
      if constexpr (T::kGroup == 32 && T::kMin) {
        s_rounding += std::fabs(static_cast<double>(T::min(block, sub))) *
                      (1.1e-3 * std::fabs(static_cast<double>(dot::act_scaled_sum(a))) + 0x1p-24);
      }
    }
  }
  const double got = dot::row_dot<T>(row, act, n_blocks);
  check.reference = reference;
  check.error = std::fabs(got - reference);
  check.bound = magnitude * static_cast<double>(n_blocks * kSubs + 16) * 0x1p-24 + s_rounding;
  if (!(check.error <= check.bound)) {
    std::ostringstream out;
    out.precision(9);
    out << "row_dot " << got << ", float64 reference " << reference << ": error " << check.error
        << " > bound " << check.bound;
    check.failure = out.str();
  }
  return check;
}

}  // namespace eredu::testing
