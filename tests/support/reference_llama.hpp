#pragma once
// An independent float64 forward pass of the GGUF `llama` architecture, written with plain loops
// for tests. It shares no code with eredu's backends or model layer: from eredu it uses only the
// GGUF container reader (to find tensors and metadata) and the checked scalar decoders of
// encoding/codec.hpp (bit-exact against ggml, to turn stored weights into numbers). Everything
// else (configuration, RMS norm, rotary embedding, grouped-query causal attention, SwiGLU,
// output head) is computed here in double precision.
//
// What it follows is llama.cpp's graph for LLM_ARCH_LLAMA:
//   x = token_embd[token]
//   per block: h = x + Wo * attention(rope(Wq * rms(x) * attn_norm), rope(Wk * ...), Wv * ...)
//              x = h + Wdown * (silu(Wgate * n) * (Wup * n)),  n = rms(h) * ffn_norm
//   logits = Woutput * (rms(x) * output_norm), Woutput = token_embd when output.weight is absent.
// Rotary embedding is llama.cpp's "NORM" mode (ggml rope mode 0): within each head, consecutive
// pairs (2i, 2i + 1) for 2i < n_rot are rotated by pos * freq_scale * base^(-2i / n_rot); the
// GGUF converter stores Q and K permuted so that this matches the original model. Attention is
// softmax(q.k / sqrt(head_dim)) over positions <= the current one; query head h reads KV head
// h / (n_head / n_head_kv).
//
// Errors (a missing key, a shape that contradicts the metadata, an encoding the decoders lack,
// rope scaling other than none/linear) throw std::runtime_error naming the file and what was wrong:
// this is test code, and a test that cannot build its oracle must fail loudly.

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <limits>
#include <span>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "eredu/checkpoint/encoding/codec.hpp"
#include "eredu/checkpoint/gguf.hpp"

namespace eredu::testing::reference {

// The hyper-parameters of a llama GGUF, read directly from its metadata.
struct LlamaHyperParameters {
  std::size_t n_vocab = 0;
  std::size_t n_embd = 0;
  std::size_t n_layer = 0;
  std::size_t n_ff = 0;
  std::size_t n_head = 0;
  std::size_t n_head_kv = 0;
  std::size_t head_dim = 0;  // n_embd / n_head
  std::size_t n_rot = 0;     // rotated dimensions per head (llama.rope.dimension_count)
  std::size_t n_ctx_train = 0;
  double rms_eps = 0.0;
  double rope_freq_base = 10000.0;
  double rope_freq_scale = 1.0;  // 1 / llama.rope.scaling.factor for linear scaling
};

// A dense row-major matrix of doubles: `rows` outputs, `cols` inputs (a GGUF tensor with
// ne = [cols, rows]).
struct DenseMatrix {
  std::size_t rows = 0;
  std::size_t cols = 0;
  std::vector<double> values;
  [[nodiscard]] const double* row(std::size_t r) const { return values.data() + r * cols; }
};

struct ReferenceLayer {
  std::vector<double> attn_norm;
  DenseMatrix wq, wk, wv, wo;
  std::vector<double> ffn_norm;
  DenseMatrix w_gate, w_up, w_down;
};

class ReferenceLlama {
 public:
  // Reads the metadata and decodes every weight of `path` to double. Throws std::runtime_error.
  static ReferenceLlama load(const std::filesystem::path& path) {
    auto opened = checkpoint::GgufFile::open(path);
    if (!opened) {
      throw std::runtime_error("reference llama: cannot open " + path.string() + ": " +
                               opened.error().what());
    }
    ReferenceLlama model;
    model.path_ = path.string();
    const checkpoint::GgufFile& file = *opened;
    model.read_hyper_parameters(file.contents());
    const LlamaHyperParameters& hp = model.hp_;
    const std::size_t n_embd_kv = hp.n_head_kv * hp.head_dim;

    model.token_embd_ = model.matrix(file, "token_embd.weight", hp.n_vocab, hp.n_embd);
    model.output_norm_ = model.vector(file, "output_norm.weight", hp.n_embd);
    if (file.find_tensor("output.weight") != nullptr) {
      model.output_ = model.matrix(file, "output.weight", hp.n_vocab, hp.n_embd);
      model.tied_output_ = false;
    } else {
      model.output_ = model.token_embd_;
      model.tied_output_ = true;
    }
    model.layers_.resize(hp.n_layer);
    for (std::size_t il = 0; il < hp.n_layer; ++il) {
      const std::string p = "blk." + std::to_string(il) + ".";
      ReferenceLayer& l = model.layers_[il];
      l.attn_norm = model.vector(file, p + "attn_norm.weight", hp.n_embd);
      l.wq = model.matrix(file, p + "attn_q.weight", hp.n_head * hp.head_dim, hp.n_embd);
      l.wk = model.matrix(file, p + "attn_k.weight", n_embd_kv, hp.n_embd);
      l.wv = model.matrix(file, p + "attn_v.weight", n_embd_kv, hp.n_embd);
      l.wo = model.matrix(file, p + "attn_output.weight", hp.n_embd, hp.n_head * hp.head_dim);
      l.ffn_norm = model.vector(file, p + "ffn_norm.weight", hp.n_embd);
      l.w_gate = model.matrix(file, p + "ffn_gate.weight", hp.n_ff, hp.n_embd);
      l.w_up = model.matrix(file, p + "ffn_up.weight", hp.n_ff, hp.n_embd);
      l.w_down = model.matrix(file, p + "ffn_down.weight", hp.n_embd, hp.n_ff);
    }
    return model;
  }

