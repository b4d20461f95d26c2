#pragma once
// The op-parity OpTable (op_parity.hpp) of any NeuralBackend's operators -- embedding, linear,
// rms_norm, rotary, attention, swiglu, add, logits -- i.e. the path a model runs, weights included:
// every weight goes through the backend's own materialize() of an in-memory checkpoint lease.
//
// A backend joins with a small adapter (host floats in and out of its tensors); everything else is
// written once here:
//
//   struct MyAdapter {
//     using backend_type = MyBackend;
//     const MyBackend& backend() const;
//     MyBackend::materialization_context materialization_context() const;
//     Result<MyBackend::tensor> upload(std::span<const float> values, std::size_t rows,
//                                      std::size_t cols) const;       // a [rows, cols] tensor
//     Result<std::vector<float>> download(const MyBackend::tensor& t) const;  // waits
//     void after_op() const;  // called after every op (e.g. fails on validation messages)
//   };
//   OpTable t = neural_op_table(std::make_shared<const MyAdapter>(...), "my-backend");
//
// How the kernel-shaped checks map onto operators:
//   * matmul           = linear(x, w);
//   * get_row          = embedding of the one token `row`;
//   * rms_norm         = rms_norm with the gain, or a gain of ones when the check has none
//                        (x * 1 is exact, so the unweighted reference still applies);
//   * rope             = rotary of each run of consecutive positions (the operator rotates rows
//                        first_position, first_position + 1, ...);
//   * attention        = a fresh one-layer KV cache filled through attention() itself: the prefix
//                        positions with zero queries (their output is discarded), then the
//                        checked tokens; the check's positions must be the last n_tokens of n_kv;
//   * swiglu, add      = the operators on [1, n] tensors;
//   * embedding, logits = the operators themselves (checks a kernel table has no entry for);
//   * softmax          = no operator (sampling runs on the host): reported unsupported.
// Adding an operator to the suite is one more lambda below built from the same helpers.
//
// What the kernel-level checks have and these lack: output guards only see the host copy (a
// device-side out-of-bounds write inside a rounded-up pool buffer is invisible here), and
// "never written" elements show up as stale pool data (a mismatch) rather than as the marker.

#include <gtest/gtest.h>

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <memory>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "eredu/checkpoint/lease.hpp"
#include "eredu/checkpoint/selection.hpp"
#include "eredu/checkpoint/tensor_catalog.hpp"
#include "eredu/core/kv_cache_type.hpp"
#include "eredu/core/neural_specs.hpp"
#include "eredu/core/result.hpp"
#include "op_parity.hpp"

