// eredu-inspect PATH [--json] [--max-array N] [--max-string N] [--tensors|--no-tensors]
// eredu-inspect --devices [--json]
//
// --devices lists every device of every backend built into the binary (see devices.hpp); a
// backend without a device (no Vulkan driver, say) is a line in the listing, exit code 0.
//
// Prints what a checkpoint holds and whether it is valid. Exit codes: 0 valid; 2 for a malformed
// or missing input and for usage errors, with exactly one line on stderr; 1 when the output could
// not be written.

#include <CLI/CLI.hpp>

#include <cstdio>
#include <exception>
#include <iostream>
#include <mutex>
#include <new>
#include <string>
#include <vector>

#include "devices.hpp"
#include "eredu/core/log.hpp"
#include "inspect.hpp"
#include "output.hpp"

namespace {

constexpr int kExitOk = 0;
constexpr int kExitOutputFailed = 1;
constexpr int kExitBadInput = 2;

// One line on stderr, whatever the message holds (paths and names may contain newlines).
int fail_with(std::string_view message) {
  const std::string line = "eredu-inspect: " + eredu::inspect::escape_control(message) + "\n";
  std::fwrite(line.data(), 1, line.size(), stderr);
  return kExitBadInput;
}

// The readers log what they accept but find odd (trailing bytes, small alignments); those lines
// belong to the report, not to stderr, so that an error is always the only line there.
class WarningCollector {
 public:
  WarningCollector() {
    eredu::log::set_level(eredu::log::Level::kWarn);
    eredu::log::set_sink([this](eredu::log::Level, std::string_view message) {
      const std::lock_guard lock(mutex_);
      warnings_.emplace_back(message);
    });
  }
  ~WarningCollector() { eredu::log::set_sink({}); }
  WarningCollector(const WarningCollector&) = delete;
  WarningCollector& operator=(const WarningCollector&) = delete;

  std::vector<std::string> take() {
    const std::lock_guard lock(mutex_);
    return std::move(warnings_);
  }

 private:
  std::mutex mutex_;
  std::vector<std::string> warnings_;
};

bool write_stdout(const std::string& text) {
  return std::fwrite(text.data(), 1, text.size(), stdout) == text.size() &&
         std::fflush(stdout) == 0;
}

// --devices: the listing on stdout; the backends' own log lines (driver probing) stay off stderr.
int print_devices(bool json) {
  WarningCollector quiet;
  const auto backends = eredu::inspect::list_devices();
  const std::string text =
      json ? eredu::inspect::render_devices_json(backends).dump(
                 2, ' ', false, nlohmann::ordered_json::error_handler_t::replace) +
                 "\n"
           : eredu::inspect::render_devices_text(backends);
  if (!write_stdout(text)) {
    std::fputs("eredu-inspect: cannot write the output\n", stderr);
    return kExitOutputFailed;
  }
  return kExitOk;
}

int run(int argc, char** argv) {
  CLI::App app{
      "Prints what a GGUF file (any shard of a split set), a .safetensors file or a SafeTensors "
      "model directory holds: container, metadata, tensors, totals per encoding, and whether it "
      "is valid.",
      "eredu-inspect"};
  std::string path;
  bool json = false;
  bool show_tensors = true;
  eredu::inspect::OutputOptions options;
  bool devices = false;
  auto* path_option =
      app.add_option("path", path, "GGUF file, .safetensors file, index.json or model directory");
  app.add_flag("--devices", devices,
               "list every device of every built backend with its capabilities (no PATH)")
      ->excludes(path_option);
  app.add_flag("--json", json, "print one JSON object instead of text");
  app.add_option("--max-array", options.limits.max_array,
                 "array elements shown per metadata value (default 8)")
      ->check(CLI::Range(std::uint64_t{0}, std::uint64_t{1} << 32));
  app.add_option("--max-string", options.limits.max_string,
                 "bytes shown of a metadata string before it is cut (default 96)")
      ->check(CLI::Range(std::uint64_t{0}, std::uint64_t{1} << 32));
  app.add_flag("--tensors,!--no-tensors", show_tensors, "print the tensor table (default on)");

  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp&) {
    return write_stdout(app.help()) ? kExitOk : kExitOutputFailed;
  } catch (const CLI::ParseError& e) {
    return fail_with(std::string("usage error: ") + e.what() + " (see --help)");
  }
  options.tensors = show_tensors;
  if (devices) return print_devices(json);
  if (path.empty()) return fail_with("usage error: a path is required (or --devices; see --help)");

  WarningCollector warnings;
  auto report = eredu::inspect::inspect_path(path);
  if (!report) return fail_with(report.error().what());
  report->verdict.warnings = warnings.take();

  std::string text;
  if (json) {
    text = eredu::inspect::render_json(*report, options)
               .dump(2, ' ', false, nlohmann::ordered_json::error_handler_t::replace);
    text += '\n';
  } else {
    text = eredu::inspect::render_text(*report, options);
  }
  if (!write_stdout(text)) {
    std::fputs("eredu-inspect: cannot write the output\n", stderr);
    return kExitOutputFailed;
  }
  return kExitOk;
}

}  // namespace

int main(int argc, char** argv) {
  // Nothing escapes: an allocation failure or any other exception is one line and exit code 2.
  try {
    return run(argc, argv);
  } catch (const std::bad_alloc&) {
    return fail_with("out of memory");
  } catch (const std::exception& e) {
    return fail_with(std::string("internal error: ") + e.what());
  } catch (...) {
    return fail_with("internal error: unknown exception");
  }
}
