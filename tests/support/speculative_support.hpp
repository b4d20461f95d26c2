#pragma once
// Shared helpers of the speculative decoding tests (CPU in tests/e2e/speculative, Vulkan in
// tests/e2e/vulkan_backend): load a shared model on the CPU backend, run plain TextGeneration
// (the reference every speculative run is compared with) and speculative generation with a given
// drafter, on any backend's runtime.

#include <gtest/gtest.h>

#include <cstdint>
#include <filesystem>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "eredu/backends/cpu/cpu_backend.hpp"
#include "eredu/checkpoint/gguf_source.hpp"
#include "eredu/generation/speculative/speculative_generation.hpp"
#include "eredu/generation/text_generation.hpp"
#include "eredu/runtime/load_model.hpp"
#include "eredu/text/gguf_tokenizer.hpp"
#include "shared_data.hpp"

namespace eredu::testing::speculative {

using Cpu = cpu::CpuBackend;
using Runtime = runtime::ModelRuntime<Cpu>;
using generation::TextGenerationRequest;
using generation::TextGenerationResult;
using generation::TokenId;

inline std::filesystem::path model_path(const std::string& name) {
  return models_dir() / name;
}

inline Runtime load(const std::filesystem::path& path) {
  auto runtime = runtime::load_model(Cpu(cpu::CpuBackendOptions{2}), path, cpu::CpuLoadOptions{});
  EXPECT_TRUE(runtime.has_value()) << runtime.error().what();
  return std::move(runtime).value();
}

inline std::shared_ptr<const text::Tokenizer> tokenizer_of(const std::filesystem::path& path) {
  auto gguf = checkpoint::GgufCheckpointSource::open(path);
  EXPECT_TRUE(gguf.has_value()) << gguf.error().what();
  auto tokenizer = text::make_tokenizer_from_gguf(gguf->primary());
  EXPECT_TRUE(tokenizer.has_value()) << tokenizer.error().what();
  return std::move(tokenizer).value();
}

inline TextGenerationRequest request_for(const text::Tokenizer& tokenizer,
                                         const std::string& prompt, std::int64_t max_tokens) {
  TextGenerationRequest request;
  auto ids = tokenizer.encode(prompt, {.add_bos = true});
  EXPECT_TRUE(ids.has_value());
  request.prompt = *ids;
  request.sampling = generation::SamplingConfig::greedy();
  request.ignore_eos = true;
  request.max_tokens = max_tokens;
  return request;
}

inline auto piece_of(const text::Tokenizer& tokenizer) {
  return [&tokenizer](TokenId id) { return tokenizer.token_to_piece(id); };
}

template <typename B>
TextGenerationResult plain(runtime::ModelRuntime<B>& runtime, const text::Tokenizer& tokenizer,
                           const TextGenerationRequest& request) {
  auto generation = generation::TextGeneration<B>::create(runtime, request);
  EXPECT_TRUE(generation.has_value()) << generation.error().what();
  generation::CancellationToken cancel;
  auto result = generation->run(cancel, piece_of(tokenizer), [](std::string_view) {});
  EXPECT_TRUE(result.has_value()) << result.error().what();
  return std::move(result).value();
}

template <typename B, typename D>
generation::speculative::SpeculativeResult speculative(
    runtime::ModelRuntime<B>& runtime, D& drafter, const text::Tokenizer& tokenizer,
    const TextGenerationRequest& request, std::uint32_t k,
    const generation::CancellationToken& cancel = {}, bool adaptive = false) {
  // Fixed k by default, so that each tested draft length is the one verified every round.
  auto generation = generation::speculative::SpeculativeGeneration<B, D>::create(
      runtime, drafter, request, {.max_draft = k, .adaptive = adaptive});
  EXPECT_TRUE(generation.has_value()) << generation.error().what();
  std::string streamed;
  auto result = generation->run(cancel, piece_of(tokenizer),
                                [&](std::string_view text) { streamed += text; });
  EXPECT_TRUE(result.has_value()) << result.error().what();
  EXPECT_EQ(streamed, result->generation.text);
  return std::move(result).value();
}

}  // namespace eredu::testing::speculative
