// eredu-template end to end: the rendered bytes equal Python jinja2's render of the same template
// and context (data/expected.txt, written by make_expected.py in Hugging Face's environment), and
// bad templates or render errors exit 2 with FILE:LINE:COLUMN: on stderr.
#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <atomic>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "shared_data.hpp"

extern char** environ;

namespace {

namespace fs = std::filesystem;

struct CliRun {
  int exit_code = -1;
  std::string out;
  std::string err;
};

std::string read_text(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

fs::path data_dir() {
  return fs::path(EREDU_SOURCE_DIR) / "tests/e2e/template/data";
}

CliRun run_template(std::vector<std::string> args) {
  static std::atomic<int> counter{0};
  const fs::path dir = fs::temp_directory_path();
  const std::string stem = "eredu-template-run-" + std::to_string(::getpid()) + "-" +
                           std::to_string(counter.fetch_add(1));
  const fs::path out_path = dir / (stem + ".out");
  const fs::path err_path = dir / (stem + ".err");
  args.insert(args.begin(), EREDU_TEMPLATE_BINARY);
  std::vector<char*> argv;
  for (std::string& arg : args)
    argv.push_back(arg.data());
  argv.push_back(nullptr);
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, STDOUT_FILENO, out_path.c_str(),
                                   O_WRONLY | O_CREAT | O_TRUNC, 0600);
  posix_spawn_file_actions_addopen(&actions, STDERR_FILENO, err_path.c_str(),
                                   O_WRONLY | O_CREAT | O_TRUNC, 0600);
  CliRun run;
  pid_t pid = 0;
  const int spawned = posix_spawn(&pid, argv[0], &actions, nullptr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  if (spawned != 0) {
    ADD_FAILURE() << "cannot start " << argv[0] << ": error " << spawned;
    return run;
  }
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0) {
  }
  if (WIFEXITED(status)) run.exit_code = WEXITSTATUS(status);
  run.out = read_text(out_path);
  run.err = read_text(err_path);
  fs::remove(out_path);
  fs::remove(err_path);
  return run;
}

#define REQUIRE_TEMPLATE_BINARY()                                                             \
  do {                                                                                        \
    if (std::string(EREDU_TEMPLATE_BINARY).empty()) {                                         \
      GTEST_SKIP() << "eredu-template is not built (configure with EREDU_BUILD_EXAMPLES=ON)"; \
    }                                                                                         \
  } while (false)

TEST(TemplateCli, RendersLikeJinja2ByteForByte) {
  REQUIRE_TEMPLATE_BINARY();
  const CliRun run = run_template({"--template", (data_dir() / "chat.jinja").string(), "--context",
                                   (data_dir() / "context.json").string(), "--now", "1741944413"});
  EXPECT_EQ(run.exit_code, 0) << run.err;
  EXPECT_EQ(run.out, read_text(data_dir() / "expected.txt"));
  EXPECT_EQ(run.err, "");
}

TEST(TemplateCli, RendersASharedChatTemplateLikeTheGolden) {
  REQUIRE_TEMPLATE_BINARY();
  const fs::path templ =
      eredu::testing::testdata_dir() / "chat-templates/Qwen-Qwen2.5-7B-Instruct.jinja";
  EREDU_REQUIRE_SHARED_PATH(templ);
  const fs::path reference = fs::path(EREDU_SOURCE_DIR) / "tests/reference/chat_templates";
  const auto spec = nlohmann::ordered_json::parse(read_text(reference / "scenarios.json"));
  const auto golden =
      nlohmann::ordered_json::parse(read_text(reference / "golden/Qwen-Qwen2.5-7B-Instruct.json"));
  const auto& scenario = spec["scenarios"][0];
  nlohmann::ordered_json context = {{"messages", scenario["messages"]},
                                    {"tools", nullptr},
                                    {"add_generation_prompt", scenario["add_generation_prompt"]},
                                    {"bos_token", spec["bos_token"]},
                                    {"eos_token", spec["eos_token"]}};
  const fs::path context_path =
      fs::temp_directory_path() / ("eredu-template-ctx-" + std::to_string(::getpid()) + ".json");
  std::ofstream(context_path) << context.dump();
  const CliRun run =
      run_template({"--template", templ.string(), "--context", context_path.string()});
  fs::remove(context_path);
  EXPECT_EQ(run.exit_code, 0) << run.err;
  EXPECT_EQ(run.out, golden[scenario["name"].get<std::string>()]["output"].get<std::string>());
}

TEST(TemplateCli, SyntaxErrorExitsTwoWithFileLineColumn) {
  REQUIRE_TEMPLATE_BINARY();
  const fs::path templ = data_dir() / "syntax_error.jinja";
  const CliRun run = run_template({"--template", templ.string()});
  EXPECT_EQ(run.exit_code, 2);
  EXPECT_EQ(run.out, "");
  // jinja2 reports this template's error on line 3 too ("unexpected 'end of print statement'").
  EXPECT_EQ(run.err.rfind(templ.string() + ":3:15: ", 0), 0u) << run.err;
}

TEST(TemplateCli, RaiseExceptionExitsTwoWithItsMessageAndPosition) {
  REQUIRE_TEMPLATE_BINARY();
  const fs::path templ = data_dir() / "chat.jinja";
  const CliRun run = run_template(
      {"--template", templ.string(), "--context", (data_dir() / "bad_role.json").string()});
  EXPECT_EQ(run.exit_code, 2);
  EXPECT_EQ(run.err, templ.string() + ":18:13: raise_exception: unknown role robot\n");
}

TEST(TemplateCli, ContextThatIsNotAJsonObjectExitsTwo) {
  REQUIRE_TEMPLATE_BINARY();
  const fs::path bad =
      fs::temp_directory_path() / ("eredu-template-bad-" + std::to_string(::getpid()) + ".json");
  std::ofstream(bad) << "[1, 2";
  const CliRun run =
      run_template({"--template", (data_dir() / "chat.jinja").string(), "--context", bad.string()});
  fs::remove(bad);
  EXPECT_EQ(run.exit_code, 2);
  EXPECT_NE(run.err.find("JSON object"), std::string::npos) << run.err;
}

TEST(TemplateCli, MissingTemplateFileExitsOne) {
  REQUIRE_TEMPLATE_BINARY();
  const CliRun run = run_template({"--template", "/nonexistent/x.jinja"});
  EXPECT_EQ(run.exit_code, 1);
  EXPECT_NE(run.err.find("cannot read"), std::string::npos) << run.err;
}

}  // namespace
