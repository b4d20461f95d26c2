// WordPieceTokenizer: BERT's normalizer and pre-tokenizer (Hugging Face tokenizers'
// normalizers/bert.rs and pre_tokenizers/bert.rs) and greedy longest-match WordPiece.

#include "eredu/text/wordpiece_tokenizer.hpp"

#include <limits>
#include <new>

#include "special_split.hpp"
#include "text_util.hpp"
#include "unicode_tables.hpp"

namespace eredu::text {
namespace {

constexpr std::string_view kTokensKey = "tokenizer.ggml.tokens";
constexpr std::string_view kTypesKey = "tokenizer.ggml.token_type";
constexpr std::size_t kMaxEncodeBytes = std::size_t{1} << 30;

Unexpected<Error> vocab_error(ErrorCode code, std::string_view key, std::string message) {
  return Unexpected<Error>(Error(code, std::move(message)).with_subject(std::string(key)));
}

// Rust's char::is_whitespace (the White_Space property).
bool is_whitespace(char32_t c) {
  return (c >= 0x09 && c <= 0x0D) || c == 0x20 || c == 0x85 || c == 0xA0 || c == 0x1680 ||
         (c >= 0x2000 && c <= 0x200A) || c == 0x2028 || c == 0x2029 || c == 0x202F || c == 0x205F ||
         c == 0x3000;
}

bool is_bert_whitespace(char32_t c) {
  return c == '\t' || c == '\n' || c == '\r' || is_whitespace(c);
}

bool is_bert_control(char32_t c) {
  if (c == '\t' || c == '\n' || c == '\r') return false;
  return (unicode::flags(c) & unicode::kOther) != 0;
}

bool is_chinese_char(char32_t c) {
  // The ranges of Hugging Face's bert.rs (0x2B920, not 0x2B820, as it writes it).
  return (c >= 0x4E00 && c <= 0x9FFF) || (c >= 0x3400 && c <= 0x4DBF) ||
         (c >= 0x20000 && c <= 0x2A6DF) || (c >= 0x2A700 && c <= 0x2B73F) ||
         (c >= 0x2B740 && c <= 0x2B81F) || (c >= 0x2B920 && c <= 0x2CEAF) ||
         (c >= 0xF900 && c <= 0xFAFF) || (c >= 0x2F800 && c <= 0x2FA1F);
}

bool is_bert_punctuation(char32_t c) {
  const bool ascii = (c >= 0x21 && c <= 0x2F) || (c >= 0x3A && c <= 0x40) ||
                     (c >= 0x5B && c <= 0x60) || (c >= 0x7B && c <= 0x7E);
  return ascii || (unicode::flags(c) & unicode::kPunctuation) != 0;
}

// NFD with nonspacing marks removed, for one code point.
void strip_accents(char32_t c, std::u32string& out) {
  if (c >= 0xAC00 && c <= 0xD7A3) {  // Hangul syllable: L V (T), none of them Mn
    const char32_t s = c - 0xAC00;
    out += static_cast<char32_t>(0x1100 + s / 588);
    out += static_cast<char32_t>(0x1161 + (s % 588) / 28);
    if (s % 28 != 0) out += static_cast<char32_t>(0x11A7 + s % 28);
    return;
  }
  if (unicode::has_strip_mapping(c)) {
    for (const char32_t d : unicode::strip_accents(c))
      out += d;
    return;
  }
  if ((unicode::flags(c) & unicode::kNonspacing) != 0) return;
  out += c;
}

// The normalized code points of `text` (valid UTF-8), with words separated by ' ' and every
// punctuation character and CJK ideograph surrounded by ' '.
std::u32string normalize(std::string_view text) {
  std::u32string stripped;
  stripped.reserve(text.size());
  for (std::size_t i = 0; i < text.size();) {
    const char32_t c = next_code_point(text, i);
    if (c == 0 || c == 0xFFFD || is_bert_control(c)) continue;  // clean_text
    if (is_bert_whitespace(c)) {
      stripped += U' ';
    } else if (is_chinese_char(c)) {
      stripped += U' ';
      stripped += c;
      stripped += U' ';
    } else {
      strip_accents(c, stripped);
    }
  }
  std::u32string out;
  out.reserve(stripped.size());
  for (const char32_t c : stripped) {
    const auto lower = unicode::to_lower(c);
    if (lower.empty()) {
      out += c;
    } else {
      out.append(lower.begin(), lower.end());
    }
  }
  return out;
}

// Calls `word(utf8, chars)` for each word of the normalized text.
template <typename Word>
void for_each_word(const std::u32string& normalized, Word&& word) {
  std::string current;
  std::size_t chars = 0;
  const auto flush = [&] {
    if (chars > 0) word(std::string_view(current), chars);
    current.clear();
    chars = 0;
  };
  for (const char32_t c : normalized) {
    if (is_whitespace(c)) {
      flush();
    } else if (is_bert_punctuation(c)) {
      flush();
      append_utf8(current, c);
      chars = 1;
      flush();
    } else {
      append_utf8(current, c);
      ++chars;
    }
  }
  flush();
}

}  // namespace

Result<std::shared_ptr<const WordPieceTokenizer>> WordPieceTokenizer::create(
    WordPieceVocabulary vocabulary) {
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
    const auto in_range = [n](const std::optional<TokenId>& id) {
      return !id || (*id >= 0 && static_cast<std::size_t>(*id) < n);
    };
    const SpecialTokenIds& s = vocabulary.special;
    if (!in_range(s.bos) || !in_range(s.eos) || !in_range(s.unk) || !in_range(s.pad) ||
        !in_range(s.eot) || !in_range(s.eom) || !in_range(vocabulary.sep)) {
      return vocab_error(ErrorCode::kInvalidModel, kTokensKey,
                         "a special token id is out of range [0, " + std::to_string(n) + ")");
    }
    if (!s.unk) {
      return vocab_error(ErrorCode::kInvalidModel, "tokenizer.ggml.unknown_token_id",
                         "a WordPiece vocabulary needs an unknown token");
    }
    if (vocabulary.add_bos && !s.bos) {
      return vocab_error(ErrorCode::kInvalidModel, "tokenizer.ggml.add_bos_token",
                         "the vocabulary asks for a BOS ([CLS]) token but names no BOS id");
    }
    if (vocabulary.add_eos && !s.eos) {
      return vocab_error(ErrorCode::kInvalidModel, "tokenizer.ggml.add_eos_token",
                         "the vocabulary asks for an EOS token but names no EOS id");
    }
    const bool allow_duplicates = vocabulary.allow_duplicate_tokens;
    auto tokenizer = std::make_shared<WordPieceTokenizer>(PrivateTag{}, std::move(vocabulary));
    for (std::size_t i = 0; i < n; ++i) {
      const std::string& text = tokenizer->tokens_[i];
      if (text.empty()) continue;
      tokenizer->max_token_bytes_ = std::max(tokenizer->max_token_bytes_, text.size());
      const auto [it, inserted] =
          tokenizer->ids_by_text_.emplace(std::string_view(text), static_cast<TokenId>(i));
      if (!inserted && !allow_duplicates) {
        return vocab_error(ErrorCode::kDuplicate, kTokensKey,
                           "token string '" + printable(text) + "' appears at ids " +
                               std::to_string(it->second) + " and " + std::to_string(i));
      }
    }
    tokenizer->special_by_length_ = special_tokens_by_length(tokenizer->tokens_, tokenizer->types_);
    tokenizer->init_eog_tokens();
    return std::shared_ptr<const WordPieceTokenizer>(std::move(tokenizer));
  } catch (const std::bad_alloc&) {
    return fail(ErrorCode::kLimitExceeded, "out of memory while building the vocabulary");
  }
}

