// Fuzzes the SafeTensors reader: any bytes as a whole in-memory file through parse_safetensors
// (length prefix, JSON header, offsets against the payload). When a file is accepted it checks
// what callers rely on: every tensor's bytes lie inside the file and have the size its dtype and
// shape give, and reading them (the finiteness scan) stays in bounds. Each input is parsed a
// second time with the other unknown-field and zero-size policies and tight limits, and the
// header parser runs on its own as read_safetensors_header would call it.
#include <cstddef>
#include <cstdint>
#include <memory>

#include "eredu/checkpoint/mapped_file.hpp"
#include "eredu/checkpoint/safetensors.hpp"
#include "fuzz_support.hpp"

namespace {

using eredu::checkpoint::SafetensorsFile;
using eredu::checkpoint::SafetensorsLimits;

void check_accepted(const SafetensorsFile& file) {
  const auto file_bytes = file.file()->bytes();
  const auto* const begin = file_bytes.data();
  const auto* const end = begin + file_bytes.size();
  for (const auto& tensor : file.tensors()) {
    const auto expected = eredu::checked_byte_size(tensor.dtype, tensor.shape);
    if (!expected.has_value() || *expected != tensor.byte_size) __builtin_trap();
    const auto bytes = file.tensor_bytes(tensor);
    if (!bytes.has_value()) __builtin_trap();  // accepted at parse time, so it must resolve
    if (bytes->size() != tensor.byte_size) __builtin_trap();
    if (!bytes->empty() && (bytes->data() < begin || bytes->data() + bytes->size() > end)) {
      __builtin_trap();
    }
    if (file.find(tensor.name) == nullptr) __builtin_trap();
    (void)eredu::checkpoint::check_tensor_finite(file, tensor);
  }
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int* /*argc*/, char*** /*argv*/) {
  eredu::fuzz::silence_library_logging();
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const auto bytes = eredu::fuzz::as_bytes(data, size);
  auto file = eredu::checkpoint::MappedFile::from_bytes(bytes, "fuzz.safetensors");
  if (auto parsed = eredu::checkpoint::parse_safetensors(file); parsed.has_value()) {
    check_accepted(*parsed);
  } else {
    (void)parsed.error().what();
  }

  SafetensorsLimits other;
  other.unknown_fields = eredu::checkpoint::UnknownFieldPolicy::kIgnore;
  other.zero_size_tensors = eredu::checkpoint::ZeroSizeTensorPolicy::kReject;
  other.max_json_depth = 4;
  other.max_rank = 3;
  other.max_tensors = 8;
  if (auto parsed = eredu::checkpoint::parse_safetensors(file, other); parsed.has_value()) {
    check_accepted(*parsed);
  }
  // The header alone, as read_safetensors_header sees it (a prefix and the real file size).
  (void)eredu::checkpoint::parse_safetensors_header(bytes, bytes.size(), "fuzz.safetensors");
  return 0;
}
