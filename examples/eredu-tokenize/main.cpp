// eredu-tokenize -m FILE [--no-bos] [--parse-special] [--ids | --pieces] (-p TEXT | -f FILE)
//
// Tokenizes TEXT (or FILE's bytes, exactly, final newline included) with the tokenizer of the
// GGUF file and prints, by default, one "id -> 'piece'" line per token as llama-tokenize does;
// --ids prints the ids space-separated on one line; --pieces prints each piece on a line.
// BOS (and EOS) are added when the vocabulary asks for them, unless --no-bos. Control tokens'
// text in the input is plain text unless --parse-special.
//
// Exit codes: 0 success; 2 for bad input or usage, with exactly one line on stderr; 1 when the
// output could not be written.

#include <CLI/CLI.hpp>

#include <cstdio>
#include <exception>
#include <fstream>
#include <iterator>
#include <new>
#include <string>

#include "eredu/checkpoint/gguf.hpp"
#include "eredu/core/log.hpp"
#include "eredu/text/gguf_tokenizer.hpp"

namespace {

constexpr int kExitOk = 0;
constexpr int kExitOutputFailed = 1;
constexpr int kExitBadInput = 2;

// One line on stderr: control characters in the message become spaces.
int fail_with(std::string message) {
  for (char& c : message) {
    if (static_cast<unsigned char>(c) < 0x20) c = ' ';
  }
  const std::string line = "eredu-tokenize: " + message + "\n";
  std::fwrite(line.data(), 1, line.size(), stderr);
  return kExitBadInput;
}

int run(int argc, char** argv) {
  CLI::App app{"Tokenize text with the tokenizer of a GGUF file", "eredu-tokenize"};
  std::string model_path;
  std::string prompt;
  std::string file_path;
  bool no_bos = false;
  bool parse_special = false;
  bool ids_only = false;
  bool pieces_only = false;
  app.add_option("-m,--model", model_path, "GGUF file holding the tokenizer")->required();
  auto* prompt_opt = app.add_option("-p,--prompt", prompt, "text to tokenize");
  auto* file_opt = app.add_option("-f,--file", file_path, "file whose bytes are tokenized");
  prompt_opt->excludes(file_opt);
  app.add_flag("--no-bos", no_bos, "do not add BOS/EOS even when the vocabulary asks for them");
  app.add_flag("--parse-special", parse_special, "recognise control-token text in the input");
  auto* ids_opt = app.add_flag("--ids", ids_only, "print only the ids, on one line");
  auto* pieces_opt = app.add_flag("--pieces", pieces_only, "print only the pieces, one per line");
  ids_opt->excludes(pieces_opt);
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    return fail_with(e.what());
  }
  if (prompt_opt->count() == 0 && file_opt->count() == 0) {
    return fail_with("give the text with -p TEXT or -f FILE");
  }

  std::string text = prompt;
  if (file_opt->count() > 0) {
    std::ifstream in(file_path, std::ios::binary);
    if (!in) return fail_with("cannot open '" + file_path + "'");
    text.assign(std::istreambuf_iterator<char>(in), {});
    if (in.bad()) return fail_with("cannot read '" + file_path + "'");
  }

  eredu::log::set_level(eredu::log::Level::kError);  // warnings would be a second stderr line
  const auto file = eredu::checkpoint::GgufFile::open(model_path);
  if (!file) return fail_with(file.error().what());
  const auto tokenizer = eredu::text::make_tokenizer_from_gguf(file->contents());
  if (!tokenizer) return fail_with(tokenizer.error().what());
  const auto ids =
      (*tokenizer)
          ->encode(text, {.add_bos = !no_bos, .add_eos = !no_bos, .parse_special = parse_special});
  if (!ids) return fail_with(ids.error().what());

  std::string out;
  if (ids_only) {
    for (std::size_t i = 0; i < ids->size(); ++i) {
      if (i > 0) out += ' ';
      out += std::to_string((*ids)[i]);
    }
    out += '\n';
  } else {
    for (const auto id : *ids) {
      const auto piece = (*tokenizer)->token_to_piece(id, /*render_special=*/true);
      if (!piece) return fail_with(piece.error().what());
      if (pieces_only) {
        out += *piece + "\n";
      } else {
        char number[16];
        std::snprintf(number, sizeof number, "%6d", static_cast<int>(id));
        out += std::string(number) + " -> '" + *piece + "'\n";
      }
    }
  }
  if (std::fwrite(out.data(), 1, out.size(), stdout) != out.size() || std::fflush(stdout) != 0) {
    std::fputs("eredu-tokenize: cannot write the output\n", stderr);
    return kExitOutputFailed;
  }
  return kExitOk;
}

}  // namespace

int main(int argc, char** argv) {
  try {
    return run(argc, argv);
  } catch (const std::bad_alloc&) {
    return fail_with("out of memory");
  } catch (const std::exception& e) {
    return fail_with(e.what());
  }
}
