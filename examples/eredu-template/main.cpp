// eredu-template: renders a Jinja template with the variables of a JSON object, as a chat
// template would be rendered for a model. Errors name the template file, line and column.

#include <chrono>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <optional>
#include <sstream>
#include <string>

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include "eredu/jinja/json.hpp"
#include "eredu/jinja/template.hpp"

namespace {

constexpr int kExitBadInput = 2;
constexpr int kExitIo = 1;

std::optional<std::string> read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return std::nullopt;
  std::ostringstream text;
  text << in.rdbuf();
  if (in.bad()) return std::nullopt;
  return text.str();
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"Render a Jinja (chat) template with eredu's sandboxed engine"};
  std::string template_path;
  std::string context_path;
  std::optional<long long> now_seconds;
  app.add_option("--template", template_path, "the template file (.jinja)")->required();
  app.add_option("--context", context_path,
                 "a JSON object whose keys are the template's variables");
  app.add_option("--now", now_seconds, "the clock strftime_now reads, in seconds since 1970 UTC");
  CLI11_PARSE(app, argc, argv);

  const auto source = read_file(template_path);
  if (!source) {
    std::cerr << template_path << ": cannot read the template file\n";
    return kExitIo;
  }
  eredu::jinja::RenderInput input;
  if (!context_path.empty()) {
    const auto text = read_file(context_path);
    if (!text) {
      std::cerr << context_path << ": cannot read the context file\n";
      return kExitIo;
    }
    const auto context = nlohmann::ordered_json::parse(*text, nullptr, /*allow_exceptions=*/false);
    if (context.is_discarded() || !context.is_object()) {
      std::cerr << context_path << ": the context must be a JSON object\n";
      return kExitBadInput;
    }
    for (const auto& [key, value] : context.items()) {
      input.variables.emplace_back(key, eredu::jinja::from_json(value));
    }
  }
  if (now_seconds) {
    const auto now = std::chrono::system_clock::time_point(std::chrono::seconds(*now_seconds));
    input.clock = [now] { return now; };
  }

  // Error messages start with "LINE:COLUMN: ", so FILE: before them reads as a compiler's.
  const auto parsed = eredu::jinja::Template::parse(*source);
  if (!parsed.has_value()) {
    std::cerr << template_path << ":" << parsed.error().message() << "\n";
    return kExitBadInput;
  }
  const auto rendered = parsed->render(input);
  if (!rendered.has_value()) {
    std::cerr << template_path << ":" << rendered.error().message() << "\n";
    return kExitBadInput;
  }
  std::fwrite(rendered->data(), 1, rendered->size(), stdout);
  return std::fflush(stdout) == 0 ? 0 : kExitIo;
}
