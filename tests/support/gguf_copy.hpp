#pragma once
// Test fixtures made from real models: a copy of a GGUF file with metadata entries added or
// replaced (e.g. a tokenizer.chat_template on stories260K), every tensor byte-identical.

#include <filesystem>
#include <string>
#include <utility>
#include <variant>
#include <vector>

#include "eredu/checkpoint/gguf.hpp"
#include "eredu/checkpoint/gguf_writer.hpp"
#include "eredu/core/result.hpp"

namespace eredu::testing {

// Every tensor of `file`, byte-identical, into `writer`.
inline Result<void> copy_tensors(const checkpoint::GgufFile& file, checkpoint::GgufWriter& writer) {
  for (const auto& info : file.tensors()) {
    EREDU_TRY(const auto bytes, file.tensor_bytes(info));
    checkpoint::GgufWriterTensor tensor;
    tensor.name = info.name;
    tensor.ggml_type = info.ggml_type;
    tensor.ne = info.ne;
    tensor.data.assign(bytes.begin(), bytes.end());
    writer.add_raw_tensor(std::move(tensor));
  }
  return ok();
}

inline Result<void> copy_gguf_with_metadata(
    const std::filesystem::path& from, const std::filesystem::path& to,
    const std::vector<std::pair<std::string, checkpoint::GgufValue>>& entries) {
  EREDU_TRY(checkpoint::GgufFile file, checkpoint::GgufFile::open(from));
  checkpoint::GgufWriter writer(checkpoint::GgufWriterOptions{
      .version = file.header().version, .alignment = file.header().alignment});
  for (const auto& entry : file.metadata()) {
    bool replaced = false;
    for (const auto& [key, value] : entries)
      replaced = replaced || key == entry.key;
    if (!replaced) writer.add_metadata(entry.key, entry.value);
  }
  for (const auto& [key, value] : entries)
    writer.add_metadata(key, value);
  EREDU_TRY_VOID(copy_tensors(file, writer));
  return writer.write_file(to);
}

// A copy of a GGUF file as another architecture: general.architecture becomes `architecture` and
// every "<old>." key is renamed "<architecture>." (e.g. stories260K as a `mistral` model, whose
// block is llama's), every tensor byte-identical.
inline Result<void> copy_gguf_as_architecture(const std::filesystem::path& from,
                                              const std::filesystem::path& to,
                                              const std::string& architecture) {
  EREDU_TRY(checkpoint::GgufFile file, checkpoint::GgufFile::open(from));
  std::string old;
  for (const auto& entry : file.metadata())
    if (const auto* name = std::get_if<std::string>(&entry.value.storage());
        name != nullptr && entry.key == "general.architecture")
      old = *name;
  checkpoint::GgufWriter writer(checkpoint::GgufWriterOptions{
      .version = file.header().version, .alignment = file.header().alignment});
  for (const auto& entry : file.metadata()) {
    if (entry.key == "general.architecture") {
      writer.add_metadata(entry.key, checkpoint::GgufValue(architecture));
    } else if (!old.empty() && entry.key.rfind(old + ".", 0) == 0) {
      writer.add_metadata(architecture + entry.key.substr(old.size()), entry.value);
    } else {
      writer.add_metadata(entry.key, entry.value);
    }
  }
  EREDU_TRY_VOID(copy_tensors(file, writer));
  return writer.write_file(to);
}

}  // namespace eredu::testing