namespace eredu::testing {

namespace neural_ops_detail {

// A Result of the op becomes the harness's verdict: kUnsupported skips with the backend's message;
// any other error fails the test (and is reported as unsupported so the harness stops comparing).
template <typename Adapter>
op_parity::OpResult verdict(const Adapter& adapter, const Result<void>& r) {
  adapter.after_op();
  if (r.has_value()) return op_parity::ok();
  if (r.error().code() != ErrorCode::kUnsupported) {
    ADD_FAILURE() << "operator failed: " << r.error().what();
  }
  return op_parity::unsupported(r.error().what());
}

// The backend's weight of `bytes` (packed as stored), through its materialize() of a lease.
template <typename Adapter>
Result<typename Adapter::backend_type::weight> make_weight(const Adapter& adapter, std::string name,
                                                           DType dtype,
                                                           std::vector<std::uint64_t> shape,
                                                           std::span<const std::byte> bytes) {
  using B = typename Adapter::backend_type;
  checkpoint::CheckpointLease::Parts parts;
  parts.metadata.name = name;
  parts.metadata.shape = shape;
  parts.metadata.dtype = dtype;
  parts.metadata.byte_length = bytes.size();
  parts.metadata.shard_path = "memory:op-parity";
  parts.selection = checkpoint::FullSelection{};
  parts.output_shape = shape;
  parts.proof = checkpoint::BoundedReadProof{true, 0, bytes.size()};
  parts.owned.assign(bytes.begin(), bytes.end());
  EREDU_TRY(auto in_flight, B::materialize(checkpoint::CheckpointLease(std::move(parts)),
                                           adapter.materialization_context()));
  return B::finish_materialization(std::move(in_flight));
}

inline std::span<const std::byte> matrix_bytes(const op_parity::MatrixView& m) {
  return {static_cast<const std::byte*>(m.data), m.rows * cpu::packed_row_bytes(m.dtype, m.cols)};
}

inline std::span<const std::byte> float_bytes(const std::vector<float>& v) {
  return std::as_bytes(std::span<const float>(v));
}

// Downloads `t` into `out`, checking it has the [rows, cols] shape the reference produces.
template <typename Adapter>
Result<void> read_into(const Adapter& adapter, const typename Adapter::backend_type::tensor& t,
                       std::size_t rows, std::size_t cols, float* out) {
  if (t.rows != rows || t.cols != cols) {
    return fail(ErrorCode::kInternal, "output is [" + std::to_string(t.rows) + ", " +
                                          std::to_string(t.cols) + "], expected [" +
                                          std::to_string(rows) + ", " + std::to_string(cols) + "]");
  }
  EREDU_TRY(std::vector<float> host, adapter.download(t));
  if (host.size() != rows * cols) {
    return fail(ErrorCode::kInternal, "downloaded " + std::to_string(host.size()) + " floats");
  }
  if (!host.empty()) std::memcpy(out, host.data(), host.size() * sizeof(float));
  return ok();
}

}  // namespace neural_ops_detail

template <typename Adapter>
op_parity::OpTable neural_op_table(std::shared_ptr<const Adapter> adapter, std::string name) {
  using namespace op_parity;
  using namespace neural_ops_detail;
  using Tensor = typename Adapter::backend_type::tensor;
  OpTable t;
  t.name = std::move(name);

  t.matmul = [adapter](const MatrixView& w, const float* x, std::size_t n, float* y) {
    const Adapter& a = *adapter;
    return verdict(a, [&]() -> Result<void> {
      EREDU_TRY(auto weight, make_weight(a, "w", w.dtype, {w.rows, w.cols}, matrix_bytes(w)));
      EREDU_TRY(Tensor xt, a.upload({x, n * w.cols}, n, w.cols));
      EREDU_TRY(Tensor yt, a.backend().linear(xt, weight));
      return read_into(a, yt, n, w.rows, y);
    }());
  };

  t.get_row = [adapter](const MatrixView& table, std::size_t row, float* out) {
    const Adapter& a = *adapter;
    return verdict(a, [&]() -> Result<void> {
      EREDU_TRY(auto weight, make_weight(a, "table", table.dtype, {table.rows, table.cols},
                                         matrix_bytes(table)));
      const std::uint32_t token = static_cast<std::uint32_t>(row);
      EREDU_TRY(Tensor e, a.backend().embedding(weight, std::span<const std::uint32_t>(&token, 1)));
      return read_into(a, e, 1, table.cols, out);
    }());
  };

  t.rms_norm = [adapter](const float* x, const float* w, std::size_t rows, std::size_t n, float eps,
                         float* y) {
    const Adapter& a = *adapter;
    return verdict(a, [&]() -> Result<void> {
      const std::vector<float> gain =
          w != nullptr ? std::vector<float>(w, w + n) : std::vector<float>(n, 1.0F);
      EREDU_TRY(auto g, make_weight(a, "gain", DType::kF32, {n}, float_bytes(gain)));
      EREDU_TRY(Tensor xt, a.upload({x, rows * n}, rows, n));
      EREDU_TRY(Tensor yt, a.backend().rms_norm(xt, g, RmsNormSpec{eps}));
      return read_into(a, yt, rows, n, y);
    }());
  };

  t.rope = [adapter](float* x, std::size_t n_tokens, std::size_t n_heads, std::size_t head_dim,
                     const std::int32_t* positions, const RopeParams& params) {
    const Adapter& a = *adapter;
    return verdict(a, [&]() -> Result<void> {
      RotarySpec spec;
      spec.heads = static_cast<std::uint32_t>(n_heads);
      spec.head_dim = static_cast<std::uint32_t>(head_dim);
      spec.rotated_dims = static_cast<std::uint32_t>(params.n_rot);
      spec.frequency_base = params.freq_base;
      spec.frequency_scale = params.freq_scale;
      spec.layout = params.mode == cpu::RopeMode::kNeox ? RotaryLayout::kHalfSplit
                                                        : RotaryLayout::kInterleaved;
      const std::size_t width = n_heads * head_dim;
      for (std::size_t first = 0; first < n_tokens;) {
        if (positions[first] < 0) return fail(ErrorCode::kUnsupported, "negative position");
        std::size_t end = first + 1;
        while (end < n_tokens && positions[end] == positions[end - 1] + 1)
          ++end;
        float* rows = x + first * width;
        EREDU_TRY(Tensor xt, a.upload({rows, (end - first) * width}, end - first, width));
        EREDU_TRY(Tensor yt,
                  a.backend().rotary(xt, spec, static_cast<std::uint32_t>(positions[first])));
        EREDU_TRY_VOID(read_into(a, yt, end - first, width, rows));
        first = end;
      }
      return ::eredu::ok();
    }());
  };

  t.attention = [adapter](const AttentionArgs& args) {
    const Adapter& a = *adapter;
    return verdict(a, [&]() -> Result<void> {
      const std::size_t n = args.n_tokens;
      if (n == 0 || args.n_kv < n) return fail(ErrorCode::kUnsupported, "no tokens");
      const std::size_t start = args.n_kv - n;
      for (std::size_t i = 0; i < n; ++i) {
        if (args.positions[i] != static_cast<std::int32_t>(start + i)) {
          return fail(ErrorCode::kUnsupported,
                      "the attention operator attends at the positions after the cached ones");
        }
      }
      const std::size_t q_width = args.n_head * args.head_dim;
      const std::size_t kv_width = args.n_head_kv * args.head_dim;
      // The operator takes F32 keys and values and stores them in the cache's own type: F16
      // values widened to F32 are stored back exactly.
      std::vector<float> k(args.n_kv * kv_width);
      std::vector<float> v(k.size());
      const bool f16 = args.kv_dtype == DType::kF16;
      for (std::size_t i = 0; i < k.size(); ++i) {
        if (f16) {
          k[i] = encoding::fp16_to_fp32(static_cast<const std::uint16_t*>(args.k)[i]);
          v[i] = encoding::fp16_to_fp32(static_cast<const std::uint16_t*>(args.v)[i]);
        } else {
          k[i] = static_cast<const float*>(args.k)[i];
          v[i] = static_cast<const float*>(args.v)[i];
        }
      }
      const KvCacheSpec cache_spec{1, static_cast<std::uint32_t>(args.n_head_kv),
                                   static_cast<std::uint32_t>(args.head_dim),
                                   static_cast<std::uint32_t>(args.n_kv)};
      EREDU_TRY(auto cache, a.backend().create_kv_cache_of(
                                cache_spec, f16 ? KvCacheType::kF16 : KvCacheType::kF32));
      AttentionSpec spec;
      spec.layer = 0;
      spec.heads = static_cast<std::uint32_t>(args.n_head);
      spec.kv_heads = static_cast<std::uint32_t>(args.n_head_kv);
      spec.head_dim = static_cast<std::uint32_t>(args.head_dim);
      spec.scale = args.scale;
      auto rows_of = [&](const std::vector<float>& m, std::size_t from, std::size_t count) {
        return a.upload({m.data() + from * kv_width, count * kv_width}, count, kv_width);
      };
      if (start > 0) {
        const std::vector<float> zero_q(start * q_width, 0.0F);
        EREDU_TRY(Tensor q0, a.upload(zero_q, start, q_width));
        EREDU_TRY(Tensor k0, rows_of(k, 0, start));
        EREDU_TRY(Tensor v0, rows_of(v, 0, start));
        EREDU_TRY(Tensor ignored, a.backend().attention(q0, k0, v0, cache, spec, 0));
        (void)ignored;
      }
      EREDU_TRY(Tensor qt, a.upload({args.q, n * q_width}, n, q_width));
      EREDU_TRY(Tensor kt, rows_of(k, start, n));
      EREDU_TRY(Tensor vt, rows_of(v, start, n));
      EREDU_TRY(Tensor out,
                a.backend().attention(qt, kt, vt, cache, spec, static_cast<std::uint32_t>(start)));
      return read_into(a, out, n, q_width, args.out);
    }());
  };

  t.swiglu = [adapter](const float* gate, const float* up, std::size_t n, float* out) {
    const Adapter& a = *adapter;
    return verdict(a, [&]() -> Result<void> {
      EREDU_TRY(Tensor g, a.upload({gate, n}, 1, n));
      EREDU_TRY(Tensor u, a.upload({up, n}, 1, n));
      EREDU_TRY(Tensor y, a.backend().swiglu(g, u));
      return read_into(a, y, 1, n, out);
    }());
  };

  t.add = [adapter](const float* x, const float* y, std::size_t n, float* out) {
    const Adapter& a = *adapter;
    return verdict(a, [&]() -> Result<void> {
      EREDU_TRY(Tensor xt, a.upload({x, n}, 1, n));
      EREDU_TRY(Tensor yt, a.upload({y, n}, 1, n));
      EREDU_TRY(Tensor sum, a.backend().add(xt, yt));
      return read_into(a, sum, 1, n, out);
    }());
  };

  t.embedding = [adapter](const MatrixView& table, const std::uint32_t* tokens, std::size_t n,
                          float* out) {
    const Adapter& a = *adapter;
    return verdict(a, [&]() -> Result<void> {
      EREDU_TRY(auto weight, make_weight(a, "table", table.dtype, {table.rows, table.cols},
                                         matrix_bytes(table)));
      EREDU_TRY(Tensor e, a.backend().embedding(weight, std::span<const std::uint32_t>(tokens, n)));
      return read_into(a, e, n, table.cols, out);
    }());
  };

  t.logits = [adapter](const MatrixView& w, const float* hidden, std::size_t n_rows, float* y) {
    const Adapter& a = *adapter;
    return verdict(a, [&]() -> Result<void> {
      EREDU_TRY(auto weight, make_weight(a, "output", w.dtype, {w.rows, w.cols}, matrix_bytes(w)));
      EREDU_TRY(Tensor h, a.upload({hidden, n_rows * w.cols}, n_rows, w.cols));
      EREDU_TRY(Tensor logits, a.backend().logits(h, weight));
      return read_into(a, logits, 1, w.rows, y);
    }());
  };

  t.softmax = [](float*, std::size_t) {
    return unsupported("no NeuralBackend operator: sampling runs on the host");
  };
  return t;
}

}  // namespace eredu::testing
