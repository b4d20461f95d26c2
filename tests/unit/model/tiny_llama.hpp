#pragma once
// A tiny llama GGUF built in the test (2 layers, 8 features, 2 query heads over 1 KV head,
// 16 FFN features, 10 tokens, F32 weights from a fixed seed), with knobs to break it.
#include <cstdint>
#include <filesystem>
#include <map>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "eredu/checkpoint/gguf.hpp"
#include "eredu/checkpoint/gguf_writer.hpp"
#include "eredu/checkpoint/mapped_file.hpp"

namespace eredu::testing {

struct TinyLlama {
  std::string architecture = "llama";
  std::map<std::string, checkpoint::GgufValue> metadata;  // keys without the arch prefix
  std::map<std::string, std::vector<std::uint64_t>> shapes;
  bool tied_output = false;

  TinyLlama() {
    metadata["block_count"] = checkpoint::GgufValue(std::uint32_t{2});
    metadata["embedding_length"] = checkpoint::GgufValue(std::uint32_t{8});
    metadata["feed_forward_length"] = checkpoint::GgufValue(std::uint32_t{16});
    metadata["attention.head_count"] = checkpoint::GgufValue(std::uint32_t{2});
    metadata["attention.head_count_kv"] = checkpoint::GgufValue(std::uint32_t{1});
    metadata["attention.layer_norm_rms_epsilon"] = checkpoint::GgufValue(1e-5f);
    metadata["context_length"] = checkpoint::GgufValue(std::uint32_t{32});
    metadata["rope.freq_base"] = checkpoint::GgufValue(10000.0f);
    metadata["vocab_size"] = checkpoint::GgufValue(std::uint32_t{10});
    shapes["token_embd.weight"] = {10, 8};
    shapes["output_norm.weight"] = {8};
    shapes["output.weight"] = {10, 8};
    for (int l = 0; l < 2; ++l) {
      const std::string b = "blk." + std::to_string(l) + ".";
      shapes[b + "attn_norm.weight"] = {8};
      shapes[b + "attn_q.weight"] = {8, 8};
      shapes[b + "attn_k.weight"] = {4, 8};
      shapes[b + "attn_v.weight"] = {4, 8};
      shapes[b + "attn_output.weight"] = {8, 8};
      shapes[b + "ffn_norm.weight"] = {8};
      shapes[b + "ffn_gate.weight"] = {16, 8};
      shapes[b + "ffn_up.weight"] = {16, 8};
      shapes[b + "ffn_down.weight"] = {8, 16};
    }
  }

  [[nodiscard]] checkpoint::GgufWriter writer() const {
    checkpoint::GgufWriter w;
    w.add_metadata("general.architecture", checkpoint::GgufValue(architecture));
    for (const auto& [key, value] : metadata)
      w.add_metadata(architecture + "." + key, value);
    std::mt19937 rng(7);
    std::uniform_real_distribution<float> dist(-0.5f, 0.5f);
    for (const auto& [name, shape] : shapes) {
      if (tied_output && name == "output.weight") continue;
      std::uint64_t n = 1;
      for (auto d : shape)
        n *= d;
      std::vector<float> values(n);
      for (auto& v : values)
        v = name.find("norm") != std::string::npos ? 1.0f + dist(rng) * 0.2f : dist(rng);
      std::vector<std::byte> bytes(n * 4);
      std::memcpy(bytes.data(), values.data(), bytes.size());
      (void)w.add_tensor(name, DType::kF32, shape, bytes);
    }
    return w;
  }

  [[nodiscard]] std::filesystem::path write(const std::string& file_name) const {
    const auto path = std::filesystem::temp_directory_path() /
                      ("eredu_tiny_llama_" + std::to_string(::getpid()) + "_" + file_name);
    (void)writer().write_file(path);
    return path;
  }

  [[nodiscard]] std::shared_ptr<const checkpoint::GgufContents> contents() const {
    auto image = writer().build();
    auto file = checkpoint::MappedFile::from_bytes(image->bytes, "tiny");
    auto parsed = checkpoint::parse_gguf_contents(*file);
    return parsed ? *parsed : nullptr;
  }
};

}  // namespace eredu::testing
