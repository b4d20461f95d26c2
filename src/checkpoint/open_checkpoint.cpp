#include "eredu/checkpoint/open_checkpoint.hpp"

#include <array>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <new>
#include <system_error>

namespace eredu::checkpoint {
namespace {

Error path_error(ErrorCode code, std::string message, const std::filesystem::path& path) {
  return Error(code, std::move(message)).with_path(path.string());
}

// True when the file starts with the GGUF magic "GGUF".
Result<bool> has_gguf_magic(const std::filesystem::path& path) {
  std::FILE* file = std::fopen(path.c_str(), "rb");
  if (file == nullptr) {
    return fail(
        path_error(ErrorCode::kIo, std::string("cannot open: ") + std::strerror(errno), path));
  }
  std::array<char, 4> magic{};
  const std::size_t got = std::fread(magic.data(), 1, magic.size(), file);
  std::fclose(file);
  return got == magic.size() && std::memcmp(magic.data(), "GGUF", 4) == 0;
}

}  // namespace

Result<CheckpointContainer> detect_checkpoint_container(const std::filesystem::path& path) {
  std::error_code ec;
  const std::filesystem::file_status status = std::filesystem::status(path, ec);
  if (ec || !std::filesystem::exists(status)) {
    if (!ec || ec == std::errc::no_such_file_or_directory) {
      return fail(path_error(ErrorCode::kNotFound, "no such file or directory", path));
    }
    return fail(path_error(ErrorCode::kIo, "cannot inspect: " + ec.message(), path));
  }
  if (std::filesystem::is_directory(status)) {
    for (const std::string_view name : {kSafetensorsIndexFileName, kSafetensorsSingleFileName}) {
      if (std::filesystem::is_regular_file(path / name, ec))
        return CheckpointContainer::kSafetensors;
    }
    return fail(path_error(ErrorCode::kNotFound,
                           "directory holds neither " + std::string(kSafetensorsIndexFileName) +
                               " nor " + std::string(kSafetensorsSingleFileName),
                           path));
  }
  if (!std::filesystem::is_regular_file(status)) {
    return fail(path_error(ErrorCode::kUnsupported, "not a regular file or a directory", path));
  }
  const std::filesystem::path extension = path.extension();
  if (extension == ".gguf") return CheckpointContainer::kGguf;
  if (extension == ".safetensors" || path.filename() == kSafetensorsIndexFileName) {
    return CheckpointContainer::kSafetensors;
  }
  EREDU_TRY(const bool gguf, has_gguf_magic(path));
  if (gguf) return CheckpointContainer::kGguf;
  return fail(path_error(ErrorCode::kUnsupported,
                         "not a recognised checkpoint (expected a .gguf file, a .safetensors file "
                         "or a SafeTensors model directory)",
                         path));
}

Result<std::unique_ptr<CheckpointSource>> open_checkpoint(const std::filesystem::path& path,
                                                          const OpenCheckpointOptions& options) {
  EREDU_TRY(const CheckpointContainer container, detect_checkpoint_container(path));
  try {
    if (container == CheckpointContainer::kGguf) {
      EREDU_TRY(GgufCheckpointSource source,
                GgufCheckpointSource::open(path, {options.gguf, options.max_open_shards}));
      return std::unique_ptr<CheckpointSource>(
          std::make_unique<GgufCheckpointSource>(std::move(source)));
    }
    EREDU_TRY(
        SafetensorsCheckpointSource source,
        SafetensorsCheckpointSource::open(path, {options.safetensors, options.max_open_shards}));
    return std::unique_ptr<CheckpointSource>(
        std::make_unique<SafetensorsCheckpointSource>(std::move(source)));
  } catch (const std::bad_alloc&) {
    return fail(
        path_error(ErrorCode::kLimitExceeded, "out of memory opening the checkpoint", path));
  }
}

}  // namespace eredu::checkpoint
