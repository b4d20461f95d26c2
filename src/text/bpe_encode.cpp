// BpeTokenizer::encode: UTF-8 validation, special-token splitting, regex pre-tokenization, then
// rank-ordered merging of each word's byte symbols. Follows llama.cpp's llm_tokenizer_bpe_session
// (and Hugging Face's BPE model), working on token ids instead of strings: a merge is looked up
// by the (left id, right id) pair, so no string is built while merging.

#include <algorithm>
#include <limits>
#include <new>
#include <queue>
#include <unordered_map>

#include "eredu/text/bpe_tokenizer.hpp"
#include "special_split.hpp"
#include "text_util.hpp"

namespace eredu::text {
namespace {

constexpr std::size_t kMaxEncodeBytes = std::size_t{1} << 30;
// Words up to this many symbols merge by rescanning (faster for the short words of real text);
// longer ones use a heap, O(n log n).
constexpr std::size_t kLinearMergeLimit = 48;
// Words up to this many bytes are remembered within one encode() call.
constexpr std::size_t kCacheWordBytes = 64;
constexpr std::int32_t kNoRank = std::numeric_limits<std::int32_t>::max();

}  // namespace

// Merges one word. `symbols` holds the word's byte tokens (-1 for a byte the vocabulary lacks,
// which never merges and is dropped at the end, as llama.cpp drops it).
class BpeTokenizer::WordEncoder {
 public:
  explicit WordEncoder(const BpeTokenizer& vocab) : vocab_(vocab) {}

  void merge_linear(std::vector<TokenId>& symbols) {
    ranks_.resize(symbols.size());
    results_.resize(symbols.size());
    for (std::size_t i = 0; i + 1 < symbols.size(); ++i)
      rank_pair(symbols, i);
    while (symbols.size() > 1) {
      std::size_t best = 0;
      std::int32_t best_rank = kNoRank;
      for (std::size_t i = 0; i + 1 < symbols.size(); ++i) {
        if (ranks_[i] < best_rank) {  // strict: the leftmost of equal ranks wins
          best_rank = ranks_[i];
          best = i;
        }
      }
      if (best_rank == kNoRank) break;
      symbols[best] = results_[best];
      symbols.erase(symbols.begin() + static_cast<std::ptrdiff_t>(best) + 1);
      ranks_.erase(ranks_.begin() + static_cast<std::ptrdiff_t>(best) + 1);
      results_.erase(results_.begin() + static_cast<std::ptrdiff_t>(best) + 1);
      if (best + 1 < symbols.size())
        rank_pair(symbols, best);
      else
        ranks_[best] = kNoRank;
      if (best > 0) rank_pair(symbols, best - 1);
    }
  }

  void merge_heap(std::vector<TokenId>& symbols) {
    const std::size_t n = symbols.size();
    nodes_.assign(n, {});
    for (std::size_t i = 0; i < n; ++i) {
      nodes_[i] = {symbols[i], static_cast<std::int64_t>(i) - 1,
                   i + 1 < n ? static_cast<std::int64_t>(i + 1) : -1};
    }
    queue_ = {};
    for (std::size_t i = 0; i + 1 < n; ++i)
      push(static_cast<std::int64_t>(i), static_cast<std::int64_t>(i + 1));
    while (!queue_.empty()) {
      const Candidate top = queue_.top();
      queue_.pop();
      Node& left = nodes_[static_cast<std::size_t>(top.left)];
      if (left.id != top.left_id || left.next != top.right) continue;  // stale
      Node& right = nodes_[static_cast<std::size_t>(top.right)];
      if (right.id != top.right_id) continue;
      left.id = top.result;
      left.next = right.next;
      if (right.next >= 0) nodes_[static_cast<std::size_t>(right.next)].prev = top.left;
      right.id = -2;  // merged away
      if (left.prev >= 0) push(left.prev, top.left);
      if (left.next >= 0) push(top.left, left.next);
    }
    symbols.clear();
    for (std::int64_t i = 0; i >= 0; i = nodes_[static_cast<std::size_t>(i)].next)
      symbols.push_back(nodes_[static_cast<std::size_t>(i)].id);
  }

 private:
  struct Node {
    TokenId id = -1;
    std::int64_t prev = -1;
    std::int64_t next = -1;
  };
  struct Candidate {
    std::int32_t rank;
    std::int64_t left;
    std::int64_t right;
    TokenId left_id;
    TokenId right_id;
    TokenId result;
  };
  struct LowerPriority {
    bool operator()(const Candidate& a, const Candidate& b) const noexcept {
      return a.rank > b.rank || (a.rank == b.rank && a.left > b.left);
    }
  };

