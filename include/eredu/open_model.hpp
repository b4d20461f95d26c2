#pragma once
// The one call a program makes to run a model file: eredu::open_model opens the GGUF once
// (headers only), builds its tokenizer, admits and loads the weights onto the backend chosen at
// compile time, and returns them together with the special tokens and the chat template.
//
//   auto model = eredu::open_model(eredu::cpu::CpuBackend({.threads = 2}), "model.gguf");
//   if (!model) { std::cerr << model.error().what() << "\n"; return 2; }
//   auto reply = model->generate("Once upon a time", {.max_tokens = 64},
//                                [](std::string_view text) { std::cout << text; });
//
// For finer control use the parts directly: model->runtime (ModelRuntime<B>: prefill, decode,
// truncate), model->tokenizer, generation::TextGeneration<B>, chat::ChatSession<B>.

#include <cstdint>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "eredu/core/concepts/model_loading_backend.hpp"
#include "eredu/core/concepts/text_generation_backend.hpp"
#include "eredu/core/result.hpp"
#include "eredu/generation/cancellation.hpp"
#include "eredu/generation/sampling_config.hpp"
#include "eredu/generation/text_generation.hpp"
#include "eredu/runtime/load_model.hpp"
#include "eredu/text/gguf_tokenizer.hpp"
#include "eredu/text/tokenizer.hpp"

namespace eredu {

struct GenerateOptions {
  std::int64_t max_tokens = -1;  // -1: until end of generation or the context is full
  generation::SamplingConfig sampling = generation::SamplingConfig::greedy();
  std::vector<std::string> stop_strings{};
  bool add_bos = true;         // when the vocabulary wants one
  bool parse_special = false;  // recognise "<s>", "<|im_end|>"… in the prompt text
  bool ignore_eos = false;
};

template <TextGenerationBackend B>
struct OpenedModel {
  std::filesystem::path path;
  runtime::ModelRuntime<B> runtime;
  std::shared_ptr<const text::Tokenizer> tokenizer;
  std::optional<std::string> chat_template;  // tokenizer.chat_template, when the file has one

  [[nodiscard]] const text::SpecialTokenIds& special_tokens() const noexcept {
    return tokenizer->special_tokens();
  }

  // Tokenizes `prompt`, generates, streams the text to on_text(std::string_view) and returns the
  // result (tokens, text, finish reason, timings). `cancel` may stop it from another thread.
  template <typename OnText>
  [[nodiscard]] Result<generation::TextGenerationResult> generate(
      std::string_view prompt, const GenerateOptions& options, OnText&& on_text,
      const generation::CancellationToken* cancel = nullptr) {
    EREDU_TRY(std::vector<text::TokenId> ids,
              tokenizer->encode(prompt, {.add_bos = options.add_bos,
                                         .add_eos = false,
                                         .parse_special = options.parse_special}));
    generation::TextGenerationRequest request;
    request.prompt = std::move(ids);
    request.sampling = options.sampling;
    request.stop_strings = options.stop_strings;
    request.ignore_eos = options.ignore_eos;
    request.max_tokens = options.max_tokens;
    // Every end-of-generation token of the vocabulary (eos, eot, eom and the end-of-turn
    // markers such as <|im_end|> or <|eot_id|>).
    const auto eog = tokenizer->eog_tokens();
    request.eos_ids.assign(eog.begin(), eog.end());
    EREDU_TRY(auto run, generation::TextGeneration<B>::create(runtime, std::move(request)));
    generation::CancellationToken never;
    const auto piece_of = [this](generation::TokenId id) { return tokenizer->token_to_piece(id); };
    return run.run(cancel ? *cancel : never, piece_of, on_text);
  }
};

// Opens `path` once and loads it onto `backend`. Errors name the file (and the key, tensor or
// offset); nothing is left half-loaded.
template <typename B>
requires ModelLoadingBackend<B> && TextGenerationBackend<B>
[[nodiscard]] Result<OpenedModel<B>> open_model(B backend, const std::filesystem::path& path,
                                                const typename B::load_options& options = {}) {
  EREDU_TRY(ArtifactInspection inspection, runtime::inspect_artifact(path));
  if (!inspection.gguf) {
    return fail(Error(ErrorCode::kUnsupported,
                      "open_model reads GGUF files (their tokenizer is in the metadata)")
                    .with_path(path.string()));
  }
  auto tokenizer = text::make_tokenizer_from_gguf(*inspection.gguf);
  if (!tokenizer) return fail(std::move(tokenizer).error().with_path(path.string()));
  std::optional<std::string> chat_template;
  if (auto source = inspection.gguf->get_string("tokenizer.chat_template")) {
    chat_template = std::string(*source);
  }
  EREDU_TRY(runtime::ModelRuntime<B> loaded,
            runtime::prepare_inspected_model(std::move(backend), inspection, options));
  return OpenedModel<B>{path, std::move(loaded), std::move(tokenizer).value(),
                        std::move(chat_template)};
}

}  // namespace eredu
