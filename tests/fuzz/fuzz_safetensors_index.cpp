// Fuzzes the parser of model.safetensors.index.json. Besides "no crash, leak, abort or sanitizer
// report", it checks the confinement promise on every accepted index: each shard file name is
// relative, has no ".." component and no NUL, and each tensor name appears once.
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <string>
#include <unordered_set>

#include "eredu/checkpoint/safetensors_model.hpp"
#include "fuzz_support.hpp"

namespace {

bool confined(const std::string& file_name) {
  if (file_name.empty() || file_name.find('\0') != std::string::npos) return false;
  const std::filesystem::path path(file_name);
  if (path.is_absolute() || path.has_root_path()) return false;
  for (const auto& part : path) {
    if (part == "..") return false;
  }
  return true;
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int* /*argc*/, char*** /*argv*/) {
  eredu::fuzz::silence_library_logging();
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const auto index = eredu::checkpoint::parse_safetensors_index(
      eredu::fuzz::as_bytes(data, size), "fuzz/model.safetensors.index.json");
  if (!index.has_value()) {
    (void)index.error().what();
    return 0;
  }
  std::unordered_set<std::string> names;
  for (const auto& [tensor, file_name] : index->weight_map) {
    if (!names.insert(tensor).second) __builtin_trap();  // a tensor listed twice was accepted
    if (!confined(file_name)) __builtin_trap();          // a shard path escapes the directory
  }
  for (const auto& file_name : index->shard_files) {
    if (!confined(file_name)) __builtin_trap();
  }
  return 0;
}
