#pragma once
// Helpers shared by the concept tests.

#include <gtest/gtest.h>

#include <string>
#include <string_view>

namespace eredu::concept_tests {

// The diagnoser's first unmet requirement must be the one the mock removed: its message starts
// with `expected_prefix` (e.g. "BackendProvider: missing create_session(").
inline void expect_first_unmet(std::string_view unmet, std::string_view expected_prefix) {
  EXPECT_FALSE(unmet.empty()) << "the diagnoser found no unmet requirement";
  EXPECT_EQ(std::string(unmet.substr(0, expected_prefix.size())), std::string(expected_prefix))
      << "full diagnoser message: " << unmet;
}

}  // namespace eredu::concept_tests
