#pragma once
// eredu-run --chat: an interactive multi-turn chat with the model's chat template
// (tokenizer.chat_template, or --chat-template-file), through eredu::chat::ChatSession, which
// evaluates only what each turn adds to the cached conversation.
//
// Each line read from stdin is one user turn ("> " is shown when stdin is a terminal); the reply
// streams to stdout. Ctrl-C stops the current reply (the conversation keeps what was shown);
// Ctrl-D (end of input) ends the chat. With -p TEXT (or -f FILE) the chat answers that one turn
// and exits. After each reply a line on stderr says how much of the prompt the cache held.

#include <unistd.h>

#include <atomic>
#include <csignal>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <iterator>
#include <memory>
#include <optional>
#include <string>

#include "eredu/chat/chat_session.hpp"
#include "eredu/checkpoint/gguf.hpp"
#include "eredu/generation/cancellation.hpp"
#include "eredu/generation/sampling_config.hpp"
#include "eredu/text/chat_template.hpp"
#include "eredu/text/tokenizer.hpp"

namespace eredu_run {

struct ChatOptions {
  std::optional<std::string> template_file;  // --chat-template-file
  std::string system;                        // --system
  std::optional<std::string> single_turn;    // -p / -f: answer this and exit
  eredu::generation::SamplingConfig sampling;
  std::int64_t max_tokens = -1;
};

// The chat template's source: the file given, else the model's tokenizer.chat_template.
inline eredu::Result<std::string> chat_template_source(
    const ChatOptions& options, const eredu::checkpoint::GgufContents& gguf) {
  if (options.template_file) {
    std::ifstream in(*options.template_file, std::ios::binary);
    if (!in) {
      return eredu::fail(eredu::Error(eredu::ErrorCode::kIo, "cannot read the chat template")
                             .with_path(*options.template_file));
    }
    return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  }
  auto source = eredu::text::read_chat_template(gguf);
  if (!source) {
    return eredu::fail(
        eredu::Error(eredu::ErrorCode::kNotFound, "the model has no chat template (" +
                                                      std::string(eredu::text::kChatTemplateKey) +
                                                      "); give one with --chat-template-file")
            .with_path(gguf.path()));
  }
  return source;
}

// The template as a RenderConversation, with the vocabulary's BOS and EOS texts.
inline eredu::Result<eredu::chat::RenderConversation> make_renderer(
    const std::string& source, const eredu::text::Tokenizer& tokenizer) {
  EREDU_TRY(eredu::text::ChatTemplate parsed, eredu::text::ChatTemplate::parse(source));
  auto chat_template = std::make_shared<const eredu::text::ChatTemplate>(std::move(parsed));
  const auto text_of = [&](std::optional<eredu::text::TokenId> id) {
    if (!id) return std::string();
    auto text = tokenizer.token_text(*id);
    return text ? std::string(*text) : std::string();
  };
  std::string bos = text_of(tokenizer.special_tokens().bos);
  std::string eos = text_of(tokenizer.special_tokens().eos);
  return eredu::chat::RenderConversation(
      [chat_template, bos, eos](const eredu::chat::Messages& messages, bool add_prompt) {
        eredu::text::ChatRenderInput input;
        input.messages = messages;
        input.add_generation_prompt = add_prompt;
        input.bos_token = bos;
        input.eos_token = eos;
        return chat_template->render(input);
      });
}

inline std::atomic<eredu::generation::CancellationToken*> g_chat_cancel{nullptr};
extern "C" inline void on_chat_interrupt(int /*signal*/) {
  if (auto* cancel = g_chat_cancel.load()) cancel->request_stop();
}

// Runs the chat; returns the process exit code.
template <typename Backend>
int run_chat(const ChatOptions& options, eredu::runtime::ModelRuntime<Backend>& runtime,
             std::shared_ptr<const eredu::text::Tokenizer> tokenizer,
             const eredu::checkpoint::GgufContents& gguf) {
  const auto error_exit = [](const std::string& message) {
    std::fprintf(stderr, "eredu-run: error: %s\n", message.c_str());
    return 2;
  };
  auto source = chat_template_source(options, gguf);
  if (!source) return error_exit(source.error().what());
  auto render = make_renderer(*source, *tokenizer);
  if (!render) {
    // "FILE:LINE:COL: message", as compilers say it (the engine's message starts LINE:COL).
    const std::string where = options.template_file.value_or(
        gguf.path() + " " + std::string(eredu::text::kChatTemplateKey));
    return error_exit("chat template " + where + ":" + render.error().message());
  }
  auto chat = eredu::chat::ChatSession<Backend>::create(runtime, tokenizer, std::move(*render),
                                                        options.system);
  if (!chat) return error_exit(chat.error().what());

  eredu::chat::ChatTurnOptions turn;
  turn.sampling = options.sampling;
  turn.max_tokens = options.max_tokens;
  eredu::generation::CancellationToken cancel;
  const bool interactive = !options.single_turn && ::isatty(STDIN_FILENO) != 0;
  int n_turn = 0;
  std::string line;
  while (true) {
    if (options.single_turn) {
      if (n_turn == 1) break;
      line = *options.single_turn;
    } else {
      if (interactive) {
        std::fputs("> ", stdout);
        std::fflush(stdout);
      }
      if (!std::getline(std::cin, line)) break;  // Ctrl-D / end of input
      if (line.empty()) continue;
    }
    ++n_turn;
    cancel.reset();
    g_chat_cancel.store(&cancel);
    std::signal(SIGINT, on_chat_interrupt);
    auto reply = chat->reply(line, turn, cancel, [](std::string_view text) {
      std::fwrite(text.data(), 1, text.size(), stdout);
      std::fflush(stdout);
    });
    std::signal(SIGINT, SIG_DFL);
    g_chat_cancel.store(nullptr);
    std::fputs("\n", stdout);
    std::fflush(stdout);
    if (!reply) return error_exit(reply.error().what());
    const auto& r = reply->result;
    std::fprintf(stderr,
                 "eredu-run: turn %d: prompt %zu tokens (%zu from the cache, %zu evaluated), "
                 "reply %zu tokens (%.1f tokens/s); finish: %s\n",
                 n_turn, reply->prompt_tokens, reply->reused_positions,
                 reply->prompt_tokens - reply->reused_positions, r.tokens.size(),
                 r.timings.generation_tokens_per_second(),
                 std::string(eredu::generation::to_string(r.finish_reason)).c_str());
  }
  return 0;
}

}  // namespace eredu_run
