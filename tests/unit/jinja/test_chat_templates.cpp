// The 65 real chat templates under ../shared/testdata/chat-templates: each parses, and renders
// every conversation of tests/reference/chat_templates/scenarios.json byte for byte as Python
// jinja2 rendered it the way transformers' apply_chat_template does
// (tests/reference/chat_templates/make_golden.py wrote golden/<template>.json). Where jinja2
// raised for a scenario, the engine must fail too.
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "eredu/checkpoint/gguf.hpp"
#include "eredu/checkpoint/gguf_writer.hpp"
#include "eredu/checkpoint/mapped_file.hpp"
#include "eredu/text/chat_template.hpp"
#include "shared_data.hpp"

namespace eredu::text {
namespace {

using json = nlohmann::ordered_json;

std::filesystem::path templates_dir() {
  return eredu::testing::testdata_dir() / "chat-templates";
}
std::filesystem::path reference_dir() {
  return std::filesystem::path(EREDU_SOURCE_DIR) / "tests/reference/chat_templates";
}

std::string read_file(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

// Template stems, found when the tests are registered; one placeholder when the folder is absent
// (its test then skips and names the folder).
std::vector<std::string> template_names() {
  std::vector<std::string> names;
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator(templates_dir(), ec)) {
    if (entry.path().extension() == ".jinja") names.push_back(entry.path().stem().string());
  }
  std::sort(names.begin(), names.end());
  if (names.empty()) names.push_back("templates_folder_absent");
  return names;
}

std::string test_name(const ::testing::TestParamInfo<std::string>& info) {
  std::string name = info.param;
  for (char& c : name) {
    if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
  }
  return name;
}

// The offset of the first difference, and a few bytes of context on both sides.
std::string describe_mismatch(const std::string& got, const std::string& expected) {
  std::size_t i = 0;
  while (i < got.size() && i < expected.size() && got[i] == expected[i])
    ++i;
  const std::size_t from = i > 40 ? i - 40 : 0;
  return "first difference at byte " + std::to_string(i) + " (got " + std::to_string(got.size()) +
         " bytes, expected " + std::to_string(expected.size()) + ")\n  got:      " +
         json(got.substr(from, 120)).dump(-1, ' ', false, json::error_handler_t::replace) +
         "\n  expected: " +
         json(expected.substr(from, 120)).dump(-1, ' ', false, json::error_handler_t::replace);
}

// Goldens over 16 KiB would be stored as sha256 + length; those are compared by length here (no
// template of the committed set is that large today).
class ChatTemplateFile : public ::testing::TestWithParam<std::string> {
 protected:
  void SetUp() override {
    EREDU_REQUIRE_SHARED_PATH(templates_dir());
    path_ = templates_dir() / (GetParam() + ".jinja");
    ASSERT_TRUE(std::filesystem::exists(path_)) << path_;
  }
  std::filesystem::path path_;
};

TEST_P(ChatTemplateFile, Parses) {
  const auto parsed = ChatTemplate::parse(read_file(path_));
  EXPECT_TRUE(parsed.has_value()) << path_.string() << ":" << parsed.error().message();
}

TEST_P(ChatTemplateFile, RendersEveryScenarioAsJinja2Does) {
  const json spec = json::parse(read_file(reference_dir() / "scenarios.json"));
  const std::filesystem::path golden_path = reference_dir() / "golden" / (GetParam() + ".json");
  ASSERT_TRUE(std::filesystem::exists(golden_path))
      << "no golden for " << GetParam() << ": rerun tests/reference/chat_templates/make_golden.py";
  const json golden = json::parse(read_file(golden_path));
  const auto parsed = ChatTemplate::parse(read_file(path_));
  if (golden.contains("compile_error")) {
    EXPECT_FALSE(parsed.has_value()) << "jinja2: " << golden["compile_error"];
    return;
  }
  ASSERT_TRUE(parsed.has_value()) << parsed.error().what();

  // The date of scenarios.json ("2025-03-14T09:26:53"), as the script's fixed strftime_now.
  const auto fixed_now = std::chrono::system_clock::time_point(std::chrono::seconds(1741944413));
  for (const json& scenario : spec["scenarios"]) {
    const std::string name = scenario["name"];
    SCOPED_TRACE(GetParam() + " / " + name);
    ChatRenderInput input;
    input.messages = scenario["messages"];
    if (scenario["with_tools"].get<bool>()) input.tools = spec["tools"];
    input.add_generation_prompt = scenario["add_generation_prompt"];
    input.bos_token = spec["bos_token"];
    input.eos_token = spec["eos_token"];
    input.clock = [fixed_now] { return fixed_now; };
    const auto rendered = parsed->render(input);
    ASSERT_TRUE(golden.contains(name)) << "golden lacks scenario " << name;
    const json& expected = golden[name];
    if (expected.contains("error")) {
      EXPECT_FALSE(rendered.has_value())
          << "jinja2 raised " << expected["error"] << " but the engine rendered";
      continue;
    }
    ASSERT_TRUE(rendered.has_value()) << path_.string() << ":" << rendered.error().message();
    if (expected.contains("output")) {
      const std::string want = expected["output"];
      EXPECT_TRUE(*rendered == want) << describe_mismatch(*rendered, want);
    } else {
      EXPECT_EQ(rendered->size(), expected["length"].get<std::size_t>());
    }
  }
}

INSTANTIATE_TEST_SUITE_P(SharedTemplates, ChatTemplateFile, ::testing::ValuesIn(template_names()),
                         test_name);

TEST(ChatTemplateRender, ExtraVariablesAndToolsReachTheTemplate) {
  const auto t = ChatTemplate::parse(
      "{{ bos_token }}{% for m in messages %}{{ m.role }}:{{ m.content }};{% endfor %}"
      "{{ tools is none }}|{{ documents is none }}|{{ enable_thinking }}"
      "{% if add_generation_prompt %}>{% endif %}{{ eos_token }}");
  ASSERT_TRUE(t.has_value()) << t.error().what();
  ChatRenderInput input;
  input.messages = json::parse(R"([{"role": "user", "content": "hi"}])");
  input.add_generation_prompt = true;
  input.bos_token = "<s>";
  input.eos_token = "</s>";
  input.extra = json::parse(R"({"enable_thinking": false})");
  const auto r = t->render(input);
  ASSERT_TRUE(r.has_value()) << r.error().what();
  EXPECT_EQ(*r, "<s>user:hi;True|True|False></s>");
}

TEST(ChatTemplateRender, MessagesMustBeJsonArrayOrObject) {
  const auto t = ChatTemplate::parse("x");
  ASSERT_TRUE(t.has_value());
  ChatRenderInput input;
  input.messages = "not a list";
  EXPECT_FALSE(t->render(input).has_value());
}

Result<std::shared_ptr<const checkpoint::GgufContents>> gguf_with(const char* chat_template) {
  checkpoint::GgufWriter writer;
  writer.add_metadata("general.architecture", checkpoint::GgufValue("llama"));
  if (chat_template != nullptr) {
    writer.add_metadata("tokenizer.chat_template", checkpoint::GgufValue(chat_template));
  }
  EREDU_TRY(const checkpoint::GgufImage image, writer.build());
  const auto file = checkpoint::MappedFile::from_bytes(image.bytes, "chat.gguf");
  return checkpoint::parse_gguf_contents(*file);
}

TEST(ChatTemplateGguf, ReadsTokenizerChatTemplate) {
  const auto gguf = gguf_with("{{ messages[0].content }}");
  ASSERT_TRUE(gguf.has_value()) << gguf.error().what();
  const auto source = read_chat_template(**gguf);
  ASSERT_TRUE(source.has_value()) << source.error().what();
  EXPECT_EQ(*source, "{{ messages[0].content }}");
}

TEST(ChatTemplateGguf, MissingKeyIsNotFoundNamingTheKey) {
  const auto gguf = gguf_with(nullptr);
  ASSERT_TRUE(gguf.has_value()) << gguf.error().what();
  const auto source = read_chat_template(**gguf);
  ASSERT_FALSE(source.has_value());
  EXPECT_EQ(source.error().code(), ErrorCode::kNotFound);
  EXPECT_NE(source.error().what().find("tokenizer.chat_template"), std::string::npos);
}

}  // namespace
}  // namespace eredu::text