WordPieceTokenizer::WordPieceTokenizer(PrivateTag, WordPieceVocabulary&& vocabulary)
    : tokens_(std::move(vocabulary.tokens)),
      special_(vocabulary.special),
      sep_(vocabulary.sep),
      add_bos_(vocabulary.add_bos),
      add_eos_(vocabulary.add_eos) {
  types_.reserve(tokens_.size());
  if (vocabulary.token_types.empty()) {
    types_.assign(tokens_.size(), TokenType::kNormal);
  } else {
    for (std::int32_t t : vocabulary.token_types)
      types_.push_back(*token_type_from_int(t));
  }
}

void WordPieceTokenizer::encode_word(std::string_view word, std::size_t chars,
                                     std::vector<TokenId>& out) const {
  if (chars > kMaxWordChars) {
    out.push_back(*special_.unk);
    return;
  }
  const std::size_t before = out.size();
  std::string candidate;
  for (std::size_t start = 0; start < word.size();) {
    // Longest match from `start`; ends on character boundaries (continuation bytes skipped).
    std::size_t end = word.size();
    bool found = false;
    for (; end > start; --end) {
      if (end < word.size() && (static_cast<unsigned char>(word[end]) & 0xC0) == 0x80) continue;
      if (end - start > max_token_bytes_) continue;
      candidate.clear();
      if (start == 0) candidate = kSpaceMarker;  // a word-initial piece is "▁piece"
      candidate.append(word.substr(start, end - start));
      if (const auto id = find_token(candidate)) {
        out.push_back(*id);
        found = true;
        break;
      }
    }
    if (!found) {  // the word cannot be covered: it is unknown as a whole
      out.resize(before);
      out.push_back(*special_.unk);
      return;
    }
    start = end;
  }
}