  [[nodiscard]] const LlamaHyperParameters& hyper_parameters() const noexcept { return hp_; }
  [[nodiscard]] bool tied_output() const noexcept { return tied_output_; }

  // Logits (n_vocab each) after every token of `tokens`, computed causally: row i depends on
  // tokens[0..i] only, exactly as if the tokens had been fed one at a time.
  [[nodiscard]] std::vector<std::vector<double>> forward(std::span<const int> tokens) const {
    const LlamaHyperParameters& hp = hp_;
    const std::size_t n = tokens.size();
    const std::size_t n_embd_kv = hp.n_head_kv * hp.head_dim;
    const std::size_t group = hp.n_head / hp.n_head_kv;
    const double kq_scale = 1.0 / std::sqrt(static_cast<double>(hp.head_dim));

    // Per layer, the rotated keys and the values of every position so far.
    std::vector<std::vector<double>> k_cache(hp.n_layer, std::vector<double>(n * n_embd_kv));
    std::vector<std::vector<double>> v_cache(hp.n_layer, std::vector<double>(n * n_embd_kv));
    std::vector<std::vector<double>> all_logits;
    all_logits.reserve(n);

    std::vector<double> x(hp.n_embd), normed(hp.n_embd), attn_out(hp.n_head * hp.head_dim);
    std::vector<double> q(hp.n_head * hp.head_dim), k(n_embd_kv), v(n_embd_kv);
    std::vector<double> gate(hp.n_ff), up(hp.n_ff), ffn_hidden(hp.n_ff), proj(hp.n_embd);
    std::vector<double> scores(n);

    for (std::size_t pos = 0; pos < n; ++pos) {
      const int token = tokens[pos];
      if (token < 0 || static_cast<std::size_t>(token) >= hp.n_vocab) {
        throw std::runtime_error("reference llama: token id " + std::to_string(token) +
                                 " out of range at position " + std::to_string(pos));
      }
      const double* embedding = token_embd_.row(static_cast<std::size_t>(token));
      std::copy(embedding, embedding + hp.n_embd, x.begin());

      for (std::size_t il = 0; il < hp.n_layer; ++il) {
        const ReferenceLayer& l = layers_[il];
        // Attention.
        rms_norm(x, l.attn_norm, normed);
        mat_vec(l.wq, normed, q);
        mat_vec(l.wk, normed, k);
        mat_vec(l.wv, normed, v);
        for (std::size_t h = 0; h < hp.n_head; ++h)
          rope(q.data() + h * hp.head_dim, pos);
        for (std::size_t h = 0; h < hp.n_head_kv; ++h)
          rope(k.data() + h * hp.head_dim, pos);
        std::copy(k.begin(), k.end(), k_cache[il].begin() + pos * n_embd_kv);
        std::copy(v.begin(), v.end(), v_cache[il].begin() + pos * n_embd_kv);

        for (std::size_t h = 0; h < hp.n_head; ++h) {
          const std::size_t kv_head = h / group;
          const double* qh = q.data() + h * hp.head_dim;
          double max_score = -std::numeric_limits<double>::infinity();
          for (std::size_t t = 0; t <= pos; ++t) {
            const double* kt = k_cache[il].data() + t * n_embd_kv + kv_head * hp.head_dim;
            double dot = 0.0;
            for (std::size_t d = 0; d < hp.head_dim; ++d)
              dot += qh[d] * kt[d];
            scores[t] = dot * kq_scale;
            max_score = std::max(max_score, scores[t]);
          }
          double sum = 0.0;
          for (std::size_t t = 0; t <= pos; ++t) {
            scores[t] = std::exp(scores[t] - max_score);
            sum += scores[t];
          }
          double* out = attn_out.data() + h * hp.head_dim;
          for (std::size_t d = 0; d < hp.head_dim; ++d)
            out[d] = 0.0;
          for (std::size_t t = 0; t <= pos; ++t) {
            const double weight = scores[t] / sum;
            const double* vt = v_cache[il].data() + t * n_embd_kv + kv_head * hp.head_dim;
            for (std::size_t d = 0; d < hp.head_dim; ++d)
              out[d] += weight * vt[d];
          }
        }
        mat_vec(l.wo, attn_out, proj);
        for (std::size_t i = 0; i < hp.n_embd; ++i)
          x[i] += proj[i];

        // Feed-forward (SwiGLU).
        rms_norm(x, l.ffn_norm, normed);
        mat_vec(l.w_gate, normed, gate);
        mat_vec(l.w_up, normed, up);
        for (std::size_t i = 0; i < hp.n_ff; ++i) {
          const double g = gate[i];
          ffn_hidden[i] = g / (1.0 + std::exp(-g)) * up[i];
        }
        mat_vec(l.w_down, ffn_hidden, proj);
        for (std::size_t i = 0; i < hp.n_embd; ++i)
          x[i] += proj[i];
      }

      rms_norm(x, output_norm_, normed);
      std::vector<double> logits(hp.n_vocab);
      mat_vec(output_, normed, logits);
      all_logits.push_back(std::move(logits));
    }
    return all_logits;
  }

