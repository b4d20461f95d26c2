// ChatSession on the CPU backend with stories260K: a later turn evaluates only what the cache does
// not hold, and its reply is exactly the greedy reply of a fresh sequence on the whole rendered
// conversation (caching never changes the output); the turn end is found from the template; a
// failed turn leaves the conversation unchanged.
#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

#include "eredu/backends/cpu/cpu_backend.hpp"
#include "eredu/chat/chat_format.hpp"
#include "eredu/chat/chat_session.hpp"
#include "eredu/checkpoint/gguf_source.hpp"
#include "eredu/generation/text_generation.hpp"
#include "eredu/runtime/load_model.hpp"
#include "eredu/text/gguf_tokenizer.hpp"
#include "shared_data.hpp"

namespace {

using eredu::cpu::CpuBackend;
using eredu::cpu::CpuBackendOptions;
using eredu::generation::TokenId;
using Runtime = eredu::runtime::ModelRuntime<CpuBackend>;

// A plain-text chat format: every message on its own line, an assistant turn opens with "Story:"
// (the generation prompt) and ends with </s>.
eredu::Result<std::string> render(const eredu::chat::Messages& messages, bool add_prompt) {
  std::string out = "<s>";
  for (const auto& m : messages) {
    const std::string role = m.at("role").get<std::string>();
    const std::string content = m.at("content").get<std::string>();
    if (role == "assistant") {
      out += "Story:" + content + "</s>\n";
    } else {
      out += content + "\n";
    }
  }
  if (add_prompt) out += "Story:";
  return out;
}

struct Model {
  std::shared_ptr<const eredu::text::Tokenizer> tokenizer;
  std::optional<Runtime> runtime;
};

Model load(const std::filesystem::path& path) {
  Model model;
  auto gguf = eredu::checkpoint::GgufCheckpointSource::open(path);
  EXPECT_TRUE(gguf.has_value());
  auto tokenizer = eredu::text::make_tokenizer_from_gguf(gguf->primary());
  EXPECT_TRUE(tokenizer.has_value());
  model.tokenizer = *tokenizer;
  auto runtime = eredu::runtime::load_model(CpuBackend(CpuBackendOptions{2}), path, {});
  EXPECT_TRUE(runtime.has_value()) << runtime.error().what();
  model.runtime.emplace(std::move(runtime).value());
  return model;
}

// The greedy reply of a new sequence on `prompt` (no cache reuse).
std::vector<TokenId> fresh_reply(Runtime& runtime, std::vector<TokenId> prompt,
                                 std::vector<TokenId> eos, std::int64_t max_tokens) {
  eredu::generation::TextGenerationRequest request;
  request.prompt = std::move(prompt);
  request.eos_ids = std::move(eos);
  request.max_tokens = max_tokens;
  auto generation = eredu::generation::TextGeneration<CpuBackend>::create(runtime, request);
  EXPECT_TRUE(generation.has_value());
  eredu::generation::CancellationToken cancel;
  auto result = generation->run(
      cancel, [](TokenId) -> eredu::Result<std::string> { return std::string(); },
      [](std::string_view) {});
  EXPECT_TRUE(result.has_value());
  return result->tokens;
}

TEST(ChatSession, TurnEndOfTheTemplateIsItsEndOfSequenceToken) {
  const auto path = eredu::testing::models_dir() / "stories260K.gguf";
  EREDU_REQUIRE_SHARED_PATH(path);
  Model model = load(path);
  auto end = eredu::chat::find_turn_end(render, *model.tokenizer);
  ASSERT_TRUE(end.has_value()) << end.error().what();
  ASSERT_EQ(end->token_ids.size(), 1u);
  EXPECT_EQ(end->token_ids[0], *model.tokenizer->special_tokens().eos);
  EXPECT_TRUE(end->stop_strings.empty());
}

TEST(ChatSession, RenderedBosTextIsTheBosTokenNotADoubledOne) {
  const auto path = eredu::testing::models_dir() / "stories260K.gguf";
  EREDU_REQUIRE_SHARED_PATH(path);
  Model model = load(path);
  auto ids = eredu::chat::tokenize_rendered(*model.tokenizer, "<s>Hello");
  ASSERT_TRUE(ids.has_value());
  auto plain = model.tokenizer->encode("Hello", {.add_bos = true});
  ASSERT_TRUE(plain.has_value());
  EXPECT_EQ(*ids, *plain);
}

TEST(ChatSession, LaterTurnsReuseTheCacheAndReplyAsAFreshSequenceWould) {
  const auto path = eredu::testing::models_dir() / "stories260K.gguf";
  EREDU_REQUIRE_SHARED_PATH(path);
  Model chat_model = load(path);
  Model reference = load(path);
  auto chat = eredu::chat::ChatSession<CpuBackend>::create(
      *chat_model.runtime, chat_model.tokenizer, render, "A story.");
  ASSERT_TRUE(chat.has_value()) << chat.error().what();
  eredu::chat::ChatTurnOptions options;
  options.max_tokens = 24;
  eredu::generation::CancellationToken cancel;
  const std::vector<TokenId> eos{*chat_model.tokenizer->special_tokens().eos};
  std::size_t previous_prompt = 0;
  for (const char* user : {"Tell me about Lily.", "What did the dog do?", "And then?"}) {
    // The reference prompt: the conversation with this user turn, rendered and tokenized.
    eredu::chat::Messages messages = chat->messages();
    messages.push_back({{"role", "user"}, {"content", user}});
    auto rendered = render(messages, true);
    auto prompt = eredu::chat::tokenize_rendered(*reference.tokenizer, *rendered);
    ASSERT_TRUE(prompt.has_value());
    const auto expected = fresh_reply(*reference.runtime, *prompt, eos, options.max_tokens);

    std::string streamed;
    auto reply = chat->reply(user, options, cancel, [&](std::string_view t) { streamed += t; });
    ASSERT_TRUE(reply.has_value()) << reply.error().what();
    EXPECT_EQ(reply->result.tokens, expected) << "turn: " << user;
    EXPECT_EQ(reply->prompt_tokens, prompt->size());
    EXPECT_EQ(reply->result.text, streamed);
    EXPECT_EQ(chat->messages().back().at("content").get<std::string>(), streamed);
    if (previous_prompt == 0) {
      EXPECT_EQ(reply->reused_positions, 0u);
    } else {
      // At least the whole previous prompt is shared (the template renders earlier turns the same
      // way); the re-tokenized reply may differ from the sampled tokens where pieces join.
      EXPECT_GE(reply->reused_positions, previous_prompt) << "turn: " << user;
      EXPECT_LT(reply->reused_positions, prompt->size());
    }
    previous_prompt = prompt->size();
    EXPECT_EQ(chat->cached_tokens().size(), prompt->size() + reply->result.tokens.size() - 1);
  }
  EXPECT_EQ(chat->messages().size(), 7u);  // system + 3 x (user, assistant)
}

TEST(ChatSession, ATurnThatDoesNotFitTheContextFailsAndLeavesTheConversation) {
  const auto path = eredu::testing::models_dir() / "stories260K.gguf";
  EREDU_REQUIRE_SHARED_PATH(path);
  Model model = load(path);
  auto chat = eredu::chat::ChatSession<CpuBackend>::create(*model.runtime, model.tokenizer, render);
  ASSERT_TRUE(chat.has_value());
  eredu::generation::CancellationToken cancel;
  eredu::chat::ChatTurnOptions options;
  options.max_tokens = 4;
  ASSERT_TRUE(chat->reply("Hi.", options, cancel, [](std::string_view) {}).has_value());
  const auto before = chat->messages();
  std::string huge;
  for (int i = 0; i < 3000; ++i)
    huge += "dog ";
  auto failed = chat->reply(huge, options, cancel, [](std::string_view) {});
  ASSERT_FALSE(failed.has_value());
  EXPECT_NE(failed.error().what().find("context"), std::string::npos) << failed.error().what();
  EXPECT_EQ(chat->messages(), before);
  // The next turn still works (and the cache of the first turn is still usable).
  auto next = chat->reply("Bye.", options, cancel, [](std::string_view) {});
  ASSERT_TRUE(next.has_value()) << next.error().what();
  EXPECT_GT(next->reused_positions, 0u);
}

}  // namespace
