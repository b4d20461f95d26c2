// Tokenizer construction from GGUF tokenizer.ggml.* metadata.

#include "eredu/text/gguf_tokenizer.hpp"

#include <cstdint>
#include <limits>
#include <new>
#include <string>

namespace eredu::text {
namespace {

using checkpoint::GgufContents;
using checkpoint::GgufValueType;

constexpr std::string_view kModelKey = "tokenizer.ggml.model";
constexpr std::string_view kTokensKey = "tokenizer.ggml.tokens";
constexpr std::string_view kScoresKey = "tokenizer.ggml.scores";
constexpr std::string_view kTypesKey = "tokenizer.ggml.token_type";

// A special id key: absent -> `fallback` (when it names a token), "none" markers -> nullopt.
Result<std::optional<TokenId>> read_special_id(const GgufContents& gguf, std::string_view key,
                                               std::optional<TokenId> fallback,
                                               std::size_t n_tokens) {
  if (gguf.find_metadata(key) == nullptr) {
    if (fallback && static_cast<std::size_t>(*fallback) < n_tokens) return fallback;
    return std::optional<TokenId>();
  }
  EREDU_TRY(const std::int64_t value, gguf.get_i64(key));  // any integer type; else a type error
  if (value == -1 || value == std::int64_t{std::numeric_limits<std::uint32_t>::max()}) {
    return std::optional<TokenId>();  // the converters' "no such token"
  }
  if (value < 0 || value > std::int64_t{std::numeric_limits<TokenId>::max()}) {
    return fail(Error(ErrorCode::kInvalidModel, "special token id " + std::to_string(value) +
                                                    " is out of range [0, " +
                                                    std::to_string(n_tokens) + ")")
                    .with_subject(std::string(key)));
  }
  return std::optional<TokenId>(static_cast<TokenId>(value));
}

Result<void> read_flag(const GgufContents& gguf, std::string_view key, bool& flag) {
  if (gguf.find_metadata(key) == nullptr) return ok();
  EREDU_TRY(flag, gguf.get_bool(key));
  return ok();
}

Result<SentencePieceVocabulary> read_vocabulary(const GgufContents& gguf,
                                                const GgufTokenizerOptions& options) {
  SentencePieceVocabulary vocab;
  vocab.allow_duplicate_tokens = options.allow_duplicate_tokens;

  EREDU_TRY(const auto* tokens, gguf.get_array(kTokensKey, GgufValueType::kString));
  vocab.tokens.assign(tokens->strings().begin(), tokens->strings().end());
  const std::size_t n = vocab.tokens.size();

  if (gguf.find_metadata(kScoresKey) != nullptr) {
    EREDU_TRY(const auto* scores, gguf.get_array(kScoresKey, GgufValueType::kF32));
    if (scores->size() != n) {
      return fail(Error(ErrorCode::kInvalidModel, std::to_string(scores->size()) + " scores for " +
                                                      std::to_string(n) +
                                                      " tokens; the lengths must match")
                      .with_subject(std::string(kScoresKey)));
    }
    EREDU_TRY(vocab.scores, scores->values<float>());
  }
  if (gguf.find_metadata(kTypesKey) != nullptr) {
    EREDU_TRY(const auto* types, gguf.get_array(kTypesKey, GgufValueType::kI32));
    if (types->size() != n) {
      return fail(Error(ErrorCode::kInvalidModel, std::to_string(types->size()) +
                                                      " token types for " + std::to_string(n) +
                                                      " tokens; the lengths must match")
                      .with_subject(std::string(kTypesKey)));
    }
    EREDU_TRY(vocab.token_types, types->values<std::int32_t>());
  }

  EREDU_TRY(vocab.special.bos, read_special_id(gguf, "tokenizer.ggml.bos_token_id", 1, n));
  EREDU_TRY(vocab.special.eos, read_special_id(gguf, "tokenizer.ggml.eos_token_id", 2, n));
  EREDU_TRY(vocab.special.unk, read_special_id(gguf, "tokenizer.ggml.unknown_token_id", 0, n));
  EREDU_TRY(vocab.special.pad,
            read_special_id(gguf, "tokenizer.ggml.padding_token_id", std::nullopt, n));
  EREDU_TRY(vocab.special.eot,
            read_special_id(gguf, "tokenizer.ggml.eot_token_id", std::nullopt, n));
  EREDU_TRY(vocab.special.eom,
            read_special_id(gguf, "tokenizer.ggml.eom_token_id", std::nullopt, n));

  vocab.add_bos = true;  // llama.cpp's defaults for "llama"
  vocab.add_eos = false;
  vocab.add_space_prefix = true;
  EREDU_TRY_VOID(read_flag(gguf, "tokenizer.ggml.add_bos_token", vocab.add_bos));
  EREDU_TRY_VOID(read_flag(gguf, "tokenizer.ggml.add_eos_token", vocab.add_eos));
  EREDU_TRY_VOID(read_flag(gguf, "tokenizer.ggml.add_space_prefix", vocab.add_space_prefix));
  return vocab;
}

Result<std::string> read_model(const GgufContents& gguf) {
  if (gguf.find_metadata(kModelKey) == nullptr) {
    return fail(Error(ErrorCode::kNotFound,
                      "the file holds no tokenizer (no " + std::string(kModelKey) + ")")
                    .with_subject(std::string(kModelKey)));
  }
  EREDU_TRY(const std::string_view model, gguf.get_string(kModelKey));
  return std::string(model);
}

Result<void> require_llama(const std::string& model) {
  if (model != "llama") {
    return fail(Error(ErrorCode::kUnsupported,
                      "tokenizer model '" + model +
                          "' is not supported yet (supported: 'llama', SentencePiece)")
                    .with_subject(std::string(kModelKey)));
  }
  return ok();
}

}  // namespace

Result<SentencePieceVocabulary> read_sentencepiece_vocabulary(const checkpoint::GgufContents& gguf,
                                                              const GgufTokenizerOptions& options) {
  auto result = [&]() -> Result<SentencePieceVocabulary> {
    try {
      EREDU_TRY(const std::string model, read_model(gguf));
      EREDU_TRY_VOID(require_llama(model));
      return read_vocabulary(gguf, options);
    } catch (const std::bad_alloc&) {
      return fail(ErrorCode::kLimitExceeded, "out of memory while reading the vocabulary");
    }
  }();
  if (!result) return fail(std::move(result).error().with_path(gguf.path()));
  return result;
}

Result<std::shared_ptr<const Tokenizer>> make_tokenizer_from_gguf(
    const checkpoint::GgufContents& gguf, const GgufTokenizerOptions& options) {
  auto vocab = read_sentencepiece_vocabulary(gguf, options);
  if (!vocab) return fail(std::move(vocab).error());
  auto tokenizer = SentencePieceTokenizer::create(std::move(*vocab));
  if (!tokenizer) return fail(std::move(tokenizer).error().with_path(gguf.path()));
  return std::shared_ptr<const Tokenizer>(std::move(*tokenizer));
}

}  // namespace eredu::text
