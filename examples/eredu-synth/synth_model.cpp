#include "synth_model.hpp"

#include <algorithm>
#include <optional>
#include <thread>

#include "eredu/checkpoint/encoding/codec.hpp"
#include "eredu/checkpoint/gguf_stream_writer.hpp"
#include "normal_sampler.hpp"
#include "synth_vocabulary.hpp"

namespace eredu::synth {
namespace {

using checkpoint::GgufArray;
using checkpoint::GgufStreamWriter;
using checkpoint::GgufValue;

constexpr double kWeightStddev = 0.02;
// Rows are generated and written in batches of about this many encoded bytes.
constexpr std::uint64_t kBatchBytes = 4ull << 20;

void add_metadata(GgufStreamWriter& w, const SynthSpec& spec) {
  const ModelShape& s = spec.shape;
  const auto u32 = [](std::uint32_t v) { return GgufValue(v); };
  // Keys, value types and order as llama.cpp's convert_hf_to_gguf.py writes a Llama model.
  w.add_metadata("general.architecture", GgufValue("llama"));
  w.add_metadata("general.type", GgufValue("model"));
  w.add_metadata("general.name", GgufValue(spec.name));
  w.add_metadata("llama.vocab_size", u32(s.vocab));
  w.add_metadata("llama.context_length", u32(s.context));
  w.add_metadata("llama.embedding_length", u32(s.hidden));
  w.add_metadata("llama.block_count", u32(s.layers));
  w.add_metadata("llama.feed_forward_length", u32(s.ffn));
  w.add_metadata("llama.attention.head_count", u32(s.heads));
  w.add_metadata("llama.attention.head_count_kv", u32(s.kv_heads));
  w.add_metadata("llama.rope.dimension_count", u32(s.head_dim));
  w.add_metadata("llama.rope.freq_base", GgufValue(s.rope_base));
  w.add_metadata("llama.attention.layer_norm_rms_epsilon", GgufValue(s.rms_eps));
  // llama.cpp derives the head size as embedding_length / head_count unless told otherwise; the
  // converter writes the lengths only when the model's head size differs from that.
  if (static_cast<std::uint64_t>(s.heads) * s.head_dim != s.hidden) {
    w.add_metadata("llama.attention.key_length", u32(s.head_dim));
    w.add_metadata("llama.attention.value_length", u32(s.head_dim));
  }
  w.add_metadata("general.file_type", u32(llama_file_type(spec.encoding, spec.mixture)));

  SynthVocabulary vocab = make_vocabulary(s.vocab);
  w.add_metadata("tokenizer.ggml.model", GgufValue("llama"));
  w.add_metadata("tokenizer.ggml.tokens",
                 GgufValue(GgufArray::of_strings(std::move(vocab.tokens))));
  w.add_metadata("tokenizer.ggml.scores", GgufValue(GgufArray::of(vocab.scores)));
  w.add_metadata("tokenizer.ggml.token_type", GgufValue(GgufArray::of(vocab.types)));
  w.add_metadata("tokenizer.ggml.bos_token_id", u32(1));
  w.add_metadata("tokenizer.ggml.eos_token_id", u32(2));
  w.add_metadata("tokenizer.ggml.unknown_token_id", u32(0));
  w.add_metadata("tokenizer.ggml.add_bos_token", GgufValue(true));
  w.add_metadata("tokenizer.ggml.add_eos_token", GgufValue(false));
  // The converter writes the quantization version into every file, whatever the encoding.
  w.add_metadata("general.quantization_version", u32(2));
}

// Encodes rows [first, first + count) of tensor `index` into `out` (count * row_bytes bytes).
Result<void> encode_rows(const SynthSpec& spec, const PlannedTensor& t, std::uint64_t index,
                         std::uint64_t first, std::uint64_t count, std::uint64_t row_bytes,
                         std::span<std::byte> out) {
  const std::uint64_t row_length = t.shape.back();
  std::vector<float> row(static_cast<std::size_t>(row_length));
  for (std::uint64_t r = 0; r < count; ++r) {
    if (t.is_norm) {
      std::fill(row.begin(), row.end(), 1.0f);
    } else {
      NormalSampler(seed_for_row(spec.seed, index, first + r)).fill(row, kWeightStddev);
    }
    EREDU_TRY_VOID(encoding::quantize(t.dtype, row, out.subspan(r * row_bytes, row_bytes)));
  }
  return ok();
}

// Rows [first, first + count) split into contiguous ranges over `threads` threads.
Result<void> encode_batch(const SynthSpec& spec, const PlannedTensor& t, std::uint64_t index,
                          std::uint64_t first, std::uint64_t count, std::uint64_t row_bytes,
                          std::span<std::byte> out) {
  const std::uint64_t threads = std::clamp<std::uint64_t>(spec.threads, 1, count);
  std::vector<std::optional<Error>> errors(threads);
  {
    std::vector<std::jthread> workers;
    for (std::uint64_t k = 0; k < threads; ++k) {
      const std::uint64_t begin = count * k / threads;
      const std::uint64_t end = count * (k + 1) / threads;
      auto job = [&, k, begin, end] {
        auto r = encode_rows(spec, t, index, first + begin, end - begin, row_bytes,
                             out.subspan(begin * row_bytes, (end - begin) * row_bytes));
        if (!r) errors[k] = std::move(r).error();
      };
      if (k + 1 == threads) {
        job();  // the calling thread takes the last range
      } else {
        workers.emplace_back(job);
      }
    }
  }
  for (auto& e : errors) {
    if (e) return fail(std::move(*e).with_subject(t.name));
  }
  return ok();
}

Result<void> write_payloads(const SynthSpec& spec, const std::vector<PlannedTensor>& plan,
                            GgufStreamWriter& w) {
  std::vector<std::byte> buffer;
  for (std::size_t i = 0; i < plan.size(); ++i) {
    const PlannedTensor& t = plan[i];
    const std::uint64_t rows = t.shape.size() == 1 ? 1 : t.shape[0];
    EREDU_TRY(const std::uint64_t row_bytes, encoding::encoded_size(t.dtype, t.shape.back()));
    const std::uint64_t batch_rows = std::max<std::uint64_t>(1, kBatchBytes / row_bytes);
    for (std::uint64_t first = 0; first < rows; first += batch_rows) {
      const std::uint64_t count = std::min(batch_rows, rows - first);
      buffer.resize(static_cast<std::size_t>(count * row_bytes));
      EREDU_TRY_VOID(encode_batch(spec, t, i, first, count, row_bytes, buffer));
      EREDU_TRY_VOID(w.write_tensor_data(buffer));
    }
  }
  return ok();
}

// The type llama-quantize stores a K-quant or IQ4_XS tensor in when its rows are not whole
// super-blocks (llama.cpp's llama_tensor_get_type): Q4_K -> Q5_0, Q5_K -> Q5_1, Q6_K -> Q8_0,
// IQ4_XS -> IQ4_NL.
DType kquant_fallback(DType type) {
  switch (type) {
    case DType::kIQ4_XS:
      return DType::kIQ4_NL;
    case DType::kQ4_K:
      return DType::kQ5_0;
    case DType::kQ5_K:
      return DType::kQ5_1;
    case DType::kQ6_K:
      return DType::kQ8_0;
    default:
      return DType::kF16;
  }
}

}  // namespace

std::vector<PlannedTensor> plan_tensors(const SynthSpec& spec) {
  const ModelShape& s = spec.shape;
  const std::uint64_t q_rows = std::uint64_t{s.heads} * s.head_dim;
  const std::uint64_t kv_rows = std::uint64_t{s.kv_heads} * s.head_dim;
  const std::uint32_t block = dtype_info(spec.encoding).block_elements;
  std::vector<PlannedTensor> plan;
  const auto norm = [&](std::string name) {
    plan.push_back({std::move(name), {s.hidden}, DType::kF32, true, false});
  };
  const auto matrix = [&](std::string name, std::uint64_t rows, std::uint64_t row_length,
                          bool more_bits = false) {
    // A medium mixture's Q6_K has the same 256-element blocks as Q4_K / Q5_K.
    const bool medium = spec.mixture == Mixture::kMedium;
    const DType type = medium && more_bits ? DType::kQ6_K : spec.encoding;
    const bool fits = row_length % block == 0;
    // Rows that are not whole super-blocks: a medium mixture and IQ4_XS take llama-quantize's
    // fallback (32-element blocks), anything else keeps F16.
    const DType fallback = medium || type == DType::kIQ4_XS ? kquant_fallback(type) : DType::kF16;
    plan.push_back({std::move(name), {rows, row_length}, fits ? type : fallback, false, !fits});
  };
  matrix("token_embd.weight", s.vocab, s.hidden);
  norm("output_norm.weight");
  matrix("output.weight", s.vocab, s.hidden, true);
  for (std::uint32_t l = 0; l < s.layers; ++l) {
    const std::string p = "blk." + std::to_string(l) + ".";
    norm(p + "attn_norm.weight");
    matrix(p + "attn_q.weight", q_rows, s.hidden);
    matrix(p + "attn_k.weight", kv_rows, s.hidden);
    matrix(p + "attn_v.weight", kv_rows, s.hidden, uses_more_bits(l, s.layers));
    matrix(p + "attn_output.weight", s.hidden, q_rows);
    norm(p + "ffn_norm.weight");
    matrix(p + "ffn_gate.weight", s.ffn, s.hidden);
    matrix(p + "ffn_up.weight", s.ffn, s.hidden);
    matrix(p + "ffn_down.weight", s.hidden, s.ffn, uses_more_bits(l, s.layers));
  }
  return plan;
}

Result<WriteReport> write_synthetic_model(
    const SynthSpec& spec, const std::filesystem::path& path,
    const std::function<void(std::string_view)>& on_fallback) {
  EREDU_TRY_VOID(validate(spec.shape));
  if (!encoding::can_quantize(spec.encoding)) {
    return fail(ErrorCode::kUnsupported,
                "no reference quantizer for " + std::string(to_string(spec.encoding)));
  }
  const std::vector<PlannedTensor> plan = plan_tensors(spec);
  WriteReport report;
  const std::string type_name(to_string(spec.encoding));
  for (const PlannedTensor& t : plan) {
    report.parameters += t.shape.size() == 1 ? t.shape[0] : t.shape[0] * t.shape[1];
    if (!t.fell_back) continue;
    std::string message =
        t.name + ": row length " + std::to_string(t.shape.back()) + " is not a multiple of the " +
        type_name + " block size " + std::to_string(dtype_info(spec.encoding).block_elements) +
        (t.dtype == DType::kF16 ? "; keeping this tensor F16"
                                : "; storing it as " + std::string(to_string(t.dtype)) +
                                      " (llama-quantize's fallback)");
    if (on_fallback) on_fallback(message);
    report.fallbacks.push_back(std::move(message));
  }

  GgufStreamWriter writer;
  add_metadata(writer, spec);
  for (const PlannedTensor& t : plan)
    EREDU_TRY_VOID(writer.add_tensor_info(t.name, t.dtype, t.shape));
  EREDU_TRY_VOID(writer.open(path));
  auto written = write_payloads(spec, plan, writer);
  if (written) written = writer.close();
  if (!written) {
    Error error = written.error();
    writer = GgufStreamWriter();  // closes the file before it is removed
    std::error_code ignored;
    std::filesystem::remove(path, ignored);
    return fail(std::move(error).with_path(path.string()));
  }
  report.file_bytes = writer.file_size();
  return report;
}

}  // namespace eredu::synth