  void rank_pair(const std::vector<TokenId>& symbols, std::size_t i) {
    ranks_[i] = kNoRank;
    if (symbols[i] < 0 || symbols[i + 1] < 0) return;
    if (const Merge* m = vocab_.find_merge(symbols[i], symbols[i + 1])) {
      ranks_[i] = m->rank;
      results_[i] = m->result;
    }
  }

  void push(std::int64_t left, std::int64_t right) {
    const TokenId l = nodes_[static_cast<std::size_t>(left)].id;
    const TokenId r = nodes_[static_cast<std::size_t>(right)].id;
    if (l < 0 || r < 0) return;
    if (const Merge* m = vocab_.find_merge(l, r))
      queue_.push({m->rank, left, right, l, r, m->result});
  }

  const BpeTokenizer& vocab_;
  std::vector<std::int32_t> ranks_;
  std::vector<TokenId> results_;
  std::vector<Node> nodes_;
  std::priority_queue<Candidate, std::vector<Candidate>, LowerPriority> queue_;
};

void BpeTokenizer::encode_word(std::string_view word, std::vector<TokenId>& out,
                               std::vector<TokenId>& symbols) const {
  if (ignore_merges_) {
    std::string mapped;
    mapped.reserve(word.size() * 2);
    for (const char c : word)
      mapped.append(byte_to_unicode(static_cast<std::uint8_t>(c)));
    if (const auto id = find_token(mapped)) {
      out.push_back(*id);
      return;
    }
  }
  symbols.clear();
  for (const char c : word)
    symbols.push_back(byte_tokens_[static_cast<unsigned char>(c)]);
  WordEncoder encoder(*this);
  if (symbols.size() <= kLinearMergeLimit) {
    encoder.merge_linear(symbols);
  } else {
    encoder.merge_heap(symbols);
  }
  for (const TokenId id : symbols) {
    if (id >= 0) out.push_back(id);
  }
}

Result<std::vector<TokenId>> BpeTokenizer::encode(std::string_view text,
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
    out.reserve(text.size() / 3 + 4);
    if (options.add_bos && add_bos_) out.push_back(*special_.bos);  // checked at construction

    // Word -> ids within this call: real text repeats its words, and merging is the hot part.
    std::unordered_map<std::string_view, std::pair<std::uint32_t, std::uint32_t>> cache;
    std::vector<TokenId> cached_ids;
    std::vector<std::string_view> words;
    std::vector<TokenId> symbols;
    std::string prefixed;
    bool after_special = true;
    for (const TextFragment& fragment : split_at_special_tokens(text, special_by_length_, tokens_,
                                                                types_, options.parse_special)) {
      if (fragment.is_token) {
        out.push_back(fragment.token);
        after_special = true;
        continue;
      }
      std::string_view raw = text.substr(fragment.begin, fragment.length);
      if (add_space_prefix_ && after_special && raw.front() != ' ') {
        prefixed = " ";
        prefixed.append(raw);
        raw = prefixed;
      }
      after_special = false;
      words.clear();
      EREDU_TRY_VOID(pretokenizer_->split(raw, words));
      for (const std::string_view word : words) {
        const bool cacheable = word.size() <= kCacheWordBytes && raw.data() != prefixed.data();
        if (cacheable) {
          const auto it = cache.find(word);
          if (it != cache.end()) {
            const auto begin = cached_ids.begin() + it->second.first;
            out.insert(out.end(), begin, begin + it->second.second);
            continue;
          }
        }
        const std::size_t before = out.size();
        encode_word(word, out, symbols);
        if (cacheable) {
          cache.emplace(word, std::pair{static_cast<std::uint32_t>(cached_ids.size()),
                                        static_cast<std::uint32_t>(out.size() - before)});
          cached_ids.insert(cached_ids.end(), out.begin() + static_cast<std::ptrdiff_t>(before),
                            out.end());
        }
      }
    }
    if (options.add_eos && add_eos_) out.push_back(*special_.eos);
    return out;
  } catch (const std::bad_alloc&) {
    return fail(ErrorCode::kLimitExceeded,
                "out of memory while encoding " + std::to_string(text.size()) + " bytes");
  }
}

}  // namespace eredu::text
