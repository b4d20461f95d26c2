#pragma once
// Opens a checkpoint of any supported kind and describes it (report.hpp).

#include <filesystem>

#include "eredu/core/result.hpp"
#include "report.hpp"

namespace eredu::inspect {

// A GGUF file (any shard of a split set: the whole set is opened), a .safetensors file, a
// model.safetensors.index.json, or a SafeTensors model directory. The container is recognized by
// its first bytes and its name. Errors are the readers' (path, subject, offset); a missing path is
// kNotFound, an unrecognized file kInvalidModel.
[[nodiscard]] Result<Report> inspect_path(const std::filesystem::path& path);

// The two halves, for callers that know the format.
[[nodiscard]] Result<Report> inspect_gguf(const std::filesystem::path& path);
[[nodiscard]] Result<Report> inspect_safetensors(const std::filesystem::path& path);

}  // namespace eredu::inspect