 private:
  ReferenceLlama() = default;

  [[noreturn]] void fail(const std::string& what) const {
    throw std::runtime_error("reference llama: " + path_ + ": " + what);
  }

  void read_hyper_parameters(const checkpoint::GgufContents& c) {
    auto arch = c.get_string("general.architecture");
    if (!arch) fail(arch.error().what());
    if (*arch != "llama") fail("general.architecture is '" + std::string(*arch) + "', not llama");
    const auto u = [&](std::string_view key) -> std::size_t {
      auto value = c.get_u64(key);
      if (!value) fail(value.error().what());
      return static_cast<std::size_t>(*value);
    };
    const auto f = [&](std::string_view key) -> double {
      auto value = c.get_float(key);
      if (!value) fail(value.error().what());
      return *value;
    };
    hp_.n_embd = u("llama.embedding_length");
    hp_.n_layer = u("llama.block_count");
    hp_.n_ff = u("llama.feed_forward_length");
    hp_.n_head = u("llama.attention.head_count");
    hp_.n_head_kv = c.find_metadata("llama.attention.head_count_kv") != nullptr
                        ? u("llama.attention.head_count_kv")
                        : hp_.n_head;
    hp_.n_ctx_train = u("llama.context_length");
    hp_.rms_eps = f("llama.attention.layer_norm_rms_epsilon");
    if (hp_.n_head == 0 || hp_.n_head_kv == 0 || hp_.n_embd % hp_.n_head != 0 ||
        hp_.n_head % hp_.n_head_kv != 0) {
      fail("inconsistent head counts");
    }
    hp_.head_dim = hp_.n_embd / hp_.n_head;
    hp_.n_rot = c.find_metadata("llama.rope.dimension_count") != nullptr
                    ? u("llama.rope.dimension_count")
                    : hp_.head_dim;
    if (hp_.n_rot > hp_.head_dim || hp_.n_rot % 2 != 0) fail("bad llama.rope.dimension_count");
    if (c.find_metadata("llama.rope.freq_base") != nullptr) {
      hp_.rope_freq_base = f("llama.rope.freq_base");
    }
    if (c.find_metadata("llama.rope.scaling.type") != nullptr) {
      auto type = c.get_string("llama.rope.scaling.type");
      if (!type) fail(type.error().what());
      if (*type != "none" && *type != "linear") {
        fail("rope scaling '" + std::string(*type) + "' is not implemented by the reference");
      }
      if (*type == "linear") {
        const double factor = f("llama.rope.scaling.factor");
        if (factor > 0.0) hp_.rope_freq_scale = 1.0 / factor;
      }
    } else if (c.find_metadata("llama.rope.scale_linear") != nullptr) {
      const double factor = f("llama.rope.scale_linear");
      if (factor > 0.0) hp_.rope_freq_scale = 1.0 / factor;
    }
    // The vocabulary size: the token list's length (llama.vocab_size when present must agree).
    auto tokens = c.get_array("tokenizer.ggml.tokens");
    if (!tokens) fail(tokens.error().what());
    hp_.n_vocab = (*tokens)->size();
    if (c.find_metadata("llama.vocab_size") != nullptr && u("llama.vocab_size") != hp_.n_vocab) {
      fail("llama.vocab_size disagrees with tokenizer.ggml.tokens");
    }
  }

