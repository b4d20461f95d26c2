// Fuzzes the GGUF reader: any bytes, as a whole in-memory file, through parse_gguf (the same path
// GgufFile::open takes after mapping). Besides "no crash, leak, abort or sanitizer report", it
// checks the promises callers rely on when a file is accepted: every tensor's byte span lies
// inside the file and has the size the header declares, and the typed metadata accessors answer
// (a value or an error) for every key. A second parse with tight limits drives the limit paths.
#include <cstddef>
#include <cstdint>
#include <memory>

#include "eredu/checkpoint/gguf.hpp"
#include "eredu/checkpoint/mapped_file.hpp"
#include "fuzz_support.hpp"

namespace {

using eredu::checkpoint::GgufFile;
using eredu::checkpoint::GgufLimits;

void check_accepted(const GgufFile& gguf) {
  const auto file_bytes = gguf.mapped_file()->bytes();
  const auto* const begin = file_bytes.data();
  const auto* const end = begin + file_bytes.size();
  for (const auto& info : gguf.tensors()) {
    const auto bytes = gguf.tensor_bytes(info);
    if (!bytes.has_value()) __builtin_trap();  // accepted at parse time, so it must resolve
    if (bytes->size() != info.byte_size) __builtin_trap();
    if (!bytes->empty() && (bytes->data() < begin || bytes->data() + bytes->size() > end)) {
      __builtin_trap();
    }
    if (gguf.find_tensor(info.name) == nullptr) __builtin_trap();
  }
  const auto& contents = gguf.contents();
  for (const auto& entry : gguf.metadata()) {
    (void)contents.get_u64(entry.key);
    (void)contents.get_i64(entry.key);
    (void)contents.get_float(entry.key);
    (void)contents.get_bool(entry.key);
    (void)contents.get_string(entry.key);
    (void)contents.get_array(entry.key);
    if (contents.find_metadata(entry.key) == nullptr) __builtin_trap();
  }
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int* /*argc*/, char*** /*argv*/) {
  eredu::fuzz::silence_library_logging();
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  auto file =
      eredu::checkpoint::MappedFile::from_bytes(eredu::fuzz::as_bytes(data, size), "fuzz.gguf");
  if (auto parsed = eredu::checkpoint::parse_gguf(file); parsed.has_value()) {
    check_accepted(*parsed);
  } else {
    (void)parsed.error().what();
  }

  GgufLimits tight;
  tight.max_metadata_entries = 8;
  tight.max_array_elements = 16;
  tight.max_tensors = 4;
  tight.max_rank = 2;
  tight.max_string_bytes = 64;
  tight.max_nesting_depth = 2;
  tight.max_metadata_bytes = 4096;
  tight.max_alignment = 64;
  tight.strict_keys = true;
  if (auto parsed = eredu::checkpoint::parse_gguf(file, tight); parsed.has_value()) {
    check_accepted(*parsed);
  }
  return 0;
}
