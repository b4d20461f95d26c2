// Reference integer dot products of packed weight rows with 8-bit activation blocks (formulas in
// reference.hpp). Each super-block is first unpacked to plain integers — its 256 codes, a scale
// and a minimum per sub-block of 16 — so that the arithmetic below reads as the definition:
//   value_i = d * scale_{i/16} * code_i - dmin * min_{i/16}
// (for Q6_K and Q3_K the minimum is the code offset times the scale, and dmin is d).
#include <cmath>

#include "eredu/backends/cpu/reference.hpp"
#include "eredu/checkpoint/encoding/dequantize_block.hpp"

namespace eredu::cpu::reference {

namespace enc = eredu::encoding;

namespace {

struct SuperBlock {
  int code[enc::kQK_K];
  int scale[16];
  int min[16];
  float d;
  float dmin;
  bool separate_min;  // msum scaled by dmin (Q4_K, Q5_K, Q2_K); else by d, folded into isum
};

void unpack(const enc::BlockQ4_K& b, SuperBlock& s) {
  for (int c = 0; c < 8; ++c) {
    const enc::detail::ScaleMin sm = enc::detail::k4_scale_min(c, b.scales);
    s.scale[2 * c] = s.scale[2 * c + 1] = sm.scale;
    s.min[2 * c] = s.min[2 * c + 1] = sm.min;
    for (int l = 0; l < 32; ++l) {
      const std::uint8_t byte = b.qs[32 * (c / 2) + l];
      s.code[32 * c + l] = c % 2 == 0 ? (byte & 0xF) : (byte >> 4);
    }
  }
  s.d = enc::fp16_to_fp32(b.d);
  s.dmin = enc::fp16_to_fp32(b.dmin);
  s.separate_min = true;
}

void unpack(const enc::BlockQ5_K& b, SuperBlock& s) {
  for (int c = 0; c < 8; ++c) {
    const enc::detail::ScaleMin sm = enc::detail::k4_scale_min(c, b.scales);
    s.scale[2 * c] = s.scale[2 * c + 1] = sm.scale;
    s.min[2 * c] = s.min[2 * c + 1] = sm.min;
    for (int l = 0; l < 32; ++l) {
      const std::uint8_t byte = b.qs[32 * (c / 2) + l];
      const int low = c % 2 == 0 ? (byte & 0xF) : (byte >> 4);
      s.code[32 * c + l] = low | (((b.qh[l] >> c) & 1) << 4);
    }
  }
  s.d = enc::fp16_to_fp32(b.d);
  s.dmin = enc::fp16_to_fp32(b.dmin);
  s.separate_min = true;
}

// Q6_K and Q3_K/Q2_K: chunk c (elements 32c .. 32c + 31) = half c / 4, position k = c % 4.
void unpack(const enc::BlockQ6_K& b, SuperBlock& s) {
  for (int c = 0; c < 8; ++c) {
    const int half = c / 4;
    const int k = c % 4;
    const std::uint8_t* ql = b.ql + 64 * half + 32 * (k % 2);
    const std::uint8_t* qh = b.qh + 32 * half;
    for (int l = 0; l < 32; ++l) {
      const int low = k < 2 ? (ql[l] & 0xF) : (ql[l] >> 4);
      s.code[32 * c + l] = low | (((qh[l] >> (2 * k)) & 3) << 4);
    }
  }
  for (int j = 0; j < 16; ++j) {
    s.scale[j] = b.scales[j];
    s.min[j] = 32 * b.scales[j];
  }
  s.d = enc::fp16_to_fp32(b.d);
  s.dmin = s.d;
  s.separate_min = false;
}

void unpack(const enc::BlockQ3_K& b, SuperBlock& s) {
  for (int c = 0; c < 8; ++c) {
    const std::uint8_t* q = b.qs + 32 * (c / 4);
    const int shift = 2 * (c % 4);
    for (int l = 0; l < 32; ++l)
      s.code[32 * c + l] = ((q[l] >> shift) & 3) | (((b.hmask[l] >> c) & 1) << 2);
  }
  for (int j = 0; j < 16; ++j) {
    s.scale[j] = enc::detail::q3_k_scale_code(j, b.scales) - 32;
    s.min[j] = 4 * s.scale[j];
  }
  s.d = enc::fp16_to_fp32(b.d);
  s.dmin = s.d;
  s.separate_min = false;
}

void unpack(const enc::BlockQ2_K& b, SuperBlock& s) {
  for (int c = 0; c < 8; ++c) {
    const std::uint8_t* q = b.qs + 32 * (c / 4);
    const int shift = 2 * (c % 4);
    for (int l = 0; l < 32; ++l)
      s.code[32 * c + l] = (q[l] >> shift) & 3;
  }
  for (int j = 0; j < 16; ++j) {
    s.scale[j] = b.scales[j] & 0xF;
    s.min[j] = b.scales[j] >> 4;
  }
  s.d = enc::fp16_to_fp32(b.d);
  s.dmin = enc::fp16_to_fp32(b.dmin);
  s.separate_min = true;
}

void unpack(const enc::BlockIQ4_XS& b, SuperBlock& s) {
  for (int c = 0; c < 8; ++c) {
    const int low = (b.scales_l[c / 2] >> (4 * (c % 2))) & 0xF;
    const int high = (b.scales_h >> (2 * c)) & 3;
    s.scale[2 * c] = s.scale[2 * c + 1] = (low | (high << 4)) - 32;
    s.min[2 * c] = s.min[2 * c + 1] = 0;
    const std::uint8_t* qs = b.qs + 16 * c;
    for (int l = 0; l < 16; ++l) {
      s.code[32 * c + l] = enc::kIQ4NLValues[qs[l] & 0xF];
      s.code[32 * c + l + 16] = enc::kIQ4NLValues[qs[l] >> 4];
    }
  }
  s.d = enc::fp16_to_fp32(b.d);
  s.dmin = s.d;
  s.separate_min = false;
}

template <typename Block>
float dot_rows(const void* w_row, const enc::BlockQ8_K* x, std::size_t n_super) {
  const auto* w = static_cast<const Block*>(w_row);
  float acc = 0.0F;
  SuperBlock s;
  for (std::size_t b = 0; b < n_super; ++b) {
    unpack(w[b], s);
    std::int32_t isum = 0;
    std::int32_t msum = 0;
    for (int j = 0; j < 16; ++j) {
      std::int32_t dot = 0;
      for (int l = 16 * j; l < 16 * j + 16; ++l)
        dot += s.code[l] * x[b].qs[l];
      isum += s.scale[j] * dot;
      msum += s.min[j] * x[b].bsums[j];
    }
    const float dd = s.d * x[b].d;
    if (s.separate_min) {
      acc = std::fma(dd, static_cast<float>(isum), acc);
      acc = std::fma(-(s.dmin * x[b].d), static_cast<float>(msum), acc);
    } else {
      acc = std::fma(dd, static_cast<float>(isum - msum), acc);
    }
  }
  return acc;
}

}  // namespace

void quantize_row_q8_K(const float* x, enc::BlockQ8_K* y, std::size_t n) {
  for (std::size_t b = 0; b < n / enc::kQK_K; ++b) {
    const float* xb = x + enc::kQK_K * b;
    float max_abs = 0.0F;
    for (int i = 0; i < enc::kQK_K; ++i)
      max_abs = std::fmax(max_abs, std::fabs(xb[i]));
    const float id = max_abs != 0.0F ? 127.0F / max_abs : 0.0F;
    y[b].d = max_abs / 127.0F;
    for (int i = 0; i < enc::kQK_K; ++i)
      y[b].qs[i] = static_cast<std::int8_t>(std::nearbyint(xb[i] * id));
    for (int j = 0; j < 16; ++j) {
      int sum = 0;
      for (int i = 16 * j; i < 16 * j + 16; ++i)
        sum += y[b].qs[i];
      y[b].bsums[j] = static_cast<std::int16_t>(sum);
    }
  }
}

void quantize_row_q8_0(const float* x, enc::BlockQ8_0* y, std::size_t n) {
  for (std::size_t b = 0; b < n / enc::kQK8_0; ++b) {
    const float* xb = x + enc::kQK8_0 * b;
    float max_abs = 0.0F;
    for (int i = 0; i < enc::kQK8_0; ++i)
      max_abs = std::fmax(max_abs, std::fabs(xb[i]));
    const float id = max_abs != 0.0F ? 127.0F / max_abs : 0.0F;
    y[b].d = enc::fp32_to_fp16(max_abs / 127.0F);
    for (int i = 0; i < enc::kQK8_0; ++i)
      y[b].qs[i] = static_cast<std::int8_t>(std::nearbyint(xb[i] * id));
  }
}

bool has_dot_q8_K(DType dtype) noexcept {
  switch (dtype) {
    case DType::kQ2_K:
    case DType::kQ3_K:
    case DType::kQ4_K:
    case DType::kQ5_K:
    case DType::kQ6_K:
    case DType::kIQ4_XS:
      return true;
    default:
      return false;
  }
}

float dot_q8_K(DType dtype, const void* w_row, const enc::BlockQ8_K* x, std::size_t n_super) {
  switch (dtype) {
    case DType::kQ2_K:
      return dot_rows<enc::BlockQ2_K>(w_row, x, n_super);
    case DType::kQ3_K:
      return dot_rows<enc::BlockQ3_K>(w_row, x, n_super);
    case DType::kQ4_K:
      return dot_rows<enc::BlockQ4_K>(w_row, x, n_super);
    case DType::kQ5_K:
      return dot_rows<enc::BlockQ5_K>(w_row, x, n_super);
    case DType::kQ6_K:
      return dot_rows<enc::BlockQ6_K>(w_row, x, n_super);
    case DType::kIQ4_XS:
      return dot_rows<enc::BlockIQ4_XS>(w_row, x, n_super);
    default:
      return 0.0F;  // precondition: has_dot_q8_K(dtype)
  }
}

float dot_iq4_nl_q8_0(const void* w_row, const enc::BlockQ8_0* x, std::size_t n_blocks) {
  const auto* w = static_cast<const enc::BlockIQ4_NL*>(w_row);
  float acc = 0.0F;
  for (std::size_t b = 0; b < n_blocks; ++b) {
    std::int32_t isum = 0;
    for (int l = 0; l < 16; ++l) {
      isum += enc::kIQ4NLValues[w[b].qs[l] & 0xF] * x[b].qs[l];
      isum += enc::kIQ4NLValues[w[b].qs[l] >> 4] * x[b].qs[l + 16];
    }
    const float dd = enc::fp16_to_fp32(w[b].d) * enc::fp16_to_fp32(x[b].d);
    acc = std::fma(dd, static_cast<float>(isum), acc);
  }
  return acc;
}

}  // namespace eredu::cpu::reference
