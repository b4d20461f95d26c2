#include "special_split.hpp"

#include <algorithm>

namespace eredu::text {

std::vector<TokenId> special_tokens_by_length(const std::vector<std::string>& tokens,
                                              const std::vector<TokenType>& types) {
  std::vector<TokenId> ids;
  for (std::size_t i = 0; i < tokens.size(); ++i) {
    const TokenType t = types[i];
    if ((t == TokenType::kControl || t == TokenType::kUnknown || t == TokenType::kUserDefined) &&
        !tokens[i].empty()) {
      ids.push_back(static_cast<TokenId>(i));
    }
  }
  std::stable_sort(ids.begin(), ids.end(), [&](TokenId a, TokenId b) {
    return tokens[static_cast<std::size_t>(a)].size() > tokens[static_cast<std::size_t>(b)].size();
  });
  return ids;
}

std::vector<TextFragment> split_at_special_tokens(std::string_view text,
                                                  std::span<const TokenId> by_length,
                                                  const std::vector<std::string>& tokens,
                                                  const std::vector<TokenType>& types,
                                                  bool parse_special) {
  std::vector<TextFragment> fragments;
  if (text.empty()) return fragments;
  fragments.push_back({false, -1, 0, text.size()});
  std::vector<TextFragment> next;
  for (const TokenId id : by_length) {
    const TokenType type = types[static_cast<std::size_t>(id)];
    if (!parse_special && (type == TokenType::kControl || type == TokenType::kUnknown)) continue;
    const std::string_view needle = tokens[static_cast<std::size_t>(id)];
    next.clear();
    bool changed = false;
    for (const TextFragment& fragment : fragments) {
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
        changed = true;
      }
      if (pos < end) next.push_back({false, -1, pos, end - pos});
    }
    if (changed) fragments.swap(next);
  }
  return fragments;
}

}  // namespace eredu::text
