#pragma once
// The CPU backend's kernels, dispatched once at run time on the CPU's features.
//
//   const KernelTable& k = cpu::kernels();          // best table for this CPU, chosen once
//   k.matmul(weights, x, n_tokens, y, &pool);
//
// Every kernel takes an optional ThreadPool (null: run on the calling thread). Work is split by
// output element (matmul rows, attention (token, head) pairs, norm rows, element ranges), so the
// result is bit-identical for any thread count. Tables: kGeneric runs on any x86-64 (no SIMD
// beyond the baseline); kAvx2 needs AVX2 + FMA + F16C; kAvx512 adds AVX-512 F/BW/VL/DQ + VNNI and
// gives the AVX2 table's results bit for bit. Results of generic and AVX2 agree with the scalar
// reference (reference.hpp) within the op-parity thresholds, not bit for bit.
//
// Numerics of the AVX2 matmul, chosen to track llama.cpp's CPU backend (whose quantized runs are
// the reference outputs): for Q4_0, Q4_1, Q5_0, Q5_1 and Q8_0 weights the activation row is first
// quantized to 8-bit blocks of 32 (ggml's Q8_0 / Q8_1, scales rounded to F16) and the dot products
// run on 8-bit integers; for F16 / BF16 weights the activations are rounded to F16 / BF16 first
// (ggml's vec_dot_type). For the K-quants (Q2_K..Q6_K) and IQ4_XS the activation row is quantized
// to q8_K blocks of 256 (float scale, 16-element sums) and IQ4_NL uses the 8-bit blocks of 32;
// those products equal the scalar definitions reference::dot_q8_K / dot_iq4_nl_q8_0 bit for bit.
// The AVX-512 and AMX tables read K-quant and IQ4_XS weights from row groups made at load
// (row_group_bytes), with the same values. The generic table keeps activations in F32 for every
// encoding and decodes rows to floats.
//
// Prompt batches (n_tokens > 1) on AVX2 run register-blocked tiles. For the 8-bit integer paths
// every element gets exactly the value the one-token path gives it. For float-decoded weights a
// batch element is one 8-lane FMA chain (llamafile's tinyBLAS order, as llama.cpp uses for prompt
// batches) while one token uses dot_f32's four chains, so the two can differ in the last bits.
// AVX2 attention and SwiGLU use a vectorized exp within about one ulp of std::exp (as ggml's SIMD
// softmax and silu do). None of this depends on the thread count.

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>

#include "eredu/backends/cpu/cpu_types.hpp"
#include "eredu/backends/cpu/kernel_types.hpp"
#include "eredu/backends/cpu/thread_pool.hpp"
#include "eredu/core/dtype.hpp"

namespace eredu::cpu {

// kAvx512: AVX-512 F/BW/VL/DQ + VNNI on top of AVX2 + FMA + F16C; its table is the AVX2 one with
// the K-quant products at 512 bits (bit-identical results, see vec_avx512.cpp). kAmx: the AVX-512
// table with the 32-code block encodings' prompt products on AMX int8 tiles (the AVX-512 values
// bit for bit, see vec_amx.cpp), where cpuid lists AMX-TILE and AMX-INT8, XCR0 has the tile state
// and the kernel grants this process tile data (arch_prctl(ARCH_REQ_XCOMP_PERM)).
enum class Isa { kGeneric, kAvx2, kAvx512, kAmx };

[[nodiscard]] std::string_view isa_name(Isa isa) noexcept;
// What a CPU needs to run an ISA's table, in words (for messages and test skips).
[[nodiscard]] std::string_view isa_requirements(Isa isa) noexcept;

// CPU features relevant to kernel selection, read with cpuid once.
struct CpuFeatures {
  bool sse4_2 = false;
  bool avx = false;
  bool avx2 = false;
  bool fma = false;
  bool f16c = false;
  bool avx512f = false;
  bool avx512bw = false;
  bool avx512vl = false;
  bool avx512dq = false;
  bool avx512vnni = false;
  bool avx512bf16 = false;
  // XCR0 (XGETBV) has the opmask, upper-ZMM and high-ZMM state bits: the OS saves AVX-512 registers
  // across context switches. Without it AVX-512 instructions fault even where cpuid lists them.
  bool os_avx512 = false;
  // The CPU runs 512-bit operations as two 256-bit halves (AMD family 19h, Zen 4: the only family
  // with AVX-512 and 256-bit units; cpuid has no bit for it). A tuning fact, not a requirement:
  // the avx512 table then takes its F16 prompt tile in 256-bit vectors (the AVX2 table's values).
  bool avx512_split = false;
  // AMX (cpuid leaf 7 EDX bits 24, 25, 22), whether XCR0 has the tile configuration and tile data
  // state (bits 17, 18), and whether Linux granted this process tile data: AMX instructions fault
  // until arch_prctl(ARCH_REQ_XCOMP_PERM, XFEATURE_XTILEDATA) succeeds, which detection asks for
  // once, and only when the other three hold.
  bool amx_tile = false;
  bool amx_int8 = false;
  bool amx_bf16 = false;
  bool os_amx = false;
  bool amx_granted = false;
  // Running under a hypervisor (cpuid leaf 1 ECX bit 31): a fresh huge page may then be backed by
  // the host 4 KiB at a time when it is first written (huge_pages.hpp).
  bool hypervisor = false;
};
[[nodiscard]] const CpuFeatures& cpu_features() noexcept;

// The best ISA this CPU runs: kAmx when isa_supported(kAmx), else kAvx512 when
// isa_supported(kAvx512), else kAvx2 when AVX2, FMA and F16C are all present, else kGeneric.
[[nodiscard]] Isa best_isa() noexcept;
[[nodiscard]] bool isa_supported(Isa isa) noexcept;

// Rows per row group (KernelTable::row_group_bytes): a weight's row groups are its first
// rows / kRowGroupRows groups, each row_group_bytes(dtype, kRowGroupRows, cols) bytes, in order.
inline constexpr std::size_t kRowGroupRows = 16;

struct KernelTable {
  Isa isa;

