// SentencePieceTokenizer::encode: special-token splitting, then score-driven merging of UTF-8
// characters per fragment, then byte fallback. Follows llama.cpp's llm_tokenizer_spm (which in
// turn follows SentencePiece's BPE-model encoder) so that ids agree token for token.

#include <algorithm>
#include <cstddef>
#include <cstdio>
#include <limits>
#include <new>
#include <queue>

#include "eredu/text/sentencepiece_tokenizer.hpp"
#include "text_util.hpp"

namespace eredu::text {
namespace {

// Inputs above this size are refused rather than risking an allocation of ~40 bytes per byte.
constexpr std::size_t kMaxEncodeBytes = std::size_t{1} << 30;
constexpr std::size_t kNone = std::numeric_limits<std::size_t>::max();

// The byte length of the UTF-8 sequence that `lead` starts, judged by its top four bits only, as
// llama.cpp's unicode_len_utf8 does (continuation and invalid bytes count as one character). The
// merge result depends on this split, so it must not be "fixed".
constexpr std::size_t utf8_length_from_lead(unsigned char lead) noexcept {
  constexpr std::size_t kLengths[16] = {1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 2, 2, 3, 4};
  return kLengths[lead >> 4];
}

}  // namespace

// A piece of the input: raw text (a byte range of the input) or an already recognised token.
struct SentencePieceTokenizer::Fragment {
  bool is_token;
  TokenId token;
  std::size_t begin;
  std::size_t length;
};

// The merge state for one escaped fragment: a doubly linked list of symbols over the text and a
// max-heap of candidate merges.
class SentencePieceTokenizer::MergeSession {
 public:
  MergeSession(const SentencePieceTokenizer& vocab, std::string_view text)
      : vocab_(vocab), text_(text) {}

  void run() {
    for (std::size_t offset = 0; offset < text_.size();) {
      const std::size_t len = std::min(
          utf8_length_from_lead(static_cast<unsigned char>(text_[offset])), text_.size() - offset);
      const std::size_t index = symbols_.size();
      symbols_.push_back({index == 0 ? kNone : index - 1,
                          offset + len == text_.size() ? kNone : index + 1, offset, len});
      offset += len;
    }
    for (std::size_t i = 1; i < symbols_.size(); ++i)
      try_add_candidate(i - 1, i);

    while (!queue_.empty()) {
      const Candidate top = queue_.top();
      queue_.pop();
      Symbol& left = symbols_[top.left];
      Symbol& right = symbols_[top.right];
      // Stale: one side was merged away, or grew, since the candidate was queued.
      if (left.length == 0 || right.length == 0 || left.length + right.length != top.length) {
        continue;
      }
      left.length += right.length;
      right.length = 0;
      left.next = right.next;
      if (right.next != kNone) symbols_[right.next].prev = top.left;
      try_add_candidate(left.prev, top.left);
      try_add_candidate(top.left, left.next);
    }
  }

  // Emits the ids of the surviving symbols in order. A merged symbol is always a vocabulary
  // entry (merges happen only into entries), so a miss is an unmerged character: bytes.
  Result<void> emit(std::vector<TokenId>& out) const {
    for (std::size_t i = symbols_.empty() ? kNone : 0; i != kNone; i = symbols_[i].next) {
      const std::string_view piece = text_.substr(symbols_[i].begin, symbols_[i].length);
      if (const auto id = vocab_.find_token(piece)) {
        out.push_back(*id);
      } else {
        EREDU_TRY_VOID(vocab_.emit_bytes(piece, out));
      }
    }
    return ok();
  }

 private:
  struct Symbol {
    std::size_t prev;
    std::size_t next;
    std::size_t begin;
    std::size_t length;  // 0 once merged into its left neighbour
  };
  struct Candidate {
    std::size_t left;
    std::size_t right;
    float score;
    std::size_t length;
  };
  // Orders the heap: highest score on top; equal scores: leftmost on top.
  struct LowerPriority {
    bool operator()(const Candidate& a, const Candidate& b) const noexcept {
      return a.score < b.score || (a.score == b.score && a.left > b.left);
    }
  };

