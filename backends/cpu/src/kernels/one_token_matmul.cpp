// One token through weight matrices (decode): alone (matmul() sends every one-token product here)
// or several weights that read the same activation row (Q/K/V, gate/up).
//
// Each weight takes the one-token product its encoding has on the table:
//   K-quants and IQ4_XS with an integer kernel   the activations as q8_K blocks, KQuantGemm;
//   encodings with an integer row dot            8-bit blocks of 32, then the one-token product
//                                                (quant_matvec) or else the row dot row by row;
//   F16 / BF16 with a half-precision row dot     the activations stored in the weights' type;
//   anything else                                the row decoded to floats, then dot_f32.
// A weight's values therefore do not depend on the others beside it, nor on the thread count.
//
// What a group shares: each activation form is made once, on the calling thread, for every weight
// that reads it, and all the weights' rows are one pool job. On llama1b a layer then makes 2
// activation passes and 2 jobs for Q/K/V and gate/up instead of 5 of each: the K and V products
// are 256 rows (~0.3 MB of Q4_0), so a job's hand-off and wait, and the calling thread's
// quantization while the workers wait, were a fair part of their time.
//
// How a job is cut: into units of about kUnitBytes of one weight's rows, each thread owning one
// contiguous share of them and a thread done with its own taking units from the back of the
// others' (Schedule::kStealing). Two cores of a Zen 4 guest rarely stream at the same rate for a
// whole product: with one share of bytes per thread, the first to finish waited 3-4% of a llama1b
// decode product (the ends of the two shares 45-60 thousand cycles apart on average, rdtsc), with
// units 0.6-0.8% (9-11 thousand). In the slow memory state one core nearly fills the bus alone
// (read test 29 GB/s on one thread, 31-35 on two), so the gain shows in the fast state and on
// the small products of smol135m; interleaved A/B, 8 rounds, median of paired ratios: smol135m
// Q8_0 tg 1.07x, Q4_K_M 1.02x, llama1b Q4_0 1.03x, Q4_K_M 0.98x.
#include <algorithm>
#include <cstdint>

#include "eredu/backends/cpu/reference.hpp"
#include "kernel_impl.hpp"
#include "row_groups.hpp"
#include "thread_scratch.hpp"
#include "token_forms.hpp"

