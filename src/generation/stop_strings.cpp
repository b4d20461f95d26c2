#include "eredu/generation/stop_strings.hpp"

#include <algorithm>
#include <utility>

#include <fmt/format.h>

#include "eredu/generation/utf8_stream.hpp"

namespace eredu::generation {

Result<StopStringMatcher> StopStringMatcher::create(std::vector<std::string> stop_strings) {
  if (stop_strings.size() > kMaxStopStrings) {
    return fail(Error(ErrorCode::kInvalidArgument,
                      fmt::format("{} stop strings given; at most {} are accepted",
                                  stop_strings.size(), kMaxStopStrings))
                    .with_subject("stop_strings"));
  }
  for (std::size_t i = 0; i < stop_strings.size(); ++i) {
    const std::string& stop = stop_strings[i];
    const char* problem = nullptr;
    if (stop.empty()) {
      problem = "is empty";
    } else if (stop.size() > kMaxStopStringBytes) {
      problem = "is longer than the limit";
    } else if (!is_valid_utf8(stop)) {
      problem = "is not well-formed UTF-8";
    }
    if (problem != nullptr) {
      return fail(Error(ErrorCode::kInvalidArgument,
                        fmt::format("stop string {} (of {} bytes, limit {}) {}", i, stop.size(),
                                    kMaxStopStringBytes, problem))
                      .with_subject(fmt::format("stop_strings[{}]", i)));
    }
  }
  return StopStringMatcher(std::move(stop_strings));
}

std::size_t StopStringMatcher::partial_match_length() const noexcept {
  const std::string_view held(held_);
  std::size_t longest = 0;
  for (const std::string& stop : stops_) {
    const std::size_t max_length = std::min(held.size(), stop.size() - 1);
    for (std::size_t length = max_length; length > longest; --length) {
      if (held.substr(held.size() - length) == std::string_view(stop).substr(0, length)) {
        longest = length;
        break;
      }
    }
  }
  return longest;
}

StopStringMatcher::Released StopStringMatcher::push(std::string_view text) {
  Released released;
  if (done_) return released;
  held_.append(text);

  // held_ contained no complete stop string before this push, so the first completion is the
  // occurrence with the smallest end; find() gives each string's first (= earliest-ending) one.
  std::optional<std::size_t> best;
  std::size_t best_start = 0;
  std::size_t best_end = 0;
  for (std::size_t i = 0; i < stops_.size(); ++i) {
    const std::size_t start = held_.find(stops_[i]);
    if (start == std::string::npos) continue;
    const std::size_t end = start + stops_[i].size();
    if (!best || end < best_end || (end == best_end && start < best_start)) {
      best = i;
      best_start = start;
      best_end = end;
    }
  }
  if (best) {
    released.text = held_.substr(0, best_start);
    released.matched = best;
    held_.clear();
    done_ = true;
    return released;
  }

  const std::size_t keep = partial_match_length();
  released.text = held_.substr(0, held_.size() - keep);
  held_.erase(0, held_.size() - keep);
  return released;
}

std::string StopStringMatcher::flush() {
  std::string out = std::move(held_);
  held_.clear();
  return out;
}

}  // namespace eredu::generation
