// Fuzzes the untrusted-JSON path: SafeTensors headers, model.safetensors.index.json and
// config.json all arrive as bytes from a file and go through nlohmann-json. The harness checks the
// properties eredu relies on: a depth-limited SAX pass rejects deep nesting before any DOM is
// built, parsing never throws past `allow_exceptions = false`, and whatever parses can be walked
// and serialized again without a crash or a sanitizer report.
#include <nlohmann/json.hpp>

#include <cstddef>
#include <cstdint>
#include <string>

#include "fuzz_support.hpp"

namespace {

constexpr std::size_t kMaxDepth = 64;

// Counts nesting and stops the parse (returns false) past kMaxDepth; accepts every scalar.
class DepthLimiter final : public nlohmann::json_sax<nlohmann::json> {
 public:
  bool null() override { return true; }
  bool boolean(bool /*value*/) override { return true; }
  bool number_integer(number_integer_t /*value*/) override { return true; }
  bool number_unsigned(number_unsigned_t /*value*/) override { return true; }
  bool number_float(number_float_t /*value*/, const string_t& /*text*/) override { return true; }
  bool string(string_t& /*value*/) override { return true; }
  bool binary(binary_t& /*value*/) override { return true; }
  bool start_object(std::size_t /*elements*/) override { return ++depth_ <= kMaxDepth; }
  bool key(string_t& /*value*/) override { return true; }
  bool end_object() override { return --depth_, true; }
  bool start_array(std::size_t /*elements*/) override { return ++depth_ <= kMaxDepth; }
  bool end_array() override { return --depth_, true; }
  bool parse_error(std::size_t /*position*/, const std::string& /*last_token*/,
                   const nlohmann::detail::exception& /*error*/) override {
    return false;
  }

 private:
  std::size_t depth_ = 0;
};

// Touches every value the way a header reader does (types, sizes, keys, numbers).
std::size_t walk(const nlohmann::json& value) {
  std::size_t count = 1;
  if (value.is_object()) {
    for (const auto& [key, child] : value.items())
      count += key.size() + walk(child);
  } else if (value.is_array()) {
    for (const auto& child : value)
      count += walk(child);
  } else if (value.is_number_unsigned()) {
    count += static_cast<std::size_t>(value.get<std::uint64_t>() & 1U);
  } else if (value.is_string()) {
    count += value.get_ref<const std::string&>().size();
  }
  return count;
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int* /*argc*/, char*** /*argv*/) {
  eredu::fuzz::silence_library_logging();
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const auto text = eredu::fuzz::as_text(data, size);
  DepthLimiter limiter;
  const bool within_limits = nlohmann::json::sax_parse(
      text.begin(), text.end(), &limiter, nlohmann::json::input_format_t::json, /*strict=*/true,
      /*ignore_comments=*/false);
  if (!within_limits) return 0;
  const auto value = nlohmann::json::parse(text.begin(), text.end(), nullptr,
                                           /*allow_exceptions=*/false);
  if (value.is_discarded()) __builtin_trap();  // the SAX pass accepted what the DOM parse rejects
  (void)walk(value);
  // Invalid UTF-8 inside strings is replaced rather than thrown on: the error path must not leak.
  (void)value.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  return 0;
}
