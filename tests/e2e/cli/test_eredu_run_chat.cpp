// eredu-run --chat on a copy of stories260K that carries a tokenizer.chat_template: a multi-turn
// conversation from stdin, each later turn evaluating only what the cache lacks; a one-turn chat
// (-cnv -p) whose reply is exactly the greedy continuation of the rendered prompt (checked with
// plain eredu-run); and the errors of a model without a template and of a broken template.
#include <gtest/gtest.h>

#include <fstream>
#include <regex>
#include <string>

#include "cli_support.hpp"
#include "gguf_copy.hpp"

namespace eredu::cli_tests {
namespace {

// Every message on its own line; an assistant turn opens with "Story:" and ends with EOS.
constexpr const char* kTemplate =
    "{{ bos_token }}{% for message in messages %}{% if message['role'] == 'assistant' %}"
    "Story:{{ message['content'] }}{{ eos_token }}\n"
    "{% else %}{{ message['content'] }}\n"
    "{% endif %}{% endfor %}{% if add_generation_prompt %}Story:{% endif %}";

std::filesystem::path chat_model() {
  const auto path = scratch_dir() / "stories260K-chat.gguf";
  if (!std::filesystem::exists(path)) {
    auto copied = eredu::testing::copy_gguf_with_metadata(
        stories_model(), path,
        {{"tokenizer.chat_template", checkpoint::GgufValue(std::string(kTemplate))}});
    EXPECT_TRUE(copied.has_value()) << copied.error().what();
  }
  return path;
}

std::filesystem::path write_file(const std::string& name, const std::string& text) {
  const auto path = scratch_dir() / name;
  std::ofstream(path, std::ios::binary) << text;
  return path;
}

TEST(EreduRunChat, HoldsAMultiTurnConversationReusingTheCachedPrefix) {
  EREDU_REQUIRE_EREDU_RUN();
  EREDU_REQUIRE_SHARED_PATH(stories_model());
  const auto input = write_file("turns.txt", "Lily and the dog.\n\nWhat happened next?\nBye.\n");
  const auto r =
      run_eredu({"-m", chat_model().string(), "--chat", "--temp", "0", "-n", "24", "-t", "2"},
                input.string());
  ASSERT_EQ(r.exit_code, 0) << r.err;
  // Three turns (the empty line is skipped), each on stderr with its cache use.
  const std::regex turn(R"(turn (\d+): prompt (\d+) tokens \((\d+) from the cache)");
  std::vector<std::pair<int, int>> turns;  // (prompt tokens, from the cache)
  for (auto it = std::sregex_iterator(r.err.begin(), r.err.end(), turn);
       it != std::sregex_iterator(); ++it) {
    turns.emplace_back(std::stoi((*it)[2]), std::stoi((*it)[3]));
  }
  ASSERT_EQ(turns.size(), 3u) << r.err;
  EXPECT_EQ(turns[0].second, 0);
  for (std::size_t i = 1; i < turns.size(); ++i) {
    // At least the whole previous prompt is reused; the prompt grows with the conversation.
    EXPECT_GE(turns[i].second, turns[i - 1].first) << r.err;
    EXPECT_LT(turns[i].second, turns[i].first) << r.err;
  }
  // One reply line per turn on stdout, none of them empty.
  std::vector<std::string> lines;
  std::string line;
  for (const char c : r.out) {
    if (c == '\n') {
      lines.push_back(line);
      line.clear();
    } else {
      line += c;
    }
  }
  ASSERT_GE(lines.size(), 3u) << r.out;
}

TEST(EreduRunChat, OneTurnReplyIsTheGreedyContinuationOfTheRenderedPrompt) {
  EREDU_REQUIRE_EREDU_RUN();
  EREDU_REQUIRE_SHARED_PATH(stories_model());
  const auto chat = run_eredu({"-m", chat_model().string(), "-cnv", "-p", "Lily and the dog.",
                               "--temp", "0", "-n", "30", "-t", "2"});
  ASSERT_EQ(chat.exit_code, 0) << chat.err;
  // The template renders "<s>Lily and the dog.\nStory:"; plain eredu-run adds the BOS itself.
  const std::string rendered = "Lily and the dog.\nStory:";
  const auto plain = run_eredu(
      {"-m", stories_model().string(), "-p", rendered, "--temp", "0", "-n", "30", "-t", "2"});
  ASSERT_EQ(plain.exit_code, 0) << plain.err;
  ASSERT_EQ(plain.out.rfind(rendered, 0), 0u) << plain.out;
  EXPECT_EQ(chat.out, plain.out.substr(rendered.size()));
  EXPECT_FALSE(chat.out.empty());
}

TEST(EreduRunChat, ATemplateFileOverridesTheModelsTemplate) {
  EREDU_REQUIRE_EREDU_RUN();
  EREDU_REQUIRE_SHARED_PATH(stories_model());
  const auto file = write_file("plain.jinja",
                               "{% for m in messages %}{{ m['content'] }}\n{% endfor %}"
                               "{% if add_generation_prompt %}Once upon a time{% endif %}");
  const auto r = run_eredu({"-m", stories_model().string(), "--chat", "--chat-template-file",
                            file.string(), "-p", "Lily", "--temp", "0", "-n", "8", "-t", "2"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto plain = run_eredu({"-m", stories_model().string(), "-p", "Lily\nOnce upon a time",
                                "--temp", "0", "-n", "8", "-t", "2"});
  ASSERT_EQ(plain.exit_code, 0) << plain.err;
  EXPECT_EQ(r.out, plain.out.substr(std::string("Lily\nOnce upon a time").size()));
}

TEST(EreduRunChat, AModelWithoutATemplateIsAnErrorNamingTheKeyAndTheFlag) {
  EREDU_REQUIRE_EREDU_RUN();
  EREDU_REQUIRE_SHARED_PATH(stories_model());
  const auto r = run_eredu({"-m", stories_model().string(), "--chat", "-p", "Hi"});
  expect_one_error_line(r, "tokenizer.chat_template");
  EXPECT_NE(r.err.find("--chat-template-file"), std::string::npos) << r.err;
}

TEST(EreduRunChat, ABrokenTemplateIsAnErrorWithItsLineAndColumn) {
  EREDU_REQUIRE_EREDU_RUN();
  EREDU_REQUIRE_SHARED_PATH(stories_model());
  const auto file = write_file("broken.jinja", "Hello\n{% for m in messages %}{{ m.content }\n");
  const auto r = run_eredu(
      {"-m", stories_model().string(), "--chat", "--chat-template-file", file.string(), "-p", "x"});
  expect_one_error_line(r, "broken.jinja:2:");
}

TEST(EreduRunChat, SystemAndTemplateFlagsNeedChat) {
  EREDU_REQUIRE_EREDU_RUN();
  const auto r = run_eredu({"-m", "x.gguf", "-p", "hi", "--system", "be brief"});
  expect_one_error_line(r, "--system need --chat");
}

}  // namespace
}  // namespace eredu::cli_tests