std::vector<std::string> WordPieceTokenizer::normalize_and_split(std::string_view text) {
  std::vector<std::string> words;
  if (find_invalid_utf8(text)) return words;
  for_each_word(normalize(text),
                [&](std::string_view word, std::size_t) { words.emplace_back(word); });
  return words;
}

Result<std::vector<TokenId>> WordPieceTokenizer::encode(std::string_view text,
                                                        const EncodeOptions& options) const {
  if (text.size() > kMaxEncodeBytes) {
    return fail(ErrorCode::kLimitExceeded, "text of " + std::to_string(text.size()) +
                                               " bytes is above the tokenizer limit of " +
                                               std::to_string(kMaxEncodeBytes) + " bytes");
  }
  if (const auto bad = find_invalid_utf8(text)) {
    return fail(ErrorCode::kInvalidArgument,
                "the text is not valid UTF-8: the sequence at byte offset " + std::to_string(*bad) +
                    " (" + printable(text.substr(*bad, 4)) + ") is ill-formed");
  }
  try {
    std::vector<TokenId> out;
    if (options.add_bos && add_bos_) out.push_back(*special_.bos);
    for (const TextFragment& fragment : split_at_special_tokens(text, special_by_length_, tokens_,
                                                                types_, options.parse_special)) {
      if (fragment.is_token) {
        out.push_back(fragment.token);
        continue;
      }
      for_each_word(
          normalize(text.substr(fragment.begin, fragment.length)),
          [&](std::string_view word, std::size_t chars) { encode_word(word, chars, out); });
    }
    if (options.add_eos) {
      if (sep_) {
        out.push_back(*sep_);
      } else if (add_eos_) {
        out.push_back(*special_.eos);
      }
    }
    return out;
  } catch (const std::bad_alloc&) {
    return fail(ErrorCode::kLimitExceeded,
                "out of memory while encoding " + std::to_string(text.size()) + " bytes");
  }
}

Result<std::string> WordPieceTokenizer::token_to_piece(TokenId id, bool render_special) const {
  EREDU_TRY_VOID(check_token(id));
  const auto i = static_cast<std::size_t>(id);
  try {
    switch (types_[i]) {
      case TokenType::kControl:
      case TokenType::kUnknown:
        return render_special ? tokens_[i] : std::string();
      case TokenType::kUserDefined:
        return tokens_[i];
      case TokenType::kNormal:
        return unescape_spaces(tokens_[i]);
      default:
        return std::string();
    }
  } catch (const std::bad_alloc&) {
    return fail(ErrorCode::kLimitExceeded, "out of memory while rendering a token");
  }
}

Result<std::string_view> WordPieceTokenizer::token_text(TokenId id) const {
  EREDU_TRY_VOID(check_token(id));
  return std::string_view(tokens_[static_cast<std::size_t>(id)]);
}

std::optional<TokenId> WordPieceTokenizer::find_token(std::string_view text) const {
  const auto it = ids_by_text_.find(text);
  if (it == ids_by_text_.end()) return std::nullopt;
  return it->second;
}

Result<TokenType> WordPieceTokenizer::token_type(TokenId id) const {
  EREDU_TRY_VOID(check_token(id));
  return types_[static_cast<std::size_t>(id)];
}

}  // namespace eredu::text
