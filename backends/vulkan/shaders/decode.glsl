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
#else
#error "define one WTYPE_*"
#endif
}
