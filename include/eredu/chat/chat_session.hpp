#pragma once
// ChatSession<B>: a multi-turn conversation with one model runtime, on any TextGenerationBackend.
//
// Each turn appends the user's message, renders the whole conversation (so a template that
// re-renders earlier turns differently stays exact), tokenizes it, and evaluates only what the
// session's cache does not already hold: the longest common prefix of the new prompt and the
// tokens the cache holds is kept (TextGenerationRequest::cached_prefix). The reply is streamed,
// stops at the vocabulary's end-of-generation tokens and at the template's end of turn, and is
// appended to the conversation as the assistant's message.
//
// A failed turn leaves the conversation as it was before it; a cancelled one keeps the partial
// reply the caller already saw. The runtime must not be used by anyone else meanwhile (the
// session tracks what its cache holds).

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "eredu/chat/chat_format.hpp"
#include "eredu/core/concepts/text_generation_backend.hpp"
#include "eredu/core/result.hpp"
#include "eredu/generation/cancellation.hpp"
#include "eredu/generation/sampling_config.hpp"
#include "eredu/generation/text_generation.hpp"
#include "eredu/runtime/model_runtime.hpp"
#include "eredu/text/tokenizer.hpp"

namespace eredu::chat {

struct ChatReply {
  generation::TextGenerationResult result;  // tokens, text, finish reason, timings
  std::size_t prompt_tokens = 0;            // the rendered conversation's tokens
  std::size_t reused_positions = 0;         // of those, already in the cache (not evaluated)
};

struct ChatTurnOptions {
  generation::SamplingConfig sampling = generation::SamplingConfig::greedy();
  std::int64_t max_tokens = -1;  // -1: until the context is full
};

template <TextGenerationBackend B>
class ChatSession {
 public:
  // `system` (when not empty) opens the conversation as a system message.
  [[nodiscard]] static Result<ChatSession> create(runtime::ModelRuntime<B>& runtime,
                                                  std::shared_ptr<const text::Tokenizer> tokenizer,
                                                  RenderConversation render,
                                                  std::string system = {}) {
    if (!tokenizer || !render) {
      return fail(ErrorCode::kInvalidArgument, "a chat needs a tokenizer and a renderer");
    }
    EREDU_TRY(TurnEnd turn_end, find_turn_end(render, *tokenizer));
    Messages messages = Messages::array();
    if (!system.empty()) messages.push_back({{"role", "system"}, {"content", std::move(system)}});
    return ChatSession(runtime, std::move(tokenizer), std::move(render), std::move(turn_end),
                       std::move(messages));
  }

  // One user turn: the reply is streamed to on_text(std::string_view) as it is generated.
  template <typename OnText>
  [[nodiscard]] Result<ChatReply> reply(std::string_view user_text, const ChatTurnOptions& options,
                                        const generation::CancellationToken& cancel,
                                        OnText&& on_text) {
    messages_.push_back({{"role", "user"}, {"content", std::string(user_text)}});
    auto reply = run_turn(options, cancel, on_text);
    if (!reply) {
      messages_.erase(messages_.end() - 1);
      return reply;
    }
    messages_.push_back({{"role", "assistant"}, {"content", reply->result.text}});
    return reply;
  }

  [[nodiscard]] const Messages& messages() const noexcept { return messages_; }
  [[nodiscard]] const TurnEnd& turn_end() const noexcept { return turn_end_; }
  // The tokens the session's cache holds, position by position.
  [[nodiscard]] const std::vector<text::TokenId>& cached_tokens() const noexcept { return cached_; }

 private:
  ChatSession(runtime::ModelRuntime<B>& runtime, std::shared_ptr<const text::Tokenizer> tokenizer,
              RenderConversation render, TurnEnd turn_end, Messages messages)
      : runtime_(&runtime),
        tokenizer_(std::move(tokenizer)),
        render_(std::move(render)),
        turn_end_(std::move(turn_end)),
        messages_(std::move(messages)) {}

  template <typename OnText>
  Result<ChatReply> run_turn(const ChatTurnOptions& options,
                             const generation::CancellationToken& cancel, OnText& on_text) {
    EREDU_TRY(const std::string rendered, render_(messages_, true));
    EREDU_TRY(std::vector<text::TokenId> prompt, tokenize_rendered(*tokenizer_, rendered));

    generation::TextGenerationRequest request;
    request.sampling = options.sampling;
    request.max_tokens = options.max_tokens;
    request.stop_strings = turn_end_.stop_strings;
    // Every end-of-generation token of the vocabulary (eos, eot, eom and the end-of-turn
    // markers such as <|im_end|> or <|eot_id|>).
    const auto eog = tokenizer_->eog_tokens();
    request.eos_ids.assign(eog.begin(), eog.end());
    request.eos_ids.insert(request.eos_ids.end(), turn_end_.token_ids.begin(),
                           turn_end_.token_ids.end());
    // Keep what the cache shares with the new prompt, but evaluate at least its last token.
    const std::size_t shared = common_prefix(cached_, prompt);
    const std::size_t reused = std::min(shared, prompt.empty() ? 0 : prompt.size() - 1);
    request.cached_prefix = static_cast<std::uint32_t>(reused);
    request.prompt = prompt;

    auto generation = generation::TextGeneration<B>::create(*runtime_, std::move(request));
    if (!generation) return fail(std::move(generation).error());
    // From here the cache is being rewritten: until the turn ends, what it holds is unknown.
    cached_.clear();
    const auto piece_of = [this](generation::TokenId id) { return tokenizer_->token_to_piece(id); };
    EREDU_TRY(generation::TextGenerationResult result, generation->run(cancel, piece_of, on_text));
    // The cache holds the prompt and every generated token but the last (sampled, not evaluated).
    const std::size_t n_prompt = prompt.size();
    cached_ = std::move(prompt);
    if (!result.tokens.empty()) {
      cached_.insert(cached_.end(), result.tokens.begin(), result.tokens.end() - 1);
    }
    ChatReply reply;
    reply.prompt_tokens = n_prompt;
    reply.reused_positions = reused;
    reply.result = std::move(result);
    return reply;
  }

  runtime::ModelRuntime<B>* runtime_;
  std::shared_ptr<const text::Tokenizer> tokenizer_;
  RenderConversation render_;
  TurnEnd turn_end_;
  Messages messages_;
  std::vector<text::TokenId> cached_;
};

}  // namespace eredu::chat
