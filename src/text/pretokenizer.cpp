// Pretokenizer: the regex lists of llama.cpp's BPE pre-tokenizer types, written as Hugging Face's
// tokenizer.json files write them, compiled once with PCRE2.

#define PCRE2_CODE_UNIT_WIDTH 8
#include "eredu/text/pretokenizer.hpp"

#include <pcre2.h>

#include <algorithm>
#include <array>
#include <new>

namespace eredu::text {
namespace {

// Hugging Face's ByteLevel regex (GPT-2). llama.cpp drops the final `|\s+`; the two split alike
// because unmatched gaps are kept as pieces.
constexpr std::string_view kGpt2 =
    R"('s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+)";
// llama.cpp's spelling without the final `|\s+` (used where llama.cpp chains it after others).
constexpr std::string_view kGpt2NoTail =
    R"('s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S))";
constexpr std::string_view kLlama3 =
    R"((?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+)";
constexpr std::string_view kQwen2 =
    R"((?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+)";
constexpr std::string_view kTekken =
    R"([^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+|[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n/]*|\s*[\r\n]+|\s+(?!\S)|\s+)";
constexpr std::string_view kGpt4o =
    R"([^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+(?i:'s|'t|'re|'ve|'m|'ll|'d)?|[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*(?i:'s|'t|'re|'ve|'m|'ll|'d)?|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n/]*|\s*[\r\n]+|\s+(?!\S)|\s+)";
constexpr std::string_view kPoro = R"( ?[^(\s|.,!?…。，、।۔،)]+)";
constexpr std::string_view kCjk = "[一-龥ࠀ-一가-퟿]+";

constexpr std::array kDefaultList = {std::string_view(R"([\p{P}\$\+<=>\^~\|]+)"), kGpt2NoTail,
                                     std::string_view(R"(\p{N}+)"),
                                     std::string_view("[0-9][0-9][0-9]")};
constexpr std::array kGpt2List = {kGpt2};
constexpr std::array kLlama3List = {kLlama3};
constexpr std::array kQwen2List = {kQwen2};
constexpr std::array kTekkenList = {kTekken};
constexpr std::array kGpt4oList = {kGpt4o};
constexpr std::array kStarcoderList = {std::string_view(R"(\p{N})"), kGpt2};
constexpr std::array kFalconList = {std::string_view(R"([\p{P}\$\+<=>\^~\|`]+)"), kGpt2NoTail,
                                    std::string_view("[0-9][0-9][0-9]")};
// Hugging Face writes six of these code points as literal characters that are canonical
// singletons (U+1F7D, U+1FBE, U+1FD3, U+1FDB, U+2126, U+212A); they are \x{...} escapes here so
// that no editor or tool can NFC-normalize them into other letters (which breaks the ranges).
// clang-format re-splits these multi-byte literals differently on every run:
// clang-format off
constexpr std::array kDeepseekLlmList = {
    std::string_view("[\r\n]"),
    std::string_view(
        "\\s?[A-Za-zµÀ-ÖØ-öø-ƺƼ-ƿǄ-ʓʕ-ʯͰ-ͳͶͷͻ-ͽͿΆ"
        "Έ-ΊΌΎ-ΡΣ-ϵϷ-ҁҊ-ԯԱ-ՖႠ-ჅᎠ-Ᏽᏸ-ᏽᲐ-ᲺᲽ-Ჿᴀ-ᴫᵫ-ᵷ"
        "ᵹ-ᶚḀ-ἕἘ-Ἕἠ-ὅὈ-Ὅὐ-ὗὙὛὝὟ-\\x{1F7D}ᾀ-ᾴᾶ-ᾼ\\x{1FBE}"
        "ῂ-ῄῆ-ῌῐ-\\x{1FD3}ῖ-\\x{1FDB}ῠ-Ῥῲ-ῴῶ-ῼℂℇℊ"
        "-ℓℕℙ-ℝℤ\\x{2126}ℨ\\x{212A}-ℭℯ-ℴℹℼ-ℿⅅ-ⅉⅎↃ"
        "ↄⰀ-ⱻⱾ-ⳤⳫ-ⳮⳲⳳꙀ-ꙭꚀ-ꚛꜢ-ꝯꝱ-ꞇꞋ-ꞎꭰ-ꮿﬀ-ﬆﬓ-ﬗＡ-Ｚａ"
        "-ｚ𐐀-𐑏𐒰-𐓓𐓘-𐓻𐲀-𐲲𐳀-𐳲𑢠-𑣟𞤀-𞥃]+"),
    std::string_view("\\s?[!-/:-~！-／：-～‘-‟　-。]+"),
    std::string_view("\\s+$"),
    kCjk,
    std::string_view(R"(\p{N}+)")};
// clang-format on
constexpr std::array kDeepseekCoderList = {
    std::string_view("[\r\n]"), std::string_view(R"(\s?\p{L}+)"), std::string_view(R"(\s?\p{P}+)"),
    kCjk, std::string_view(R"(\p{N})")};
constexpr std::array kDeepseekV3List = {
    std::string_view(R"(\p{N}{1,3})"), std::string_view("[一-龥぀-ゟ゠-ヿ]+"),
    std::string_view(
        R"([!"#$%&'()*+,\-./:;<=>?@\[\\\]^_`{|}~][A-Za-z]+|[^\r\n\p{L}\p{P}\p{S}]?[\p{L}\p{M}]+| ?[\p{P}\p{S}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+)")};
constexpr std::array kPoroList = {kPoro};
constexpr std::array kVikingList = {kPoro, std::string_view(R"(\p{N})")};
constexpr std::array kChameleonList = {std::string_view("<sentinel:[0-9]+>"),
                                       std::string_view("(IMGIMG)((A|B|C|D|E|F|G|H|I){1,4})Z"),
                                       std::string_view("([\\t\\n]|    |  )"),
                                       std::string_view(R"(\p{N})"),
                                       std::string_view(R"([\p{P}!-/:-@\[-`{-~])"),
                                       kGpt2NoTail};

struct NamedList {
  std::string_view name;
  std::span<const std::string_view> patterns;
};

// llama.cpp's tokenizer.ggml.pre names (llama-vocab.cpp), several onto one regex list.
constexpr std::array kNames = {
    NamedList{"default", kDefaultList},
    NamedList{"gpt-2", kGpt2List},
    NamedList{"phi-2", kGpt2List},
    NamedList{"jina-es", kGpt2List},
    NamedList{"jina-de", kGpt2List},
    NamedList{"gigachat", kGpt2List},
    NamedList{"jina-v1-en", kGpt2List},
    NamedList{"jina-v2-es", kGpt2List},
    NamedList{"jina-v2-de", kGpt2List},
    NamedList{"jina-v2-code", kGpt2List},
    NamedList{"roberta-bpe", kGpt2List},
    NamedList{"mpt", kGpt2List},
    NamedList{"olmo", kGpt2List},
    NamedList{"jais", kGpt2List},
    NamedList{"trillion", kGpt2List},
    NamedList{"llama3", kLlama3List},
    NamedList{"llama-v3", kLlama3List},
    NamedList{"llama-bpe", kLlama3List},
    NamedList{"falcon3", kLlama3List},
    NamedList{"falcon-h1", kLlama3List},
    NamedList{"pixtral", kLlama3List},
    NamedList{"dbrx", kLlama3List},
    NamedList{"smaug-bpe", kLlama3List},
    NamedList{"chatglm-bpe", kLlama3List},
    NamedList{"qwen2", kQwen2List},
    NamedList{"stablelm2", kQwen2List},
    NamedList{"megrez", kQwen2List},
    NamedList{"deepseek-r1-qwen", kQwen2List},
    NamedList{"starcoder", kStarcoderList},
    NamedList{"refact", kStarcoderList},
    NamedList{"command-r", kStarcoderList},
    NamedList{"smollm", kStarcoderList},
    NamedList{"codeshell", kStarcoderList},
    NamedList{"exaone", kStarcoderList},
    NamedList{"minerva-7b", kStarcoderList},
    NamedList{"falcon", kFalconList},
    NamedList{"deepseek-llm", kDeepseekLlmList},
    NamedList{"deepseek-coder", kDeepseekCoderList},
    NamedList{"deepseek-v3", kDeepseekV3List},
    NamedList{"poro-chat", kPoroList},
    NamedList{"bloom", kPoroList},
    NamedList{"gpt3-finnish", kPoroList},
    NamedList{"viking", kVikingList},
    NamedList{"tekken", kTekkenList},
    NamedList{"gpt-4o", kGpt4oList},
    NamedList{"llama4", kGpt4oList},
    NamedList{"chameleon", kChameleonList},
};

const NamedList* find_list(std::string_view pre) {
  if (pre.empty()) pre = "default";  // llama.cpp: a missing pre is "default" (with a warning)
  for (const NamedList& list : kNames) {
    if (list.name == pre) return &list;
  }
  return nullptr;
}

std::string pcre2_message(int code) {
  PCRE2_UCHAR buffer[256];
  const int n = pcre2_get_error_message(code, buffer, sizeof buffer);
  if (n < 0) return "PCRE2 error " + std::to_string(code);
  return std::string(reinterpret_cast<const char*>(buffer), static_cast<std::size_t>(n));
}

// Length of the UTF-8 sequence at `text[i]` (valid UTF-8 assumed), for stepping past an empty
// match.
std::size_t char_length(std::string_view text, std::size_t i) {
  const auto lead = static_cast<unsigned char>(text[i]);
  const std::size_t len = lead < 0x80 ? 1 : lead < 0xE0 ? 2 : lead < 0xF0 ? 3 : 4;
  return std::min(len, text.size() - i);
}

}  // namespace

struct Pretokenizer::Compiled {
  pcre2_code* code = nullptr;
  ~Compiled() { pcre2_code_free(code); }
};

Pretokenizer::Pretokenizer(PrivateTag) {}
Pretokenizer::~Pretokenizer() = default;

Result<std::shared_ptr<const Pretokenizer>> Pretokenizer::create(std::string_view pre) {
  const NamedList* list = find_list(pre);
  if (list == nullptr) {
    std::string known;
    for (const std::string_view name : known_names()) {
      if (!known.empty()) known += ", ";
      known += name;
    }
    return fail(Error(ErrorCode::kUnsupported,
                      "unknown pre-tokenizer '" + std::string(pre) + "' (known: " + known + ")")
                    .with_subject("tokenizer.ggml.pre"));
  }
  return from_patterns(std::string(list->name),
                       std::vector<std::string>(list->patterns.begin(), list->patterns.end()));
}

Result<std::shared_ptr<const Pretokenizer>> Pretokenizer::from_patterns(
    std::string name, std::vector<std::string> patterns) {
  try {
    auto result = std::make_shared<Pretokenizer>(PrivateTag{});
    result->name_ = std::move(name);
    for (const std::string& pattern : patterns) {
      int error = 0;
      PCRE2_SIZE offset = 0;
      auto compiled = std::make_unique<Compiled>();
      compiled->code = pcre2_compile(reinterpret_cast<PCRE2_SPTR>(pattern.data()), pattern.size(),
                                     PCRE2_UTF | PCRE2_UCP, &error, &offset, nullptr);
      if (compiled->code == nullptr) {
        return fail(ErrorCode::kInvalidArgument,
                    "pre-tokenizer regex '" + pattern + "' does not compile at offset " +
                        std::to_string(offset) + ": " + pcre2_message(error));
      }
      // JIT is an optimisation only: without it (unsupported CPU, no executable memory) the
      // interpreter gives the same matches.
      (void)pcre2_jit_compile(compiled->code, PCRE2_JIT_COMPLETE);
      result->regexes_.push_back(std::move(compiled));
    }
    return std::shared_ptr<const Pretokenizer>(std::move(result));
  } catch (const std::bad_alloc&) {
    return fail(ErrorCode::kLimitExceeded, "out of memory while compiling the pre-tokenizer");
  }
}

std::vector<std::string_view> Pretokenizer::known_names() {
  std::vector<std::string_view> names;
  for (const NamedList& list : kNames)
    names.push_back(list.name);
  std::sort(names.begin(), names.end());
  return names;
}

std::span<const std::string_view> Pretokenizer::patterns_for(std::string_view pre) {
  const NamedList* list = find_list(pre);
  if (list == nullptr) return {};
  return list->patterns;
}

Result<void> Pretokenizer::split(std::string_view text, std::vector<std::string_view>& out) const {
  if (text.empty()) return ok();
  pcre2_match_data* match = pcre2_match_data_create(1, nullptr);
  if (match == nullptr) return fail(ErrorCode::kLimitExceeded, "out of memory (PCRE2 match data)");
  struct MatchGuard {
    pcre2_match_data* data;
    ~MatchGuard() { pcre2_match_data_free(data); }
  } guard{match};

  std::vector<std::string_view> current{text};
  std::vector<std::string_view> next;
  for (const auto& regex : regexes_) {
    next.clear();
    for (const std::string_view piece : current) {
      const auto* subject = reinterpret_cast<PCRE2_SPTR>(piece.data());
      std::size_t last = 0;   // end of the previous match: a gap starts here
      std::size_t start = 0;  // where the next search starts
      while (start < piece.size()) {
        int rc = pcre2_match(regex->code, subject, piece.size(), start, PCRE2_NO_UTF_CHECK, match,
                             nullptr);
        if (rc == PCRE2_ERROR_JIT_STACKLIMIT) {
          // JIT code runs on a small fixed stack; the interpreter keeps its frames on the heap.
          rc = pcre2_match(regex->code, subject, piece.size(), start,
                           PCRE2_NO_UTF_CHECK | PCRE2_NO_JIT, match, nullptr);
        }
        if (rc == PCRE2_ERROR_NOMATCH) break;
        if (rc < 0) {
          return fail(ErrorCode::kLimitExceeded,
                      "pre-tokenizer '" + name_ + "' regex failed: " + pcre2_message(rc));
        }
        const PCRE2_SIZE* ovector = pcre2_get_ovector_pointer(match);
        const std::size_t begin = ovector[0];
        const std::size_t end = ovector[1];
        if (end == begin) {  // an empty match splits nothing (Hugging Face skips them)
          start = begin + char_length(piece, begin);
          continue;
        }
        if (begin > last) next.push_back(piece.substr(last, begin - last));
        next.push_back(piece.substr(begin, end - begin));
        last = end;
        start = end;
      }
      if (last < piece.size()) next.push_back(piece.substr(last));
    }
    current.swap(next);
  }
  out.insert(out.end(), current.begin(), current.end());
  return ok();
}

}  // namespace eredu::text
