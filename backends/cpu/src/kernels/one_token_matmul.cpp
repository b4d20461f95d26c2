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
// that reads it, and all the weights' rows are one pool job, cut into one contiguous share of
// bytes per thread (rows rounded to groups of kRowGrain within a weight). On llama1b a layer then
// makes 2 activation passes and 2 jobs for Q/K/V and gate/up instead of 5 of each: the K and V
// products are 256 rows (~0.3 MB of Q4_0), so a job's hand-off and wait, and the calling thread's
// quantization while the workers wait, were a fair part of their time.
#include <algorithm>
#include <cstdint>

#include "eredu/backends/cpu/reference.hpp"
#include "kernel_impl.hpp"
#include "row_groups.hpp"
#include "thread_scratch.hpp"
#include "token_forms.hpp"

namespace eredu::cpu::detail {

namespace {

constexpr std::size_t kRowGrain = 4;  // a share starts on a multiple of this many rows (or of
                                      // a row group, for a weight read from its row groups)

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
  RowGroupDecode group_decode = nullptr;       // rows [0, grouped_rows) from w->row_groups
  RowGroupDecodeQ8 group_decode_q8 = nullptr;  // the same, for the kQ8 form
  std::size_t grouped_rows = 0;
  std::size_t row_grain = kRowGrain;
  QuantMatvec qmatvec = nullptr;
  QuantRowDot qdot = nullptr;
  HalfRowDot half_dot = nullptr;
};

// The product reads rows [0, grouped_rows) from w's row groups, so its shares start on whole
// groups.
void read_whole_groups(Product& p) {
  p.grouped_rows = p.w->rows / kRowGroupRows * kRowGroupRows;
  p.row_grain = kRowGroupRows;
}

// The row groups a product reads for rows [r0, end), end = min(r1, grouped_rows), r0 < end: r0 and
// r1 (a share boundary, or the last row) are multiples of a group within them.
struct GroupedRows {
  const std::byte* first;
  std::size_t count;
  std::size_t end;
};
GroupedRows grouped_rows(const Product& p, std::size_t r0, std::size_t r1) {
  const MatrixView& w = *p.w;
  const std::size_t end = std::min(r1, p.grouped_rows);
  const auto* groups = static_cast<const std::byte*>(w.row_groups);
  return {groups + r0 / kRowGroupRows * row_group_stride(w.dtype, w.cols),
          (end - r0) / kRowGroupRows, end};
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
      if (p.group_decode != nullptr && r0 < p.grouped_rows) {
        const GroupedRows g = grouped_rows(p, r0, r1);
        p.group_decode(g.first, g.count, a.q8k, n_super, p.y + r0);
        r0 = g.end;
      }
      if (r0 < r1)
        p.kgemm(base + r0 * p.row_bytes, p.row_bytes, r1 - r0, a.q8k, n_super, 1, p.y + r0, w.rows);
      return;
    }
    case Form::kQ8: {
      const std::size_t n_blocks = w.cols / 32;
      if (p.group_decode_q8 != nullptr && r0 < p.grouped_rows) {
        const GroupedRows g = grouped_rows(p, r0, r1);
        p.group_decode_q8(g.first, g.count, a.q8, n_blocks, p.y + r0);
        r0 = g.end;
        if (r0 == r1) return;
      }
      if (p.qmatvec != nullptr) {
        const std::size_t lines = (quant_matvec_scratch_bytes(n_blocks) + 63) / 64;
        p.qmatvec(base + r0 * p.row_bytes, p.row_bytes, r1 - r0, a.q8, n_blocks, p.y + r0,
                  thread_scratch<CacheLine, MatvecLayout>(lines));
        return;
      }
      for (std::size_t o = r0; o < r1; ++o)
        p.y[o] = p.qdot(base + o * p.row_bytes, a.q8, n_blocks);
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

// A place in the products' rows laid end to end: row `row` of product `product`.
struct Cursor {
  std::size_t product;
  std::size_t row;
};

// Where share s of n starts: the row holding byte s * total / n of the products' rows laid end to
// end, rounded down to a multiple of kRowGrain within its product. Monotone in s, so the shares
// cover every row exactly once.
Cursor share_start(std::span<const Product> products, std::size_t total_bytes, std::size_t s,
                   std::size_t n) {
  if (s == n) return {products.size(), 0};
  // total_bytes * s stays far below 2^64: a model's matrices are at most terabytes, s < threads.
  std::size_t byte = total_bytes * s / n;
  for (std::size_t i = 0; i < products.size(); ++i) {
    const std::size_t bytes = products[i].w->rows * products[i].row_bytes;
    if (byte < bytes) {
      const std::size_t grain = products[i].row_grain;
      return {i, byte / products[i].row_bytes / grain * grain};
    }
    byte -= bytes;
  }
  return {products.size(), 0};
}

}  // namespace

void matmul_one_token(const VecOps& ops, std::span<const MatrixView> ws, const float* x,
                      std::span<float* const> ys, ThreadPool* pool) {
  constexpr std::size_t kMaxProducts = 8;
  Product products[kMaxProducts];
  // A longer group (no family has one) goes in groups of kMaxProducts.
  if (ws.size() > kMaxProducts) {
    matmul_one_token(ops, ws.first(kMaxProducts), x, ys.first(kMaxProducts), pool);
    matmul_one_token(ops, ws.subspan(kMaxProducts), x, ys.subspan(kMaxProducts), pool);
    return;
  }
  std::size_t total_bytes = 0;
  std::size_t work = 0;
  std::size_t n = 0;
  for (std::size_t i = 0; i < ws.size(); ++i) {
    if (ws[i].rows == 0) continue;
    products[n] = product_for(ops, ws[i], ys[i]);
    total_bytes += ws[i].rows * products[n].row_bytes;
    work += ws[i].rows * ws[i].cols;
    ++n;
  }
  if (n == 0) return;
  const std::span<const Product> group(products, n);
  TokenForms forms(ops, x, 1, ws[0].cols);
  const Activations a = prepare(group, forms);

  if (work < 2 * kMinParallelWork) pool = nullptr;  // not worth a wake-up
  const std::size_t shares = pool != nullptr ? pool->size() : 1;
  auto run_shares = [&](std::size_t s0, std::size_t s1) {
    for (std::size_t s = s0; s < s1; ++s) {
      const Cursor from = share_start(group, total_bytes, s, shares);
      const Cursor to = share_start(group, total_bytes, s + 1, shares);
      for (std::size_t i = from.product; i < n && i <= to.product; ++i) {
        const std::size_t r0 = i == from.product ? from.row : 0;
        const std::size_t r1 = i == to.product ? to.row : group[i].w->rows;
        if (r0 < r1) run_rows(ops, group[i], a, r0, r1);
      }
    }
  };
  parallel_for(pool, shares, run_shares, 1, Schedule::kStatic);
}

}  // namespace eredu::cpu::detail
