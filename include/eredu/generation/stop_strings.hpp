#pragma once
// Stop strings over a stream of text: text is released only once no stop string can still
// begin inside it, so the caller never shows text that a stop string later swallows.
//
// Rules:
// - Input is well-formed UTF-8 (GenerationSequence puts a Utf8StreamGuard in front); stop strings
//   are non-empty, well-formed UTF-8. A held-back suffix is then a prefix of a stop string, which
//   starts a character, so released text always ends on a character boundary.
// - The stop string that completes first in the stream wins (the smallest end offset); among
//   those ending at the same offset, the longest (earliest start), then the lowest index. This
//   makes the result independent of how the text was split into pieces.
// - On a match, the text before the stop string is released and the stop string and anything
//   after it are discarded; the matcher is then done and releases nothing more.

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "eredu/core/result.hpp"

namespace eredu::generation {

class StopStringMatcher {
 public:
  static constexpr std::size_t kMaxStopStrings = 64;
  static constexpr std::size_t kMaxStopStringBytes = 1024;

  struct Released {
    std::string text;                    // safe to show now
    std::optional<std::size_t> matched;  // index of the stop string that completed, if any
  };

  // kInvalidArgument (subject "stop_strings[i]") for an empty, ill-formed or over-long stop
  // string, or more than kMaxStopStrings of them. An empty list is valid (nothing is held back).
  [[nodiscard]] static Result<StopStringMatcher> create(std::vector<std::string> stop_strings);

  // Adds `text` and releases what no stop string can still claim. After a match: releases "".
  [[nodiscard]] Released push(std::string_view text);
  // The stream ended without a match: releases everything held back.
  [[nodiscard]] std::string flush();

  [[nodiscard]] std::string_view held() const noexcept { return held_; }
  [[nodiscard]] bool matched() const noexcept { return done_; }
  [[nodiscard]] const std::vector<std::string>& stop_strings() const noexcept { return stops_; }

 private:
  explicit StopStringMatcher(std::vector<std::string> stops) : stops_(std::move(stops)) {}
  // Length of the longest suffix of held_ that is a proper prefix of some stop string.
  [[nodiscard]] std::size_t partial_match_length() const noexcept;

  std::vector<std::string> stops_;
  std::string held_;  // text not released yet
  bool done_ = false;
};

}  // namespace eredu::generation
