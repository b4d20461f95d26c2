// Container detection: a directory is a SafeTensors model; a file is recognized by its first
// bytes ("GGUF", or an 8-byte header length followed by '{') and, for files whose bytes say
// neither, by its extension, so that a damaged .gguf still reaches the GGUF reader and gets its
// precise error instead of a generic one.

#include "inspect.hpp"

#include <array>
#include <cstddef>
#include <fstream>
#include <string>
#include <system_error>

namespace eredu::inspect {
namespace {

enum class Kind { kGguf, kSafetensors, kUnknown };

bool has_extension(const std::filesystem::path& path, std::string_view ext) {
  return path.extension().string() == ext;
}

// The kind a regular file's first bytes and name say it is.
Kind classify_file(const std::filesystem::path& path, std::span<const char> head) {
  const std::string_view bytes(head.data(), head.size());
  if (bytes.starts_with("GGUF") || bytes.starts_with("FUGG")) return Kind::kGguf;  // FUGG: BE
  if (has_extension(path, ".gguf")) return Kind::kGguf;
  if (has_extension(path, ".safetensors") || has_extension(path, ".json")) {
    return Kind::kSafetensors;
  }
  // A SafeTensors file: an 8-byte length, then the JSON header's opening brace.
  if (bytes.size() >= 9 && bytes[8] == '{') return Kind::kSafetensors;
  return Kind::kUnknown;
}

}  // namespace

Result<Report> inspect_path(const std::filesystem::path& path) {
  std::error_code ec;
  const auto status = std::filesystem::status(path, ec);
  if (ec || !std::filesystem::exists(status)) {
    if (ec && ec != std::errc::no_such_file_or_directory) {
      return fail(Error(ErrorCode::kIo, "cannot inspect the path: " + ec.message())
                      .with_path(path.string()));
    }
    return fail(Error(ErrorCode::kNotFound, "no such file or directory").with_path(path.string()));
  }
  if (std::filesystem::is_directory(status)) return inspect_safetensors(path);
  if (!std::filesystem::is_regular_file(status)) {
    return fail(Error(ErrorCode::kInvalidArgument, "not a regular file or a directory")
                    .with_path(path.string()));
  }

  std::array<char, 9> head{};
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    return fail(Error(ErrorCode::kIo, "cannot open the file for reading").with_path(path.string()));
  }
  in.read(head.data(), static_cast<std::streamsize>(head.size()));
  const auto got = static_cast<std::size_t>(in.gcount());

  switch (classify_file(path, std::span<const char>(head.data(), got))) {
    case Kind::kGguf:
      return inspect_gguf(path);
    case Kind::kSafetensors:
      return inspect_safetensors(path);
    case Kind::kUnknown:
      break;
  }
  return fail(Error(ErrorCode::kInvalidModel,
                    "not a GGUF or SafeTensors file: it neither starts with \"GGUF\" nor with an "
                    "8-byte header length followed by '{'")
                  .with_path(path.string())
                  .with_offset(0));
}

}  // namespace eredu::inspect