  // Whether matmul / get_row accept this weight encoding.
  bool (*supports_matmul)(DType dtype) noexcept;

  // y[t][o] = sum_i W[o][i] * x[t][i]; x [n_tokens][w.cols], y [n_tokens][w.rows]. Weight rows are
  // streamed once per tile of tokens. y must not alias x.
  void (*matmul)(const MatrixView& w, const float* x, std::size_t n_tokens, float* y,
                 ThreadPool* pool);

  // Several products of the same input x [n_tokens][cols] with weights of that width (Q/K/V,
  // gate/up): ys[i] = matmul(ws[i], x) bit for bit. Each activation form (quantized or rounded) is
  // made once for all of them; for one token every weight's rows are also one pool job (cut by
  // bytes, one share per thread), so a layer hands out and waits for fewer jobs. No ys[i] may
  // alias x or another ys[j].
  void (*matmul_shared_input)(std::span<const MatrixView> ws, const float* x, std::size_t n_tokens,
                              std::span<float* const> ys, ThreadPool* pool);

  // Row-wise RMS norm (see reference::rms_norm). y may equal x.
  void (*rms_norm)(const float* x, const float* weight, std::size_t n_rows, std::size_t n,
                   float eps, float* y, ThreadPool* pool);

  // In-place rotary embedding of x [n_tokens][n_heads][head_dim]. Angles are computed the way
  // ggml does (float, theta multiplied by base^(-2/n_rot) per pair).
  void (*rope)(float* x, std::size_t n_tokens, std::size_t n_heads, std::size_t head_dim,
               const std::int32_t* positions, const RopeParams& params, ThreadPool* pool);

  // Causal GQA over the KV cache (see AttentionArgs). out must not alias q, k or v. Reads keys in
  // either layout; `key_layout` is the one it reads fastest, the one a KV cache for this table
  // stores (kBlocks16 on AVX-512 and AMX, kRows elsewhere).
  void (*attention)(const AttentionArgs& args, ThreadPool* pool);
  KeyLayout key_layout;

  // out = silu(gate) * up, element-wise. out may equal gate or up.
  void (*swiglu)(const float* gate, const float* up, std::size_t n, float* out, ThreadPool* pool);

  // out = a + b (residual add). out may equal a or b.
  void (*add)(const float* a, const float* b, std::size_t n, float* out, ThreadPool* pool);

  // Embedding lookup: out = row `row` of `table`, decoded.
  void (*get_row)(const MatrixView& table, std::size_t row, float* out);

  // A second layout of a weight that this table's products read faster than the rows as stored
  // (on AVX-512 and AMX: K-quant and IQ4_XS rows in groups of 16, 4 codes of each row per
  // 32-bit lane): its size in bytes for a [rows, cols] weight, 0 when the table reads this encoding
  // as stored. pack_row_groups fills `out` (that many bytes, 64-byte aligned) from the weight as
  // stored, once, at load; a MatrixView then carries it as row_groups. Values do not change (the
  // definition's, bit for bit).
  std::size_t (*row_group_bytes)(DType dtype, std::size_t rows, std::size_t cols) noexcept;
  void (*pack_row_groups)(DType dtype, const void* rows, std::size_t n_rows, std::size_t cols,
                          void* out) noexcept;

  // In place softmax of n logits.
  void (*softmax)(float* x, std::size_t n);

  // out[i] = x[i] as F16, rounded to nearest even (an F16 KV cache's rows).
  void (*to_f16)(const float* x, std::size_t n, std::uint16_t* out);
};

// The table for the best ISA of this CPU, chosen on first use (thread-safe) and then fixed.
// The environment variable EREDU_CPU_ISA (scalar or generic, avx2, avx512, amx, auto) forces a
// table, for tests and side-by-side comparisons; a value that names no table, or a table this CPU
// cannot run, is logged as a warning and the best table is used instead (see select_isa).
[[nodiscard]] const KernelTable& kernels() noexcept;

// What kernels() picks for a requested EREDU_CPU_ISA value (empty: not set): the ISA, and why the
// request was not honoured (empty when it was, or when nothing was requested).
struct IsaSelection {
  Isa isa;
  std::string problem;
};
[[nodiscard]] IsaSelection select_isa(std::string_view requested);

// A specific table (tests, benchmarks); null when this CPU cannot run it.
[[nodiscard]] const KernelTable* kernels_for(Isa isa) noexcept;

// A bound weight as the kernels read it: its bytes as stored, and its row groups where the table
// packed them at load.
[[nodiscard]] inline MatrixView matrix_view(const CpuWeight& w) noexcept {
  return MatrixView{w.dtype, w.data(), w.rows(), w.cols(),
                    w.row_groups.empty() ? nullptr : w.row_groups.data()};
}

// Index of the largest value (first on ties); n > 0. Greedy sampling helper.
[[nodiscard]] std::size_t argmax(const float* x, std::size_t n) noexcept;

}  // namespace eredu::cpu
