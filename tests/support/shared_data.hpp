#pragma once
// Locates the data that lives outside the repository (../shared): models, test vectors and
// reference outputs. EREDU_SHARED_DIR overrides the default, EREDU_MODELS_DIR the models folder.
// A test whose data is absent skips with a message naming the missing path.

#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <string>

namespace eredu::testing {

inline std::filesystem::path shared_dir() {
  if (const char* env = std::getenv("EREDU_SHARED_DIR"); env != nullptr && *env != '\0') {
    return env;
  }
  return EREDU_DEFAULT_SHARED_DIR;
}

inline std::filesystem::path models_dir() {
  if (const char* env = std::getenv("EREDU_MODELS_DIR"); env != nullptr && *env != '\0') {
    return env;
  }
  return shared_dir() / "models";
}

inline std::filesystem::path testdata_dir() {
  return shared_dir() / "testdata";
}
inline std::filesystem::path reference_dir() {
  return shared_dir() / "reference";
}

}  // namespace eredu::testing

// Skips the current test (with the path in the message) when `p` does not exist.
#define EREDU_REQUIRE_SHARED_PATH(p)                                                         \
  do {                                                                                       \
    const std::filesystem::path eredu_required_path_ = (p);                                  \
    if (!std::filesystem::exists(eredu_required_path_)) {                                    \
      GTEST_SKIP() << "shared test data not found: " << eredu_required_path_.string()        \
                   << " (set EREDU_SHARED_DIR to the folder holding models/ and testdata/)"; \
    }                                                                                        \
  } while (false)