namespace eredu::cpu::detail {

namespace {

constexpr std::size_t kMaxProducts = 8;
// A unit of a job: about this many bytes of one weight's rows. Small enough that the two threads
// of a decode product end within a few microseconds of each other (each takes units from its own
// share, then from the back of the other's), large enough that taking one costs nothing next to
// reading it (llama1b: a unit is 16 rows of Q4_K, ~1 us of one core's stream).
constexpr std::size_t kUnitBytes = std::size_t{16} << 10;
constexpr std::size_t kRowGrain = 4;  // a unit is a multiple of this many rows (or of a row
                                      // group, for a weight read from its row groups)

using HalfRowDot = void (*)(const std::uint16_t*, const std::uint16_t*, std::size_t, std::size_t,
                            std::size_t, float*, std::size_t);

// The activation forms a product reads.
enum class Form : std::uint8_t { kQ8K, kQ8, kF16, kBF16, kF32 };

// One weight's product as this table runs it.
struct Product {
  const MatrixView* w = nullptr;
  float* y = nullptr;
  std::size_t row_bytes = 0;
  Form form = Form::kF32;
  KQuantGemm kgemm = nullptr;
  RowGroupDecode group_decode = nullptr;       // the rows `groups` reads, from w->row_groups
  RowGroupDecodeQ8 group_decode_q8 = nullptr;  // the same, for the kQ8 form
  RowGroupSplit groups;                        // the rows read from w's row groups, if any
  std::size_t row_grain = kRowGrain;
  QuantMatvec qmatvec = nullptr;
  QuantRowDot qdot = nullptr;
  HalfRowDot half_dot = nullptr;
};

// The product reads rows [0, rows / 16 * 16) from w's row groups, so its units are whole groups.
void read_whole_groups(Product& p) {
  p.groups = RowGroupSplit(*p.w, true);
  p.row_grain = kRowGroupRows;
}

Product product_for(const VecOps& ops, const MatrixView& w, float* y) {
  Product p;
  p.w = &w;
  p.y = y;
  p.row_bytes = packed_row_bytes(w.dtype, w.cols);
  if (ops.quantize_act_q8k != nullptr && ops.kquant_gemm != nullptr) {
    p.kgemm = ops.kquant_gemm(w.dtype);
    if (p.kgemm != nullptr) {
      p.form = Form::kQ8K;
      if (w.row_groups != nullptr && ops.row_group_products != nullptr) {
        p.group_decode = ops.row_group_products(w.dtype).decode;
        read_whole_groups(p);
      }
      return p;
    }
  }
  if (ops.quantize_act_q8 != nullptr) {
    p.qdot = ops.quant_row_dot(w.dtype);
    if (p.qdot != nullptr) {
      p.qmatvec = ops.quant_matvec != nullptr ? ops.quant_matvec(w.dtype) : nullptr;
      p.form = Form::kQ8;
      if (w.row_groups != nullptr && ops.row_group_products != nullptr) {
        p.group_decode_q8 = ops.row_group_products(w.dtype).decode_q8;
        if (p.group_decode_q8 != nullptr) read_whole_groups(p);
      }
      return p;
    }
  }
  if (w.dtype == DType::kF16 && ops.dot_f16_f16_tokens != nullptr && ops.f32_to_f16 != nullptr) {
    p.half_dot = ops.dot_f16_f16_tokens;
    p.form = Form::kF16;
  } else if (w.dtype == DType::kBF16 && ops.dot_bf16_bf16_tokens != nullptr &&
             ops.f32_to_bf16 != nullptr) {
    p.half_dot = ops.dot_bf16_bf16_tokens;
    p.form = Form::kBF16;
  }
  return p;
}

// The token in every form some product reads.
struct Activations {
  const float* f32 = nullptr;
  const encoding::BlockQ8_K* q8k = nullptr;
  const ActQ8Block* q8 = nullptr;
  const std::uint16_t* f16 = nullptr;
  const std::uint16_t* bf16 = nullptr;
};

// Each form some product reads, made once on the calling thread, before the job reads it.
Activations prepare(std::span<const Product> products, TokenForms& forms) {
  Activations a;
  a.f32 = forms.f32();
  for (const Product& p : products) {
    switch (p.form) {
      case Form::kQ8K:
        a.q8k = forms.q8k(nullptr);
        break;
      case Form::kQ8:
        a.q8 = forms.q8(nullptr);
        break;
      case Form::kF16:
        a.f16 = forms.halves(DType::kF16, nullptr);
        break;
      case Form::kBF16:
        a.bf16 = forms.halves(DType::kBF16, nullptr);
        break;
      case Form::kF32:
        break;
    }
  }
  return a;
}

// Rows [r0, r1) of one product.
void run_rows(const VecOps& ops, const Product& p, const Activations& a, std::size_t r0,
              std::size_t r1) {
  const MatrixView& w = *p.w;
  const auto* base = static_cast<const std::byte*>(w.data);
  switch (p.form) {
    case Form::kQ8K: {
      const std::size_t n_super = w.cols / encoding::kQK_K;
      p.groups.split(
          r0, r1,
          [&](const std::byte* groups, std::size_t n_groups) {
            p.group_decode(groups, n_groups, a.q8k, n_super, p.y + r0);
          },
          [&](std::size_t tail) {
            p.kgemm(base + tail * p.row_bytes, p.row_bytes, r1 - tail, a.q8k, n_super, 1,
                    p.y + tail, w.rows);
          });
      return;
    }
    case Form::kQ8: {
      const std::size_t n_blocks = w.cols / 32;
      p.groups.split(
          r0, r1,
          [&](const std::byte* groups, std::size_t n_groups) {
            p.group_decode_q8(groups, n_groups, a.q8, n_blocks, p.y + r0);
          },
          [&](std::size_t tail) {
            if (p.qmatvec != nullptr) {
              const std::size_t lines = (quant_matvec_scratch_bytes(n_blocks) + 63) / 64;
              p.qmatvec(base + tail * p.row_bytes, p.row_bytes, r1 - tail, a.q8, n_blocks,
                        p.y + tail, thread_scratch<CacheLine, MatvecLayout>(lines));
              return;
            }
            for (std::size_t o = tail; o < r1; ++o)
              p.y[o] = p.qdot(base + o * p.row_bytes, a.q8, n_blocks);
          });
      return;
    }
    case Form::kF16:
    case Form::kBF16: {
      const std::uint16_t* halves = p.form == Form::kF16 ? a.f16 : a.bf16;
      const auto* rows = static_cast<const std::uint16_t*>(w.data);
      for (std::size_t o = r0; o < r1; ++o)
        p.half_dot(rows + o * w.cols, halves, w.cols, 1, w.cols, p.y + o, w.rows);
      return;
    }
    case Form::kF32: {
      float* buffer = thread_scratch<float, DecodedRow>(w.cols);
      for (std::size_t o = r0; o < r1; ++o) {
        const float* row = decode_row(ops, w.dtype, base + o * p.row_bytes, w.cols, buffer);
        p.y[o] = ops.dot_f32(row, a.f32, w.cols);
      }
      return;
    }
  }
}

// The products' rows cut into units of about kUnitBytes (whole row grains of one product), laid
// end to end: unit u of product i, first[i] <= u < first[i + 1], is its rows from
// (u - first[i]) * unit_rows[i].
struct Units {
  std::size_t first[kMaxProducts + 1] = {};
  std::size_t unit_rows[kMaxProducts] = {};