  // Decodes tensor `name` to doubles after checking its GGUF shape is ne = [cols, rows].
  DenseMatrix matrix(const checkpoint::GgufFile& file, const std::string& name, std::size_t rows,
                     std::size_t cols) const {
    const checkpoint::GgufTensorInfo* info = file.find_tensor(name);
    if (info == nullptr) fail("tensor " + name + " is missing");
    if (info->ne.size() != 2 || info->ne[0] != cols || info->ne[1] != rows) {
      fail("tensor " + name + " does not have ne = [" + std::to_string(cols) + ", " +
           std::to_string(rows) + "]");
    }
    DenseMatrix m;
    m.rows = rows;
    m.cols = cols;
    m.values = decode(file, *info);
    return m;
  }

  std::vector<double> vector(const checkpoint::GgufFile& file, const std::string& name,
                             std::size_t n) const {
    const checkpoint::GgufTensorInfo* info = file.find_tensor(name);
    if (info == nullptr) fail("tensor " + name + " is missing");
    if (info->ne.size() != 1 || info->ne[0] != n) {
      fail("tensor " + name + " does not have ne = [" + std::to_string(n) + "]");
    }
    return decode(file, *info);
  }

  std::vector<double> decode(const checkpoint::GgufFile& file,
                             const checkpoint::GgufTensorInfo& info) const {
    auto bytes = file.tensor_bytes(info);
    if (!bytes) fail(bytes.error().what());
    std::vector<float> floats(static_cast<std::size_t>(info.element_count));
    auto decoded = encoding::dequantize(info.dtype, *bytes, floats);
    if (!decoded) fail("tensor " + info.name + ": " + decoded.error().what());
    return std::vector<double>(floats.begin(), floats.end());
  }

  void rms_norm(const std::vector<double>& in, const std::vector<double>& weight,
                std::vector<double>& out) const {
    double sum_sq = 0.0;
    for (double value : in)
      sum_sq += value * value;
    const double scale = 1.0 / std::sqrt(sum_sq / static_cast<double>(in.size()) + hp_.rms_eps);
    for (std::size_t i = 0; i < in.size(); ++i)
      out[i] = in[i] * scale * weight[i];
  }

  static void mat_vec(const DenseMatrix& m, const std::vector<double>& in,
                      std::vector<double>& out) {
    for (std::size_t r = 0; r < m.rows; ++r) {
      const double* w = m.row(r);
      double sum = 0.0;
      for (std::size_t c = 0; c < m.cols; ++c)
        sum += w[c] * in[c];
      out[r] = sum;
    }
  }

  // Rope NORM mode on one head: rotate the consecutive pairs of its first n_rot dimensions.
  void rope(double* head, std::size_t pos) const {
    for (std::size_t i = 0; i < hp_.n_rot; i += 2) {
      const double theta =
          static_cast<double>(pos) * hp_.rope_freq_scale *
          std::pow(hp_.rope_freq_base, -static_cast<double>(i) / static_cast<double>(hp_.n_rot));
      const double c = std::cos(theta);
      const double s = std::sin(theta);
      const double x0 = head[i];
      const double x1 = head[i + 1];
      head[i] = x0 * c - x1 * s;
      head[i + 1] = x0 * s + x1 * c;
    }
  }

  std::string path_;
  LlamaHyperParameters hp_;
  DenseMatrix token_embd_;
  DenseMatrix output_;
  bool tied_output_ = true;
  std::vector<double> output_norm_;
  std::vector<ReferenceLayer> layers_;
};

}  // namespace eredu::testing::reference
