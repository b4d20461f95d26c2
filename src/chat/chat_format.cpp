// Rendered conversations to tokens, the turn-end probe and prefix matching (chat_format.hpp).
#include "eredu/chat/chat_format.hpp"

#include <algorithm>

namespace eredu::chat {

namespace {

// A word no template rewrites and no vocabulary holds whole, so that the text after it in the
// probe render is exactly what the template appends to an assistant message.
constexpr std::string_view kProbeReply = "eredu7probe7reply";

std::string_view trim(std::string_view text) {
  const auto is_space = [](char c) { return c == ' ' || c == '\n' || c == '\t' || c == '\r'; };
  while (!text.empty() && is_space(text.front()))
    text.remove_prefix(1);
  while (!text.empty() && is_space(text.back()))
    text.remove_suffix(1);
  return text;
}

bool is_special(const text::Tokenizer& tokenizer, text::TokenId id) {
  auto type = tokenizer.token_type(id);
  return type && (*type == text::TokenType::kControl || *type == text::TokenType::kUserDefined);
}

}  // namespace

Result<std::vector<text::TokenId>> tokenize_rendered(const text::Tokenizer& tokenizer,
                                                     std::string_view rendered) {
  bool add_bos = tokenizer.adds_bos();
  if (const auto bos = tokenizer.special_tokens().bos; add_bos && bos) {
    auto bos_text = tokenizer.token_text(*bos);
    if (bos_text && !bos_text->empty() && rendered.starts_with(*bos_text)) add_bos = false;
  }
  return tokenizer.encode(rendered, {.add_bos = add_bos, .add_eos = false, .parse_special = true});
}

Result<TurnEnd> find_turn_end(const RenderConversation& render, const text::Tokenizer& tokenizer) {
  Messages probe = Messages::array();
  probe.push_back({{"role", "user"}, {"content", "Hello"}});
  probe.push_back({{"role", "assistant"}, {"content", std::string(kProbeReply)}});
  EREDU_TRY(const std::string rendered, render(probe, false));
  TurnEnd end;
  const std::size_t at = rendered.rfind(kProbeReply);
  if (at == std::string::npos) return end;  // the template drops assistant turns: nothing to learn
  const std::string_view marker = trim(std::string_view(rendered).substr(at + kProbeReply.size()));
  if (marker.empty()) return end;
  EREDU_TRY(const std::vector<text::TokenId> ids,
            tokenizer.encode(marker, {.add_bos = false, .add_eos = false, .parse_special = true}));
  if (!ids.empty() && is_special(tokenizer, ids.front())) {
    end.token_ids.push_back(ids.front());
  } else {
    end.stop_strings.emplace_back(marker);
  }
  return end;
}

std::size_t common_prefix(std::span<const text::TokenId> a,
                          std::span<const text::TokenId> b) noexcept {
  const auto [ia, ib] = std::mismatch(a.begin(), a.end(), b.begin(), b.end());
  (void)ib;
  return static_cast<std::size_t>(ia - a.begin());
}

}  // namespace eredu::chat
