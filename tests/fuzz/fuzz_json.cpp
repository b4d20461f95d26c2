// Fuzzes eredu's untrusted-JSON paths with JSON text as the input, so that libFuzzer spends its
// mutations on the grammar rather than on a binary container around it:
//  - as the header of a SafeTensors file (a correct length prefix is added, followed by a small
//    zero payload so that in-range data_offsets can be accepted), through parse_safetensors;
//  - as a model.safetensors.index.json, through parse_safetensors_index.
// Both must end in a value or a typed error: no crash, leak, abort, stack exhaustion on deep
// nesting, or sanitizer report.
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <vector>

#include "eredu/checkpoint/mapped_file.hpp"
#include "eredu/checkpoint/safetensors.hpp"
#include "eredu/checkpoint/safetensors_model.hpp"
#include "fuzz_support.hpp"

namespace {

constexpr std::size_t kPayloadBytes = 64;

}  // namespace

extern "C" int LLVMFuzzerInitialize(int* /*argc*/, char*** /*argv*/) {
  eredu::fuzz::silence_library_logging();
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const auto text = eredu::fuzz::as_bytes(data, size);

  // [u64 little-endian N][N bytes of header][payload]
  std::vector<std::byte> file_bytes(8 + size + kPayloadBytes, std::byte{0});
  const std::uint64_t length = size;
  for (int i = 0; i < 8; ++i) {
    file_bytes[static_cast<std::size_t>(i)] = static_cast<std::byte>((length >> (8 * i)) & 0xFFU);
  }
  if (size != 0) std::memcpy(file_bytes.data() + 8, data, size);
  const auto file =
      eredu::checkpoint::MappedFile::from_bytes(file_bytes, "fuzz-header.safetensors");
  if (const auto parsed = eredu::checkpoint::parse_safetensors(file); !parsed.has_value()) {
    (void)parsed.error().what();
  }

  if (const auto index =
          eredu::checkpoint::parse_safetensors_index(text, "fuzz/model.safetensors.index.json");
      !index.has_value()) {
    (void)index.error().what();
  }
  return 0;
}