  explicit Units(std::span<const Product> products) {
    for (std::size_t i = 0; i < products.size(); ++i) {
      const Product& p = products[i];
      // (A weight of empty rows, if one reaches here, is one unit.)
      const std::size_t fit =
          p.row_bytes > 0 ? kUnitBytes / p.row_bytes / p.row_grain * p.row_grain : p.w->rows;
      unit_rows[i] = std::max(p.row_grain, fit);
      first[i + 1] = first[i] + (p.w->rows + unit_rows[i] - 1) / unit_rows[i];
    }
  }
};

// Units [u0, u1), each product's consecutive units in one call.
void run_units(const VecOps& ops, std::span<const Product> products, const Units& units,
               const Activations& a, std::size_t u0, std::size_t u1) {
  for (std::size_t i = 0; i < products.size() && u0 < u1; ++i) {
    if (u0 >= units.first[i + 1]) continue;
    const std::size_t end = std::min(u1, units.first[i + 1]);
    const std::size_t rows = products[i].w->rows;
    const std::size_t r0 = (u0 - units.first[i]) * units.unit_rows[i];
    const std::size_t r1 = std::min(rows, (end - units.first[i]) * units.unit_rows[i]);
    run_rows(ops, products[i], a, r0, r1);
    u0 = end;
  }
}

}  // namespace

void matmul_one_token(const VecOps& ops, std::span<const MatrixView> ws, const float* x,
                      std::span<float* const> ys, ThreadPool* pool) {
  Product products[kMaxProducts];
  // A longer group (no family has one) goes in groups of kMaxProducts.
  if (ws.size() > kMaxProducts) {
    matmul_one_token(ops, ws.first(kMaxProducts), x, ys.first(kMaxProducts), pool);
    matmul_one_token(ops, ws.subspan(kMaxProducts), x, ys.subspan(kMaxProducts), pool);
    return;
  }
  std::size_t work = 0;
  std::size_t n = 0;
  for (std::size_t i = 0; i < ws.size(); ++i) {
    if (ws[i].rows == 0) continue;
    products[n] = product_for(ops, ws[i], ys[i]);
    work += ws[i].rows * ws[i].cols;
    ++n;
  }
  if (n == 0) return;
  const std::span<const Product> group(products, n);
  TokenForms forms(ops, x, 1, ws[0].cols);
  const Activations a = prepare(group, forms);

  if (work < 2 * kMinParallelWork) pool = nullptr;  // not worth a wake-up
  const Units units(group);
  auto run = [&](std::size_t u0, std::size_t u1) { run_units(ops, group, units, a, u0, u1); };
  parallel_for(pool, units.first[n], run, 1, Schedule::kStealing);
}

}  // namespace eredu::cpu::detail
