// Jinja lexing with jinja2's whitespace semantics (trim_blocks and lstrip_blocks on, as Hugging
// Face configures its environment).

#include "lexer.hpp"

#include <cstdint>

namespace eredu::jinja::detail {
namespace {

bool is_space(char c) {
  return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v';
}
bool is_name_start(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
}
bool is_digit(char c) {
  return c >= '0' && c <= '9';
}

void append_utf8(std::string& out, std::uint32_t cp) {
  if (cp > 0x10FFFF) cp = 0xFFFD;
  if (cp < 0x80) {
    out += static_cast<char>(cp);
  } else if (cp < 0x800) {
    out += static_cast<char>(0xC0 | (cp >> 6));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  } else if (cp < 0x10000) {
    out += static_cast<char>(0xE0 | (cp >> 12));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  } else {
    out += static_cast<char>(0xF0 | (cp >> 18));
    out += static_cast<char>(0x80 | ((cp >> 12) & 0x3F));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  }
}

int hex_value(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

// jinja2 decodes string literals with Python's unicode-escape codec; unknown escapes stay as
// written (backslash included).
std::string decode_string(std::string_view body) {
  std::string out;
  out.reserve(body.size());
  for (std::size_t i = 0; i < body.size(); ++i) {
    const char c = body[i];
    if (c != '\\' || i + 1 == body.size()) {
      out += c;
      continue;
    }
    const char e = body[++i];
    switch (e) {
      case 'n':
        out += '\n';
        break;
      case 't':
        out += '\t';
        break;
      case 'r':
        out += '\r';
        break;
      case '\\':
        out += '\\';
        break;
      case '\'':
        out += '\'';
        break;
      case '"':
        out += '"';
        break;
      case 'a':
        out += '\a';
        break;
      case 'b':
        out += '\b';
        break;
      case 'f':
        out += '\f';
        break;
      case 'v':
        out += '\v';
        break;
      case '\n':
        break;  // line continuation
      case 'x':
      case 'u':
      case 'U': {
        const std::size_t digits = e == 'x' ? 2 : (e == 'u' ? 4 : 8);
        std::uint32_t cp = 0;
        bool good = true;
        for (std::size_t k = 1; good && k <= digits; ++k) {
          if (i + k >= body.size()) {
            good = false;
            break;
          }
          const int h = hex_value(body[i + k]);
          if (h < 0) good = false;
          cp = cp * 16 + static_cast<std::uint32_t>(h < 0 ? 0 : h);
        }
        if (good) {
          append_utf8(out, cp);
          i += digits;
        } else {
          out += '\\';
          out += e;
        }
        break;
      }
      default:
        if (e >= '0' && e <= '7') {
          std::uint32_t cp = static_cast<std::uint32_t>(e - '0');
          for (int k = 0; k < 2 && i + 1 < body.size() && body[i + 1] >= '0' && body[i + 1] <= '7';
               ++k) {
            cp = cp * 8 + static_cast<std::uint32_t>(body[++i] - '0');
          }
          append_utf8(out, cp);
        } else {
          out += '\\';
          out += e;
        }
    }
  }
  return out;
}

class Lexer {
 public:
  explicit Lexer(std::string source) : src_(std::move(source)) {}

  Result<std::vector<Token>> run() {
    bool line_starting = true;
    while (pos_ < src_.size()) {
      const std::size_t start = find_tag(pos_);
      std::string text = src_.substr(pos_, start - pos_);
      if (start == src_.size()) {
        emit_text(std::move(text), pos_);
        pos_ = start;
        break;
      }
      const char kind = src_[start + 1];  // '{', '%' or '#'
      const char marker = start + 2 < src_.size() ? src_[start + 2] : '\0';
      if (marker == '-') {
        while (!text.empty() && is_space(text.back()))
          text.pop_back();
      } else if (marker != '+' && kind != '{') {
        // lstrip_blocks: whitespace alone between the line start and a block or comment tag.
        const std::size_t nl = text.rfind('\n');
        const std::size_t l_pos = nl == std::string::npos ? 0 : nl + 1;
        if (l_pos > 0 || line_starting) {
          bool blank = l_pos < text.size();
          for (std::size_t k = l_pos; k < text.size(); ++k)
            blank = blank && is_space(text[k]);
          if (blank) text.resize(l_pos);
        }
      }
      emit_text(std::move(text), pos_);
      pos_ = start + 2 + ((marker == '-' || marker == '+') ? 1 : 0);
      if (kind == '#') {
        const std::size_t end = src_.find("#}", pos_);
        if (end == std::string::npos) return error_at(start, "unterminated comment");
        const bool strip = end > pos_ && src_[end - 1] == '-';
        pos_ = end + 2;
        line_starting = finish_tag(strip, true);
        continue;
      }
      const bool block = kind == '%';
      push(block ? TokenKind::kBlockBegin : TokenKind::kVariableBegin, block ? "{%" : "{{", start);
      const std::size_t first_token = tokens_.size();
      EREDU_TRY(const bool strip, lex_tag(block, start));
      line_starting = finish_tag(strip, block);
      if (block && tokens_.size() == first_token + 2 &&
          tokens_[first_token].kind == TokenKind::kName && tokens_[first_token].text == "raw") {
        // {% raw %}: everything up to {% endraw %} is text.
        tokens_.resize(first_token - 1);
        EREDU_TRY_VOID(lex_raw(start));
        line_starting = !src_.empty() && pos_ > 0 && src_[pos_ - 1] == '\n';
      }
    }
    push(TokenKind::kEnd, "", src_.size());
    return std::move(tokens_);
  }

 private:
  // The next "{{", "{%" or "{#" at or after `from`, or the end.
  std::size_t find_tag(std::size_t from) const {
    for (std::size_t i = from; i + 1 < src_.size(); ++i) {
      if (src_[i] == '{' && (src_[i + 1] == '{' || src_[i + 1] == '%' || src_[i + 1] == '#')) {
        return i;
      }
    }
    return src_.size();
  }

  // After a tag end at pos_: `-` strips all following whitespace, trim_blocks one newline after
  // block and comment tags. Returns whether the consumed text ended a line.
  bool finish_tag(bool strip, bool block) {
    if (strip) {
      const std::size_t before = pos_;
      while (pos_ < src_.size() && is_space(src_[pos_]))
        ++pos_;
      if (pos_ > before) return src_[pos_ - 1] == '\n';
      return false;
    }
    if (block && pos_ < src_.size() && src_[pos_] == '\n') {
      ++pos_;
      return true;
    }
    return false;
  }

  Result<void> lex_raw(std::size_t tag_start) {
    std::size_t search = pos_;
    while (true) {
      const std::size_t open = src_.find("{%", search);
      if (open == std::string::npos) return error_at(tag_start, "unterminated raw block");
      std::size_t k = open + 2;
      const bool strip_before = k < src_.size() && src_[k] == '-';
      if (k < src_.size() && (src_[k] == '-' || src_[k] == '+')) ++k;
      while (k < src_.size() && is_space(src_[k]))
        ++k;
      if (src_.compare(k, 6, "endraw") != 0) {
        search = open + 2;
        continue;
      }
      k += 6;
      while (k < src_.size() && is_space(src_[k]))
        ++k;
      bool strip_after = false;
      if (k < src_.size() && (src_[k] == '-' || src_[k] == '+')) {
        strip_after = src_[k] == '-';
        ++k;
      }
      if (src_.compare(k, 2, "%}") != 0) {
        search = open + 2;
        continue;
      }
      std::string text = src_.substr(pos_, open - pos_);
      if (strip_before) {
        while (!text.empty() && is_space(text.back()))
          text.pop_back();
      } else {
        const std::size_t nl = text.rfind('\n');
        const std::size_t l_pos = nl == std::string::npos ? 0 : nl + 1;
        bool blank = l_pos < text.size();
        for (std::size_t q = l_pos; q < text.size(); ++q)
          blank = blank && is_space(text[q]);
        if (blank && l_pos > 0) text.resize(l_pos);
      }
      emit_text(std::move(text), pos_);
      pos_ = k + 2;
      (void)finish_tag(strip_after, true);
      return ok();
    }
  }

  // Tokens inside {{ }} or {% %}, up to and including the end marker. Returns whether the end
  // marker was "-}}" / "-%}".
  Result<bool> lex_tag(bool block, std::size_t tag_start) {
    int depth = 0;  // open brackets: "}}" inside a dict literal does not end a {{ }}
    while (true) {
      while (pos_ < src_.size() && is_space(src_[pos_]))
        ++pos_;
      if (pos_ >= src_.size()) {
        return error_at(tag_start, block ? "unterminated block tag (missing '%}')"
                                         : "unterminated expression (missing '}}')");
      }
      const char close = block ? '%' : '}';
      for (int marker = 0; marker < 2; ++marker) {
        const std::size_t at = pos_ + static_cast<std::size_t>(marker);
        if (marker == 1 && src_[pos_] != '-' && src_[pos_] != '+') break;
        if (at + 1 < src_.size() && src_[at] == close && src_[at + 1] == '}' &&
            (block || depth == 0)) {
          push(block ? TokenKind::kBlockEnd : TokenKind::kVariableEnd, "", pos_);
          const bool strip = marker == 1 && src_[pos_] == '-';
          pos_ = at + 2;
          return strip;
        }
      }
      const std::size_t start = pos_;
      const char c = src_[pos_];
      if (is_name_start(c)) {
        while (pos_ < src_.size() && (is_name_start(src_[pos_]) || is_digit(src_[pos_])))
          ++pos_;
        push(TokenKind::kName, src_.substr(start, pos_ - start), start);
      } else if (is_digit(c)) {
        bool is_float = false;
        auto digits = [&] {
          while (pos_ < src_.size() && (is_digit(src_[pos_]) || src_[pos_] == '_'))
            ++pos_;
        };
        digits();
        const bool after_dot = !tokens_.empty() && tokens_.back().kind == TokenKind::kOperator &&
                               tokens_.back().text == ".";
        if (!after_dot && pos_ + 1 < src_.size() && src_[pos_] == '.' && is_digit(src_[pos_ + 1])) {
          is_float = true;
          ++pos_;
          digits();
        }
        if (!after_dot && pos_ < src_.size() && (src_[pos_] == 'e' || src_[pos_] == 'E')) {
          std::size_t k = pos_ + 1;
          if (k < src_.size() && (src_[k] == '+' || src_[k] == '-')) ++k;
          if (k < src_.size() && is_digit(src_[k])) {
            is_float = true;
            pos_ = k;
            digits();
          }
        }
        std::string text;
        for (std::size_t k = start; k < pos_; ++k) {
          if (src_[k] != '_') text += src_[k];
        }
        push(is_float ? TokenKind::kFloat : TokenKind::kInteger, std::move(text), start);
      } else if (c == '\'' || c == '"') {
        std::size_t k = pos_ + 1;
        while (k < src_.size() && src_[k] != c)
          k += src_[k] == '\\' ? 2 : 1;
        if (k >= src_.size()) return error_at(start, "unterminated string literal");
        push(TokenKind::kString,
             decode_string(std::string_view(src_).substr(pos_ + 1, k - pos_ - 1)), start);
        pos_ = k + 1;
      } else {
        static constexpr std::string_view kTwo[] = {"//", "**", "==", "!=", "<=", ">="};
        std::string op;
        for (std::string_view two : kTwo) {
          if (src_.compare(pos_, 2, two) == 0) op = two;
        }
        if (op.empty()) {
          static constexpr std::string_view kOne = "+-*/%~<>=()[]{},.:|;";
          if (kOne.find(c) == std::string_view::npos) {
            return error_at(start, std::string("unexpected character '") + c + "' in tag");
          }
          op = std::string(1, c);
          if (c == '(' || c == '[' || c == '{') ++depth;
          if ((c == ')' || c == ']' || c == '}') && depth > 0) --depth;
        }
        pos_ += op.size();
        push(TokenKind::kOperator, std::move(op), start);
      }
    }
  }

  void emit_text(std::string text, std::size_t at) {
    if (!text.empty()) push(TokenKind::kText, std::move(text), at);
  }

  void push(TokenKind kind, std::string text, std::size_t offset) {
    Token token;
    token.kind = kind;
    token.text = std::move(text);
    locate(offset, token.line, token.column);
    tokens_.push_back(std::move(token));
  }

  // Line and column of a byte offset, advancing a cursor (offsets only grow, bar raw blocks).
  void locate(std::size_t offset, std::size_t& line, std::size_t& column) {
    if (offset < cursor_) {
      cursor_ = 0;
      line_ = 1;
      line_start_ = 0;
    }
    for (; cursor_ < offset && cursor_ < src_.size(); ++cursor_) {
      if (src_[cursor_] == '\n') {
        ++line_;
        line_start_ = cursor_ + 1;
      }
    }
    line = line_;
    column = offset - line_start_ + 1;
  }

  Unexpected<Error> error_at(std::size_t offset, const std::string& message) {
    std::size_t line = 0;
    std::size_t column = 0;
    locate(offset, line, column);
    return fail(ErrorCode::kInvalidArgument,
                location_prefix(line, column) + "syntax error: " + message);
  }

  std::string src_;
  std::size_t pos_ = 0;
  std::vector<Token> tokens_;
  std::size_t cursor_ = 0;
  std::size_t line_ = 1;
  std::size_t line_start_ = 0;
};

}  // namespace

std::string repr_quoted(std::string_view text) {
  std::string out;
  out.reserve(text.size() + 2);
  out += '\'';
  out += text;
  out += '\'';
  return out;
}

std::string location_prefix(std::size_t line, std::size_t column) {
  return std::to_string(line) + ":" + std::to_string(column) + ": ";
}

Result<std::vector<Token>> tokenize(std::string_view source) {
  // jinja2 normalises every line ending to "\n" and drops one final newline
  // (keep_trailing_newline=False).
  std::string text;
  text.reserve(source.size());
  for (std::size_t i = 0; i < source.size(); ++i) {
    if (source[i] == '\r') {
      text += '\n';
      if (i + 1 < source.size() && source[i + 1] == '\n') ++i;
    } else {
      text += source[i];
    }
  }
  if (!text.empty() && text.back() == '\n') text.pop_back();
  return Lexer(std::move(text)).run();
}

}  // namespace eredu::jinja::detail
