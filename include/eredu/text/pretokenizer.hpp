#pragma once
// The regex pre-tokenizer of byte-level BPE vocabularies: GGUF `tokenizer.ggml.pre` names a list
// of regexes (the Hugging Face tokenizer.json `Split` patterns llama.cpp maps each name to); the
// text is split by each regex in turn, every match and every gap between matches becoming a
// piece of its own (Hugging Face's `Split(behavior = "isolated")`), and the next regex splits
// each piece separately. The regexes run on PCRE2 (UTF + UCP, JIT when available), written as
// Hugging Face writes them.
//
// A Pretokenizer is immutable after construction and safe to use from several threads at once
// (each split allocates its own match data).

#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "eredu/core/result.hpp"

namespace eredu::text {

class Pretokenizer {
  struct PrivateTag {};

 public:
  // The regexes for a `tokenizer.ggml.pre` value, compiled. An unknown name is kUnsupported,
  // naming it and listing the known ones. An empty name is llama.cpp's "default".
  [[nodiscard]] static Result<std::shared_ptr<const Pretokenizer>> create(std::string_view pre);
  // Explicit regexes (tests, and names llama.cpp does not know). A pattern that does not compile
  // is kInvalidArgument naming the pattern and PCRE2's message with the offset.
  [[nodiscard]] static Result<std::shared_ptr<const Pretokenizer>> from_patterns(
      std::string name, std::vector<std::string> patterns);

  // Every `tokenizer.ggml.pre` value create() accepts, sorted.
  [[nodiscard]] static std::vector<std::string_view> known_names();
  // The patterns a name maps to (empty when unknown).
  [[nodiscard]] static std::span<const std::string_view> patterns_for(std::string_view pre);

  // Appends the pieces of `text` (views into it, in order, covering it exactly) to `out`. `text`
  // must be valid UTF-8 (BpeTokenizer validates first). Fails only when PCRE2 reports a match
  // error (e.g. its match limit), naming it.
  [[nodiscard]] Result<void> split(std::string_view text, std::vector<std::string_view>& out) const;

  [[nodiscard]] const std::string& name() const noexcept { return name_; }

  ~Pretokenizer();
  Pretokenizer(const Pretokenizer&) = delete;
  Pretokenizer& operator=(const Pretokenizer&) = delete;
  // Use create(); public only for std::make_shared.
  explicit Pretokenizer(PrivateTag);

 private:
  struct Compiled;
  std::string name_;
  std::vector<std::unique_ptr<Compiled>> regexes_;
};

}  // namespace eredu::text
