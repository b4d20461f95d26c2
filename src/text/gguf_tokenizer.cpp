// Tokenizer construction from GGUF tokenizer.ggml.* metadata.

#include "eredu/text/gguf_tokenizer.hpp"

#include <cstdint>
#include <limits>
#include <new>
#include <string>

#include "eredu/text/bpe_tokenizer.hpp"
#include "eredu/text/wordpiece_tokenizer.hpp"

namespace eredu::text {
namespace {

using checkpoint::GgufContents;
using checkpoint::GgufValueType;

constexpr std::string_view kModelKey = "tokenizer.ggml.model";
constexpr std::string_view kTokensKey = "tokenizer.ggml.tokens";
constexpr std::string_view kScoresKey = "tokenizer.ggml.scores";
constexpr std::string_view kTypesKey = "tokenizer.ggml.token_type";
constexpr std::string_view kMergesKey = "tokenizer.ggml.merges";
constexpr std::string_view kPreKey = "tokenizer.ggml.pre";

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

Result<std::vector<std::string>> read_strings(const GgufContents& gguf, std::string_view key) {
  EREDU_TRY(const auto* array, gguf.get_array(key, GgufValueType::kString));
  return std::vector<std::string>(array->strings().begin(), array->strings().end());
}

Result<std::vector<std::int32_t>> read_types(const GgufContents& gguf, std::size_t n) {
  if (gguf.find_metadata(kTypesKey) == nullptr) return std::vector<std::int32_t>();
  EREDU_TRY(const auto* types, gguf.get_array(kTypesKey, GgufValueType::kI32));
  if (types->size() != n) {
    return fail(Error(ErrorCode::kInvalidModel, std::to_string(types->size()) +
                                                    " token types for " + std::to_string(n) +
                                                    " tokens; the lengths must match")
                    .with_subject(std::string(kTypesKey)));
  }
  return types->values<std::int32_t>();
}

Result<std::string> read_optional_string(const GgufContents& gguf, std::string_view key) {
  if (gguf.find_metadata(key) == nullptr) return std::string();
  EREDU_TRY(const std::string_view value, gguf.get_string(key));
  return std::string(value);
}

Result<BpeVocabulary> read_bpe(const GgufContents& gguf, const GgufTokenizerOptions& options) {
  BpeVocabulary vocab;
  vocab.allow_duplicate_tokens = options.allow_duplicate_tokens;
  EREDU_TRY(vocab.tokens, read_strings(gguf, kTokensKey));
  const std::size_t n = vocab.tokens.size();
  if (gguf.find_metadata(kMergesKey) == nullptr) {
    return fail(Error(ErrorCode::kInvalidModel, "a \"gpt2\" (BPE) vocabulary needs merges")
                    .with_subject(std::string(kMergesKey)));
  }
  EREDU_TRY(vocab.merges, read_strings(gguf, kMergesKey));
  EREDU_TRY(vocab.token_types, read_types(gguf, n));
  EREDU_TRY(vocab.pre, read_optional_string(gguf, kPreKey));
  if (vocab.pre.empty()) vocab.pre = "default";  // llama.cpp warns and uses "default"

  // llama.cpp's defaults for "gpt2": bos = eos = 11, no unknown token; then per pre.
  EREDU_TRY(vocab.special.bos, read_special_id(gguf, "tokenizer.ggml.bos_token_id", 11, n));
  EREDU_TRY(vocab.special.eos, read_special_id(gguf, "tokenizer.ggml.eos_token_id", 11, n));
  EREDU_TRY(vocab.special.unk,
            read_special_id(gguf, "tokenizer.ggml.unknown_token_id", std::nullopt, n));
  EREDU_TRY(vocab.special.pad,
            read_special_id(gguf, "tokenizer.ggml.padding_token_id", std::nullopt, n));
  EREDU_TRY(vocab.special.eot,
            read_special_id(gguf, "tokenizer.ggml.eot_token_id", std::nullopt, n));
  EREDU_TRY(vocab.special.eom,
            read_special_id(gguf, "tokenizer.ggml.eom_token_id", std::nullopt, n));
  const BpePreDefaults defaults = bpe_pre_defaults(vocab.pre);
  vocab.add_bos = defaults.add_bos;
  vocab.add_eos = false;
  vocab.ignore_merges = defaults.ignore_merges;
  vocab.clean_spaces = defaults.clean_spaces;
  vocab.add_space_prefix = false;
  EREDU_TRY_VOID(read_flag(gguf, "tokenizer.ggml.add_bos_token", vocab.add_bos));
  EREDU_TRY_VOID(read_flag(gguf, "tokenizer.ggml.add_eos_token", vocab.add_eos));
  EREDU_TRY_VOID(read_flag(gguf, "tokenizer.ggml.ignore_merges", vocab.ignore_merges));
  EREDU_TRY_VOID(read_flag(gguf, "tokenizer.ggml.add_space_prefix", vocab.add_space_prefix));
  return vocab;
}

Result<WordPieceVocabulary> read_wordpiece(const GgufContents& gguf,
                                           const GgufTokenizerOptions& options) {
  WordPieceVocabulary vocab;
  vocab.allow_duplicate_tokens = options.allow_duplicate_tokens;
  EREDU_TRY(vocab.tokens, read_strings(gguf, kTokensKey));
  const std::size_t n = vocab.tokens.size();
  EREDU_TRY(vocab.token_types, read_types(gguf, n));
  // llama.cpp's defaults for "bert": [CLS] 101 as BOS, [UNK] 100, [SEP] 102, [PAD] 0.
  EREDU_TRY(vocab.special.bos, read_special_id(gguf, "tokenizer.ggml.bos_token_id", 101, n));
  EREDU_TRY(vocab.special.eos,
            read_special_id(gguf, "tokenizer.ggml.eos_token_id", std::nullopt, n));
  EREDU_TRY(vocab.special.unk, read_special_id(gguf, "tokenizer.ggml.unknown_token_id", 100, n));
  EREDU_TRY(vocab.special.pad, read_special_id(gguf, "tokenizer.ggml.padding_token_id", 0, n));
  EREDU_TRY(vocab.special.eot,
            read_special_id(gguf, "tokenizer.ggml.eot_token_id", std::nullopt, n));
  EREDU_TRY(vocab.special.eom,
            read_special_id(gguf, "tokenizer.ggml.eom_token_id", std::nullopt, n));
  // The GGUF key is spelt "seperator" by the converters.
  EREDU_TRY(vocab.sep, read_special_id(gguf, "tokenizer.ggml.seperator_token_id", 102, n));
  vocab.add_bos = true;  // [CLS] ... [SEP], as llama.cpp
  vocab.add_eos = false;
  EREDU_TRY_VOID(read_flag(gguf, "tokenizer.ggml.add_bos_token", vocab.add_bos));
  EREDU_TRY_VOID(read_flag(gguf, "tokenizer.ggml.add_eos_token", vocab.add_eos));
  return vocab;
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

Unexpected<Error> unsupported_model(const std::string& model) {
  return fail(Error(ErrorCode::kUnsupported,
                    "tokenizer model '" + model +
                        "' is not supported (supported: 'llama' SentencePiece, 'gpt2' "
                        "byte-level BPE, 'bert' WordPiece)")
                  .with_subject(std::string(kModelKey)));
}

Result<void> require_llama(const std::string& model) {
  if (model != "llama") return unsupported_model(model);
  return ok();
}

template <typename Build>
Result<std::shared_ptr<const Tokenizer>> guarded(const GgufContents& gguf, Build&& build) {
  auto result = [&]() -> Result<std::shared_ptr<const Tokenizer>> {
    try {
      return build();
    } catch (const std::bad_alloc&) {
      return fail(ErrorCode::kLimitExceeded, "out of memory while reading the vocabulary");
    }
  }();
  if (!result) return fail(std::move(result).error().with_path(gguf.path()));
  return result;
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

Result<BpeVocabulary> read_bpe_vocabulary(const checkpoint::GgufContents& gguf,
                                          const GgufTokenizerOptions& options) {
  auto result = [&]() -> Result<BpeVocabulary> {
    try {
      EREDU_TRY(const std::string model, read_model(gguf));
      if (model != "gpt2") return unsupported_model(model);
      return read_bpe(gguf, options);
    } catch (const std::bad_alloc&) {
      return fail(ErrorCode::kLimitExceeded, "out of memory while reading the vocabulary");
    }
  }();
  if (!result) return fail(std::move(result).error().with_path(gguf.path()));
  return result;
}

Result<std::shared_ptr<const Tokenizer>> make_tokenizer_from_gguf(
    const checkpoint::GgufContents& gguf, const GgufTokenizerOptions& options) {
  auto model = read_model(gguf);
  if (!model) return fail(std::move(model).error().with_path(gguf.path()));
  if (*model == "gpt2") {
    return guarded(gguf, [&]() -> Result<std::shared_ptr<const Tokenizer>> {
      EREDU_TRY(BpeVocabulary vocab, read_bpe(gguf, options));
      EREDU_TRY(auto tokenizer, BpeTokenizer::create(std::move(vocab)));
      return std::shared_ptr<const Tokenizer>(std::move(tokenizer));
    });
  }
  if (*model == "bert") {
    return guarded(gguf, [&]() -> Result<std::shared_ptr<const Tokenizer>> {
      EREDU_TRY(WordPieceVocabulary vocab, read_wordpiece(gguf, options));
      EREDU_TRY(auto tokenizer, WordPieceTokenizer::create(std::move(vocab)));
      return std::shared_ptr<const Tokenizer>(std::move(tokenizer));
    });
  }
  auto vocab = read_sentencepiece_vocabulary(gguf, options);
  if (!vocab) return fail(std::move(vocab).error());
  auto tokenizer = SentencePieceTokenizer::create(std::move(*vocab));
  if (!tokenizer) return fail(std::move(tokenizer).error().with_path(gguf.path()));
  return std::shared_ptr<const Tokenizer>(std::move(*tokenizer));
}

}  // namespace eredu::text
