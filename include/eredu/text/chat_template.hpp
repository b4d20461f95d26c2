#pragma once
// Chat templates: a model's Jinja template (tokenizer.chat_template) rendered with a
// conversation the way Hugging Face transformers' apply_chat_template renders it — variables
// messages, tools (None when there are none), documents (None), add_generation_prompt,
// bos_token, eos_token and any extra keyword variables — through eredu's sandboxed Jinja engine.

#include <optional>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "eredu/checkpoint/gguf.hpp"
#include "eredu/core/result.hpp"
#include "eredu/jinja/template.hpp"

namespace eredu::text {

struct ChatRenderInput {
  // [{"role": ..., "content": ..., optional "tool_calls", "name", "tool_call_id",
  //   "reasoning_content", ...}, ...] exactly as the template expects them.
  nlohmann::ordered_json messages = nlohmann::ordered_json::array();
  // Tool definitions (JSON schemas); nullopt renders as None, as HF passes tools=None.
  std::optional<nlohmann::ordered_json> tools;
  bool add_generation_prompt = false;
  std::string bos_token;
  std::string eos_token;
  // More variables (an object; its keys override the ones above), e.g. enable_thinking.
  nlohmann::ordered_json extra = nlohmann::ordered_json::object();
  jinja::Clock clock;  // for strftime_now; empty: the system clock
};

class ChatTemplate {
 public:
  [[nodiscard]] static Result<ChatTemplate> parse(std::string_view source,
                                                  jinja::TemplateOptions options = {});
  [[nodiscard]] Result<std::string> render(const ChatRenderInput& input) const;

 private:
  explicit ChatTemplate(jinja::Template compiled) : template_(std::move(compiled)) {}
  jinja::Template template_;
};

inline constexpr std::string_view kChatTemplateKey = "tokenizer.chat_template";

// The tokenizer.chat_template string of a GGUF file; kNotFound naming the key when absent.
[[nodiscard]] Result<std::string> read_chat_template(const checkpoint::GgufContents& gguf);

}  // namespace eredu::text
