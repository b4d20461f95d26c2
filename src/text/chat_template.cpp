// Chat templates rendered as transformers' apply_chat_template renders them.

#include "eredu/text/chat_template.hpp"

#include "eredu/jinja/json.hpp"

namespace eredu::text {

Result<ChatTemplate> ChatTemplate::parse(std::string_view source, jinja::TemplateOptions options) {
  EREDU_TRY(jinja::Template compiled, jinja::Template::parse(source, options));
  return ChatTemplate(std::move(compiled));
}

Result<std::string> ChatTemplate::render(const ChatRenderInput& input) const {
  if (!input.messages.is_array() && !input.messages.is_object()) {
    return fail(ErrorCode::kInvalidArgument, "chat messages must be a JSON array (or object)");
  }
  if (!input.extra.is_object()) {
    return fail(ErrorCode::kInvalidArgument, "extra chat template variables must be a JSON object");
  }
  jinja::RenderInput vars;
  vars.clock = input.clock;
  vars.variables.emplace_back("messages", jinja::from_json(input.messages));
  vars.variables.emplace_back("tools",
                              input.tools ? jinja::from_json(*input.tools) : jinja::Value::none());
  vars.variables.emplace_back("documents", jinja::Value::none());
  vars.variables.emplace_back("add_generation_prompt", jinja::Value(input.add_generation_prompt));
  vars.variables.emplace_back("bos_token", jinja::Value(input.bos_token));
  vars.variables.emplace_back("eos_token", jinja::Value(input.eos_token));
  for (const auto& [key, value] : input.extra.items()) {
    vars.variables.emplace_back(key, jinja::from_json(value));
  }
  return template_.render(vars);
}

Result<std::string> read_chat_template(const checkpoint::GgufContents& gguf) {
  if (gguf.find_metadata(kChatTemplateKey) == nullptr) {
    return fail(Error(ErrorCode::kNotFound, "the file has no chat template")
                    .with_path(gguf.path())
                    .with_subject(std::string(kChatTemplateKey)));
  }
  EREDU_TRY(const std::string_view source, gguf.get_string(kChatTemplateKey));
  return std::string(source);
}

}  // namespace eredu::text
