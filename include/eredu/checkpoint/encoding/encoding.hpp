#pragma once
// Tensor element encodings: everything in one include.
//
// Namespace eredu::encoding. The headers live under checkpoint/ because the checkpoint layer is
// where stored bytes enter eredu, but the code is backend-neutral and shared: CPU, CUDA and Vulkan
// kernels take these scalar definitions as their reference.
//
//   half.hpp              F16 / BF16 <-> F32, bit-exact, constexpr
//   blocks.hpp            packed ggml block layouts (Q4_0 ... IQ4_XS) with size checks
//   dequantize_block.hpp  reference decoders per block and per row (ggml's grouping of operations)
//   quantize_block.hpp    reference encoders for Q8_0, Q4_0, Q4_1, Q5_0, Q5_1 (ggml's "ref" path)
//   quantize_k_block.hpp  encoders for Q2_K .. Q6_K
//   quantize_iq4_block.hpp encoders for IQ4_NL and IQ4_XS
//   codec.hpp             checked byte-span API: dequantize(), quantize(), encoded_size(), queries

#include "eredu/checkpoint/encoding/blocks.hpp"
#include "eredu/checkpoint/encoding/codec.hpp"
#include "eredu/checkpoint/encoding/dequantize_block.hpp"
#include "eredu/checkpoint/encoding/half.hpp"
#include "eredu/checkpoint/encoding/quantize_block.hpp"
#include "eredu/checkpoint/encoding/quantize_iq4_block.hpp"
#include "eredu/checkpoint/encoding/quantize_k_block.hpp"
