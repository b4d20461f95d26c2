// Element decoders for packed weight rows, read from a uint[] buffer named `wdata` through byte
// addressing, so blocks of any size (18, 20, 22, 24, 34 bytes) stay packed as in the checkpoint
// and no 8- or 16-bit storage feature is needed. `precise` keeps q * d + m unfused, so a decoded
// value is bit-identical to the CPU reference decoders.

uint load_byte(uint offset) {
  return (wdata[offset >> 2] >> ((offset & 3u) * 8u)) & 0xFFu;
}
uint load_u16(uint offset) {  // offset is even
  return (wdata[offset >> 2] >> ((offset & 2u) * 8u)) & 0xFFFFu;
}
float load_half(uint offset) {
  return unpackHalf2x16(load_u16(offset)).x;
}
uint load_u32_unaligned(uint offset) {
  return load_byte(offset) | (load_byte(offset + 1u) << 8) | (load_byte(offset + 2u) << 16) |
         (load_byte(offset + 3u) << 24);
}

// Element `col` of the row starting at byte `row_base`.
float decode_element(uint row_base, uint col) {
#if defined(WTYPE_F32)
  return uintBitsToFloat(wdata[(row_base >> 2) + col]);
#elif defined(WTYPE_F16)
  return load_half(row_base + col * 2u);
#elif defined(WTYPE_BF16)
  return uintBitsToFloat(load_u16(row_base + col * 2u) << 16);
#elif defined(WTYPE_Q8_0)
  const uint b = row_base + (col / 32u) * 34u;
  const int q = int(load_byte(b + 2u + col % 32u) << 24) >> 24;
  precise float v = float(q) * load_half(b);
  return v;
#elif defined(WTYPE_Q4_0) || defined(WTYPE_Q4_1)
#if defined(WTYPE_Q4_0)
  const uint b = row_base + (col / 32u) * 18u;
  const uint qs = b + 2u;
#else
  const uint b = row_base + (col / 32u) * 20u;
  const uint qs = b + 4u;
#endif
  const uint j = col % 32u;
  const uint byte_value = load_byte(qs + (j & 15u));
  const uint nibble = j < 16u ? (byte_value & 0xFu) : (byte_value >> 4);
#if defined(WTYPE_Q4_0)
  precise float v = float(int(nibble) - 8) * load_half(b);
#else
  precise float v = float(nibble) * load_half(b) + load_half(b + 2u);
#endif
  return v;
#elif defined(WTYPE_Q5_0) || defined(WTYPE_Q5_1)
#if defined(WTYPE_Q5_0)
  const uint b = row_base + (col / 32u) * 22u;
  const uint qh_at = b + 2u;
#else
  const uint b = row_base + (col / 32u) * 24u;
  const uint qh_at = b + 4u;
#endif
  const uint j = col % 32u;
  const uint qh = load_u32_unaligned(qh_at);
  const uint byte_value = load_byte(qh_at + 4u + (j & 15u));
  const uint nibble = j < 16u ? (byte_value & 0xFu) : (byte_value >> 4);
  const uint q = nibble | (((qh >> j) & 1u) << 4);
#if defined(WTYPE_Q5_0)
  precise float v = float(int(q) - 16) * load_half(b);
#else
  precise float v = float(q) * load_half(b) + load_half(b + 2u);
#endif
  return v;
#elif defined(WTYPE_Q4_K) || defined(WTYPE_Q5_K)
  // Super-block of 256: d, dmin, 12 bytes of 6-bit scales/mins, [qh[32] for Q5_K], qs[128].
#if defined(WTYPE_Q4_K)
  const uint b = row_base + (col / 256u) * 144u;
  const uint qs = b + 16u;
#else
  const uint b = row_base + (col / 256u) * 176u;
  const uint qs = b + 48u;
#endif
  const uint j = col % 256u;
  const uint chunk = j / 64u;
  const uint within = j % 64u;
  const uint sub = 2u * chunk + (within >= 32u ? 1u : 0u);
  const uint l = within % 32u;
  const uint sc = b + 4u;
  uint scale;
  uint mn;
  if (sub < 4u) {
    scale = load_byte(sc + sub) & 63u;
    mn = load_byte(sc + sub + 4u) & 63u;
  } else {
    scale = (load_byte(sc + sub + 4u) & 0xFu) | ((load_byte(sc + sub - 4u) >> 6) << 4);
    mn = (load_byte(sc + sub + 4u) >> 4) | ((load_byte(sc + sub) >> 6) << 4);
  }
  const uint byte_value = load_byte(qs + 32u * chunk + l);
  uint q = within < 32u ? (byte_value & 0xFu) : (byte_value >> 4);
#if defined(WTYPE_Q5_K)
  q |= ((load_byte(b + 16u + l) >> sub) & 1u) << 4;
#endif
  precise float dl = load_half(b) * float(scale);
  precise float ml = load_half(b + 2u) * float(mn);
  precise float v = dl * float(q) - ml;
  return v;
#elif defined(WTYPE_Q6_K)
  // ql[128], qh[64], int8 scales[16], d at byte 208.
  const uint b = row_base + (col / 256u) * 210u;
  const uint j = col % 256u;
  const uint half_index = j / 128u;
  const uint r = j % 128u;
  const uint quadrant = r / 32u;
  const uint l = r % 32u;
  const uint ql_byte = load_byte(b + 64u * half_index + l + ((quadrant & 1u) != 0u ? 32u : 0u));
  const uint low = quadrant < 2u ? (ql_byte & 0xFu) : (ql_byte >> 4);
  const uint high = (load_byte(b + 128u + 32u * half_index + l) >> (2u * quadrant)) & 3u;
  const int q = int(low | (high << 4)) - 32;
  const int scale = int(load_byte(b + 192u + 8u * half_index + l / 16u + 2u * quadrant) << 24) >> 24;
  precise float ds = load_half(b + 208u) * float(scale);
  precise float v = ds * float(q);
  return v;
#elif defined(WTYPE_Q2_K) || defined(WTYPE_Q3_K)
  // Q2_K: scales[16], qs[64], d, dmin (84 bytes). Q3_K: hmask[32], qs[64], scales[12], d (110).
  const uint j = col % 256u;
  const uint half_index = j / 128u;
  const uint r = j % 128u;
  const uint shift_index = r / 32u;
  const uint part = (r % 32u) / 16u;
  const uint lf = 16u * part + r % 16u;  // byte within this half's 32 bytes of qs
  const uint sub = half_index * 8u + shift_index * 2u + part;
#if defined(WTYPE_Q2_K)
  const uint b = row_base + (col / 256u) * 84u;
  const uint code = (load_byte(b + 16u + 32u * half_index + lf) >> (2u * shift_index)) & 3u;
  const uint sc = load_byte(b + sub);
  precise float dl = load_half(b + 80u) * float(sc & 0xFu);
  precise float ml = load_half(b + 82u) * float(sc >> 4);
  precise float v = dl * float(code) - ml;
  return v;
#else
  const uint b = row_base + (col / 256u) * 110u;
  const uint low = (load_byte(b + 32u + 32u * half_index + lf) >> (2u * shift_index)) & 3u;
  const uint mask = 1u << (half_index * 4u + shift_index);
  const int code = int(low) - ((load_byte(b + lf) & mask) != 0u ? 0 : 4);
  const uint s = b + 96u;
  const uint sc_low = sub < 8u ? (load_byte(s + sub) & 0xFu) : (load_byte(s + sub - 8u) >> 4);
  const uint sc_high = (load_byte(s + 8u + sub % 4u) >> (2u * (sub / 4u))) & 3u;
  precise float dl = load_half(b + 108u) * float(int(sc_low | (sc_high << 4)) - 32);
  precise float v = dl * float(code);
  return v;
#endif
#elif defined(WTYPE_IQ4_NL) || defined(WTYPE_IQ4_XS)
  const int codebook[16] = int[16](-127, -104, -83, -65, -49, -35, -22, -10, 1, 13, 25, 38, 53,
                                   69, 89, 113);
#if defined(WTYPE_IQ4_NL)
  const uint b = row_base + (col / 32u) * 18u;
  const uint within = col % 32u;
  const uint byte_value = load_byte(b + 2u + within % 16u);
  const uint nibble = within < 16u ? (byte_value & 0xFu) : (byte_value >> 4);
  precise float v = load_half(b) * float(codebook[nibble]);
  return v;
#else
  const uint b = row_base + (col / 256u) * 136u;
  const uint j = col % 256u;
  const uint ib = j / 32u;
  const uint within = j % 32u;
  const uint low = (load_byte(b + 4u + ib / 2u) >> (4u * (ib % 2u))) & 0xFu;
  const uint high = (load_u16(b + 2u) >> (2u * ib)) & 3u;
  precise float dl = load_half(b) * float(int(low | (high << 4)) - 32);
  const uint byte_value = load_byte(b + 8u + 16u * ib + within % 16u);
  const uint nibble = within < 16u ? (byte_value & 0xFu) : (byte_value >> 4);
  precise float v = dl * float(codebook[nibble]);
  return v;
#endif
#else
#error "define one WTYPE_*"
#endif
}
