#pragma once
// How a conversation becomes the tokens a chat model is prompted with, independent of the
// backend: rendering (the model's chat template, or any function), tokenizing the rendered text
// with its special tokens, finding where a turn ends, and how much of a new prompt a session's
// cache already holds.
//
// A conversation is a JSON array of messages ({"role": "system"|"user"|"assistant"|"tool",
// "content": ...}, plus whatever a template reads: tool_calls, name, ...), as Hugging Face
// `apply_chat_template` takes it.

#include <cstddef>
#include <functional>
#include <nlohmann/json.hpp>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "eredu/core/result.hpp"
#include "eredu/text/tokenizer.hpp"

namespace eredu::chat {

using Messages = nlohmann::ordered_json;

// Renders `messages` to the model's prompt text; with `add_generation_prompt` the text ends with
// the opening of an assistant turn. A template error is returned, never thrown.
using RenderConversation =
    std::function<Result<std::string>(const Messages& messages, bool add_generation_prompt)>;

// The prompt tokens of a rendered conversation. Special-token text in it ("<s>", "<|im_end|>")
// becomes those tokens (the template wrote it, not the user); BOS is added only when the
// vocabulary wants one and the text does not already begin with it.
[[nodiscard]] Result<std::vector<text::TokenId>> tokenize_rendered(const text::Tokenizer& tokenizer,
                                                                   std::string_view rendered);

// What ends an assistant turn in this format, found by rendering a probe conversation: the first
// token after the assistant's content when it is a special token (e.g. <|im_end|>, <|eot_id|>,
// </s>), otherwise the marker text itself as a stop string. Both empty when the template ends a
// turn with nothing but whitespace.
struct TurnEnd {
  std::vector<text::TokenId> token_ids;
  std::vector<std::string> stop_strings;
};
[[nodiscard]] Result<TurnEnd> find_turn_end(const RenderConversation& render,
                                            const text::Tokenizer& tokenizer);

// How many leading tokens `a` and `b` share.
[[nodiscard]] std::size_t common_prefix(std::span<const text::TokenId> a,
                                        std::span<const text::TokenId> b) noexcept;

}  // namespace eredu::chat
