// BpeTokenizer: vocabulary validation, the byte <-> stand-in mapping, merge ranks and rendering.
// The encoder lives in bpe_encode.cpp.

#include <algorithm>
#include <limits>
#include <new>

#include "eredu/core/log.hpp"
#include "eredu/text/bpe_tokenizer.hpp"
#include "special_split.hpp"
#include "text_util.hpp"

namespace eredu::text {
namespace {

constexpr std::string_view kTokensKey = "tokenizer.ggml.tokens";
constexpr std::string_view kMergesKey = "tokenizer.ggml.merges";
constexpr std::string_view kTypesKey = "tokenizer.ggml.token_type";

Unexpected<Error> vocab_error(ErrorCode code, std::string_view key, std::string message) {
  return Unexpected<Error>(Error(code, std::move(message)).with_subject(std::string(key)));
}

Result<void> check_special(const std::optional<TokenId>& id, std::string_view key,
                           std::size_t n_tokens) {
  if (!id) return ok();
  if (*id < 0 || static_cast<std::size_t>(*id) >= n_tokens) {
    return vocab_error(ErrorCode::kInvalidModel, key,
                       "special token id " + std::to_string(*id) + " is out of range [0, " +
                           std::to_string(n_tokens) + ")");
  }
  return ok();
}

// GPT-2's bytes_to_unicode: printable Latin-1 bytes stand for themselves, the other 68 bytes
// (controls, space, DEL, NBSP, soft hyphen, ...) take U+0100.. in byte order.
struct ByteTables {
  std::array<std::string, 256> utf8;
  std::array<std::int16_t, 0x144> byte_of;  // code point -> byte; -1: no stand-in
  ByteTables() {
    byte_of.fill(-1);
    int extra = 0;
    for (int b = 0; b < 256; ++b) {
      const bool printable = (b >= '!' && b <= '~') || (b >= 0xA1 && b <= 0xAC) || b >= 0xAE;
      const char32_t cp =
          printable ? static_cast<char32_t>(b) : static_cast<char32_t>(256 + extra++);
      append_utf8(utf8[static_cast<std::size_t>(b)], cp);
      byte_of[cp] = static_cast<std::int16_t>(b);
    }
  }
};

const ByteTables& byte_tables() {
  static const ByteTables tables;
  return tables;
}

// The raw bytes a byte-level token text stands for; a code point that is no stand-in is kept as
// its UTF-8 (Hugging Face's ByteLevel decoder does the same).
std::string decode_byte_level(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (std::size_t i = 0; i < text.size();) {
    const std::size_t start = i;
    const char32_t cp = next_code_point(text, i);
    if (const auto byte = unicode_to_byte(cp)) {
      out += static_cast<char>(*byte);
    } else {
      out.append(text.substr(start, i - start));
    }
  }
  return out;
}

}  // namespace

std::string_view byte_to_unicode(std::uint8_t byte) noexcept {
  return byte_tables().utf8[byte];
}

std::optional<std::uint8_t> unicode_to_byte(char32_t code_point) noexcept {
  if (code_point >= 0x144) return std::nullopt;
  const std::int16_t b = byte_tables().byte_of[code_point];
  if (b < 0) return std::nullopt;
  return static_cast<std::uint8_t>(b);
}

BpePreDefaults bpe_pre_defaults(std::string_view pre) noexcept {
  // llama.cpp's llama_vocab::impl::load, per pre-tokenizer name.
  BpePreDefaults d;
  const auto is = [&](std::initializer_list<std::string_view> names) {
    return std::find(names.begin(), names.end(), pre) != names.end();
  };
  if (is({"llama3", "llama-v3", "llama-bpe", "falcon3", "falcon-h1", "pixtral"})) {
    d.ignore_merges = true;
    d.add_bos = true;
  } else if (is({"tekken"})) {
    d.ignore_merges = true;
    d.add_bos = true;
    d.clean_spaces = false;
  } else if (is({"chameleon"})) {
    d.add_bos = true;
    d.clean_spaces = false;
  } else if (is({"deepseek-llm", "deepseek-coder", "deepseek-v3", "command-r", "qwen2",
                 "deepseek-r1-qwen", "poro-chat", "viking", "smollm", "gpt-4o", "llama4"})) {
    d.clean_spaces = false;
  }
  return d;
}

Result<std::shared_ptr<const BpeTokenizer>> BpeTokenizer::create(BpeVocabulary vocabulary) {
  try {
    const std::size_t n = vocabulary.tokens.size();
    if (n == 0) return vocab_error(ErrorCode::kInvalidModel, kTokensKey, "the vocabulary is empty");
    if (n > static_cast<std::size_t>(std::numeric_limits<TokenId>::max())) {
      return vocab_error(ErrorCode::kLimitExceeded, kTokensKey,
                         std::to_string(n) + " tokens do not fit 32-bit token ids");
    }
    if (!vocabulary.token_types.empty() && vocabulary.token_types.size() != n) {
      return vocab_error(ErrorCode::kInvalidModel, kTypesKey,
                         std::to_string(vocabulary.token_types.size()) + " token types for " +
                             std::to_string(n) + " tokens; the lengths must match");
    }
    for (std::size_t i = 0; i < vocabulary.token_types.size(); ++i) {
      if (!token_type_from_int(vocabulary.token_types[i])) {
        return vocab_error(ErrorCode::kInvalidModel, kTypesKey,
                           "token " + std::to_string(i) + " has type " +
                               std::to_string(vocabulary.token_types[i]) + "; expected 0..6");
      }
    }
    const SpecialTokenIds& s = vocabulary.special;
    EREDU_TRY_VOID(check_special(s.bos, "tokenizer.ggml.bos_token_id", n));
    EREDU_TRY_VOID(check_special(s.eos, "tokenizer.ggml.eos_token_id", n));
    EREDU_TRY_VOID(check_special(s.unk, "tokenizer.ggml.unknown_token_id", n));
    EREDU_TRY_VOID(check_special(s.pad, "tokenizer.ggml.padding_token_id", n));
    EREDU_TRY_VOID(check_special(s.eot, "tokenizer.ggml.eot_token_id", n));
    EREDU_TRY_VOID(check_special(s.eom, "tokenizer.ggml.eom_token_id", n));
    if (vocabulary.add_bos && !s.bos) {
      return vocab_error(ErrorCode::kInvalidModel, "tokenizer.ggml.add_bos_token",
                         "the vocabulary asks for a BOS token but names no BOS id");
    }
    if (vocabulary.add_eos && !s.eos) {
      return vocab_error(ErrorCode::kInvalidModel, "tokenizer.ggml.add_eos_token",
                         "the vocabulary asks for an EOS token but names no EOS id");
    }
    EREDU_TRY(auto pretokenizer, Pretokenizer::create(vocabulary.pre));
    const bool allow_duplicates = vocabulary.allow_duplicate_tokens;
    std::vector<std::string> merges = std::move(vocabulary.merges);
    auto tokenizer = std::make_shared<BpeTokenizer>(PrivateTag{}, std::move(vocabulary));
    tokenizer->pretokenizer_ = std::move(pretokenizer);
    EREDU_TRY_VOID(tokenizer->build_indexes(allow_duplicates, merges));
    tokenizer->init_eog_tokens();
    return std::shared_ptr<const BpeTokenizer>(std::move(tokenizer));
  } catch (const std::bad_alloc&) {
    return fail(ErrorCode::kLimitExceeded, "out of memory while building the vocabulary");
  }
}

BpeTokenizer::BpeTokenizer(PrivateTag, BpeVocabulary&& vocabulary)
    : tokens_(std::move(vocabulary.tokens)),
      special_(vocabulary.special),
      add_bos_(vocabulary.add_bos),
      add_eos_(vocabulary.add_eos),
      ignore_merges_(vocabulary.ignore_merges),
      clean_spaces_(vocabulary.clean_spaces),
      add_space_prefix_(vocabulary.add_space_prefix) {
  types_.reserve(tokens_.size());
  if (vocabulary.token_types.empty()) {
    types_.assign(tokens_.size(), TokenType::kNormal);
  } else {
    for (std::int32_t t : vocabulary.token_types)
      types_.push_back(*token_type_from_int(t));
  }
}

Result<void> BpeTokenizer::build_indexes(bool allow_duplicates,
                                         const std::vector<std::string>& merges) {
  const std::size_t n = tokens_.size();
  ids_by_text_.reserve(n);
  pieces_.resize(n);
  std::size_t duplicates = 0;
  for (std::size_t i = 0; i < n; ++i) {
    const std::string& text = tokens_[i];
    switch (types_[i]) {
      case TokenType::kNormal:
        pieces_[i] = decode_byte_level(text);
        break;
      case TokenType::kControl:
      case TokenType::kUnknown:
      case TokenType::kUserDefined:
        pieces_[i] = text;  // verbatim (control and unknown only when rendering specials)
        break;
      default:
        break;  // byte, unused, undefined: nothing, as llama.cpp renders them for BPE
    }
    if (text.empty()) continue;
    const auto [it, inserted] =
        ids_by_text_.emplace(std::string_view(text), static_cast<TokenId>(i));
    if (!inserted) {
      if (!allow_duplicates) {
        return vocab_error(ErrorCode::kDuplicate, kTokensKey,
                           "token string '" + printable(text) + "' appears at ids " +
                               std::to_string(it->second) + " and " + std::to_string(i));
      }
      ++duplicates;
    }
  }
  if (duplicates > 0) {
    log::warn("tokenizer: {} repeated token strings; text maps to the first id of each",
              duplicates);
  }
  for (int b = 0; b < 256; ++b) {
    const auto id = find_token(byte_to_unicode(static_cast<std::uint8_t>(b)));
    byte_tokens_[static_cast<std::size_t>(b)] = id.value_or(-1);
  }

  merges_.reserve(merges.size());
  std::size_t dropped = 0;
  for (std::size_t rank = 0; rank < merges.size(); ++rank) {
    const std::string& merge = merges[rank];
    const std::size_t space = merge.size() > 1 ? merge.find(' ', 1) : std::string::npos;
    if (space == std::string::npos) {
      return vocab_error(ErrorCode::kInvalidModel, kMergesKey,
                         "merge " + std::to_string(rank) + " is '" + printable(merge) +
                             "'; expected two token strings separated by one space");
    }
    const std::string_view left = std::string_view(merge).substr(0, space);
    const std::string_view right = std::string_view(merge).substr(space + 1);
    const auto l = find_token(left);
    const auto r = find_token(right);
    const auto result = find_token(std::string(left) + std::string(right));
    if (!l || !r || !result) {
      ++dropped;
      continue;
    }
    const std::uint64_t key =
        (std::uint64_t{static_cast<std::uint32_t>(*l)} << 32) | static_cast<std::uint32_t>(*r);
    merges_.emplace(key, Merge{static_cast<std::int32_t>(rank), *result});  // first rank wins
  }
  if (dropped > 0) {
    log::debug("tokenizer: {} merges name strings outside the vocabulary and can never apply",
               dropped);
  }
  special_by_length_ = special_tokens_by_length(tokens_, types_);
  return ok();
}

const BpeTokenizer::Merge* BpeTokenizer::find_merge(TokenId left, TokenId right) const noexcept {
  const std::uint64_t key =
      (std::uint64_t{static_cast<std::uint32_t>(left)} << 32) | static_cast<std::uint32_t>(right);
  const auto it = merges_.find(key);
  return it == merges_.end() ? nullptr : &it->second;
}

Result<std::string> BpeTokenizer::token_to_piece(TokenId id, bool render_special) const {
  EREDU_TRY_VOID(check_token(id));
  const auto i = static_cast<std::size_t>(id);
  try {
    if (!render_special && (types_[i] == TokenType::kControl || types_[i] == TokenType::kUnknown)) {
      return std::string();
    }
    return pieces_[i];
  } catch (const std::bad_alloc&) {
    return fail(ErrorCode::kLimitExceeded, "out of memory while rendering a token");
  }
}

Result<std::string_view> BpeTokenizer::token_text(TokenId id) const {
  EREDU_TRY_VOID(check_token(id));
  return std::string_view(tokens_[static_cast<std::size_t>(id)]);
}

std::optional<TokenId> BpeTokenizer::find_token(std::string_view text) const {
  const auto it = ids_by_text_.find(text);
  if (it == ids_by_text_.end()) return std::nullopt;
  return it->second;
}

Result<TokenType> BpeTokenizer::token_type(TokenId id) const {
  EREDU_TRY_VOID(check_token(id));
  return types_[static_cast<std::size_t>(id)];
}

}  // namespace eredu::text