  void try_add_candidate(std::size_t left, std::size_t right) {
    if (left == kNone || right == kNone) return;
    const std::size_t length = symbols_[left].length + symbols_[right].length;
    const auto id = vocab_.find_token(text_.substr(symbols_[left].begin, length));
    if (!id) return;
    queue_.push({left, right, vocab_.score(*id), length});
  }

  const SentencePieceTokenizer& vocab_;
  std::string_view text_;
  std::vector<Symbol> symbols_;
  std::priority_queue<Candidate, std::vector<Candidate>, LowerPriority> queue_;
};

Result<void> SentencePieceTokenizer::emit_bytes(std::string_view bytes,
                                                std::vector<TokenId>& out) const {
  for (const char c : bytes) {
    const auto byte = static_cast<unsigned char>(c);
    const TokenId id = byte_fallback_[byte];
    if (id >= 0) {
      out.push_back(id);
    } else if (special_.unk) {
      out.push_back(*special_.unk);
    } else {
      char hex[8];
      std::snprintf(hex, sizeof hex, "0x%02X", byte);
      return fail(ErrorCode::kUnsupported,
                  std::string("the vocabulary cannot represent byte ") + hex +
                      ": it has no <0xHH> byte token, no single-byte entry and no unknown token");
    }
  }
  return ok();
}

Result<void> SentencePieceTokenizer::encode_fragment(std::string_view escaped,
                                                     std::vector<TokenId>& out) const {
  MergeSession session(*this, escaped);
  session.run();
  return session.emit(out);
}

std::vector<SentencePieceTokenizer::Fragment> SentencePieceTokenizer::split_special(
    std::string_view text, bool parse_special) const {
  std::vector<Fragment> fragments;
  if (text.empty()) return fragments;
  fragments.push_back({false, -1, 0, text.size()});
  std::vector<Fragment> next;
  for (const TokenId id : special_by_length_) {
    const TokenType type = types_[static_cast<std::size_t>(id)];
    // Without parse_special only user-defined tokens are matched (as Hugging Face does).
    if (!parse_special && (type == TokenType::kControl || type == TokenType::kUnknown)) continue;
    const std::string_view needle = tokens_[static_cast<std::size_t>(id)];
    next.clear();
    for (const Fragment& fragment : fragments) {
      if (fragment.is_token) {
        next.push_back(fragment);
        continue;
      }
      const std::size_t end = fragment.begin + fragment.length;
      const std::string_view window = text.substr(0, end);
      std::size_t pos = fragment.begin;
      for (std::size_t hit = window.find(needle, pos); hit != std::string_view::npos;
           hit = window.find(needle, pos)) {
        if (hit > pos) next.push_back({false, -1, pos, hit - pos});
        next.push_back({true, id, hit, needle.size()});
        pos = hit + needle.size();
      }
      if (pos < end) next.push_back({false, -1, pos, end - pos});
    }
    fragments.swap(next);
  }
  return fragments;
}

Result<std::vector<TokenId>> SentencePieceTokenizer::encode(std::string_view text,
                                                            const EncodeOptions& options) const {
  if (text.size() > kMaxEncodeBytes) {
    return fail(ErrorCode::kLimitExceeded, "text of " + std::to_string(text.size()) +
                                               " bytes is above the tokenizer limit of " +
                                               std::to_string(kMaxEncodeBytes) + " bytes");
  }
  try {
    std::vector<TokenId> out;
    if (options.add_bos && add_bos_) out.push_back(*special_.bos);  // checked at construction
    // As in SentencePiece and llama.cpp, a text fragment gets the space prefix at the start of
    // the input and after every special token.
    bool after_special = true;
    for (const Fragment& fragment : split_special(text, options.parse_special)) {
      if (fragment.is_token) {
        out.push_back(fragment.token);
        after_special = true;
        continue;
      }
      std::string raw;
      if (add_space_prefix_ && after_special) raw = " ";
      raw.append(text.substr(fragment.begin, fragment.length));
      EREDU_TRY_VOID(encode_fragment(escape_spaces(raw), out));
      after_special = false;
    }
    if (options.add_eos && add_eos_) out.push_back(*special_.eos);
    return out;
  } catch (const std::bad_alloc&) {
    return fail(ErrorCode::kLimitExceeded,
                "out of memory while encoding " + std::to_string(text.size()) + " bytes");
  }
}

}  // namespace eredu::text
