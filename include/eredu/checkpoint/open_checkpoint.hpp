#pragma once
// open_checkpoint: opens whatever checkpoint a path names as a CheckpointSource.
//
//   a .gguf file (a single file or any shard of a split set)   -> GgufCheckpointSource
//   a .safetensors file, or a model.safetensors.index.json     -> SafetensorsCheckpointSource
//   a directory holding model.safetensors.index.json or model.safetensors
//                                                               -> SafetensorsCheckpointSource
// A regular file with another extension is recognised as GGUF by its magic bytes ("GGUF").

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <memory>
#include <string_view>

#include "eredu/checkpoint/gguf_source.hpp"
#include "eredu/checkpoint/safetensors_source.hpp"
#include "eredu/checkpoint/source.hpp"

namespace eredu::checkpoint {

enum class CheckpointContainer : std::uint8_t { kGguf, kSafetensors };

[[nodiscard]] constexpr std::string_view to_string(CheckpointContainer container) noexcept {
  return container == CheckpointContainer::kGguf ? "gguf" : "safetensors";
}

struct OpenCheckpointOptions {
  GgufLimits gguf;
  SafetensorsModelOptions safetensors;
  std::size_t max_open_shards = kDefaultMaxOpenShards;
};

// Which container `path` holds, from the file name, the directory contents or the magic bytes.
// kNotFound when the path does not exist or a directory holds no SafeTensors model; kUnsupported
// for a file that is neither; kIo when it cannot be inspected.
[[nodiscard]] Result<CheckpointContainer> detect_checkpoint_container(
    const std::filesystem::path& path);

// Detects the container and opens it (headers only; payload is read through leases).
[[nodiscard]] Result<std::unique_ptr<CheckpointSource>> open_checkpoint(
    const std::filesystem::path& path, const OpenCheckpointOptions& options = {});

}  // namespace eredu::checkpoint
