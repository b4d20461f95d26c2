// Split GGUF sets (see gguf_split.hpp).

#include "eredu/checkpoint/gguf_split.hpp"

#include <cstdio>

namespace eredu::checkpoint {
namespace {

// Five decimal digits as a number; nullopt otherwise.
std::optional<std::uint32_t> five_digits(std::string_view s) {
  if (s.size() != 5) return std::nullopt;
  std::uint32_t value = 0;
  for (char c : s) {
    if (c < '0' || c > '9') return std::nullopt;
    value = value * 10 + static_cast<std::uint32_t>(c - '0');
  }
  return value;
}

Error shard_error(ErrorCode code, std::string message, const std::string& path) {
  return Error(code, std::move(message)).with_path(path);
}

}  // namespace

std::optional<GgufSplitName> parse_gguf_split_name(const std::filesystem::path& path) {
  const std::string file = path.filename().string();
  // <prefix>-NNNNN-of-MMMMM.gguf: the fixed tail is 1 + 5 + 4 + 5 + 5 = 20 characters.
  constexpr std::size_t kTail = 20;
  if (file.size() <= kTail) return std::nullopt;
  const std::string_view tail = std::string_view(file).substr(file.size() - kTail);
  if (tail[0] != '-' || tail.substr(6, 4) != "-of-" || tail.substr(15) != ".gguf") {
    return std::nullopt;
  }
  const auto number = five_digits(tail.substr(1, 5));
  const auto count = five_digits(tail.substr(10, 5));
  if (!number || !count || *number == 0 || *number > *count) return std::nullopt;
  GgufSplitName name;
  name.directory = path.parent_path();
  name.prefix = file.substr(0, file.size() - kTail);
  name.number = *number;
  name.count = *count;
  return name;
}

std::filesystem::path gguf_split_path(const GgufSplitName& name, std::uint32_t number) {
  char tail[32];
  std::snprintf(tail, sizeof(tail), "-%05u-of-%05u.gguf", number, name.count);
  return name.directory / (name.prefix + tail);
}

std::vector<std::filesystem::path> gguf_split_paths(const std::filesystem::path& any_shard) {
  const auto name = parse_gguf_split_name(any_shard);
  if (!name) return {any_shard};
  std::vector<std::filesystem::path> paths;
  for (std::uint32_t i = 1; i <= name->count; ++i)
    paths.push_back(gguf_split_path(*name, i));
  return paths;
}

Result<std::optional<GgufSplitInfo>> read_gguf_split_info(const GgufContents& contents) {
  const bool has_no = contents.find_metadata("split.no") != nullptr;
  const bool has_count = contents.find_metadata("split.count") != nullptr;
  const bool has_tensors = contents.find_metadata("split.tensors.count") != nullptr;
  if (!has_no && !has_count && !has_tensors) return std::optional<GgufSplitInfo>();
  GgufSplitInfo info;
  if (!has_count) {
    return fail(shard_error(ErrorCode::kInvalidModel, "shard has split keys but no split.count",
                            contents.path()));
  }
  EREDU_TRY(info.count, contents.get_u32("split.count"));
  if (info.count == 0) {
    return fail(Error(ErrorCode::kInvalidModel, "split.count is 0")
                    .with_path(contents.path())
                    .with_subject("split.count")
                    .with_offset(contents.find_metadata("split.count")->value_offset));
  }
  if (has_no) {
    EREDU_TRY(info.number, contents.get_u32("split.no"));
  } else if (info.count > 1) {
    return fail(shard_error(ErrorCode::kInvalidModel, "shard of a split set has no split.no",
                            contents.path()));
  }
  if (info.number >= info.count) {
    return fail(Error(ErrorCode::kInvalidModel, "split.no " + std::to_string(info.number) +
                                                    " is not below split.count " +
                                                    std::to_string(info.count))
                    .with_path(contents.path())
                    .with_subject("split.no")
                    .with_offset(contents.find_metadata("split.no")->value_offset));
  }
  if (has_tensors) {
    EREDU_TRY(const std::uint64_t n, contents.get_u64("split.tensors.count"));
    info.tensor_count = n;
  }
  return std::optional<GgufSplitInfo>(info);
}

Result<void> check_gguf_shard(const GgufContents& contents, std::uint32_t index,
                              std::uint32_t count) {
  EREDU_TRY(const auto info, read_gguf_split_info(contents));
  if (!info) {
    if (count == 1) return ok();
    return fail(shard_error(ErrorCode::kInvalidModel,
                            "shard " + std::to_string(index + 1) + " of " + std::to_string(count) +
                                " has no split.count / split.no metadata",
                            contents.path()));
  }
  if (info->count != count) {
    return fail(Error(ErrorCode::kInvalidModel,
                      "shard claims split.count " + std::to_string(info->count) +
                          ", but the set has " + std::to_string(count) + " shards")
                    .with_path(contents.path())
                    .with_subject("split.count")
                    .with_offset(contents.find_metadata("split.count")->value_offset));
  }
  if (info->number != index) {
    const GgufMetadataEntry* no = contents.find_metadata("split.no");
    Error e(ErrorCode::kInvalidModel, "shard claims split.no " + std::to_string(info->number) +
                                          ", but its file name makes it shard " +
                                          std::to_string(index) + " (0-based)");
    (void)std::move(e).with_path(contents.path()).with_subject("split.no");
    if (no != nullptr) (void)std::move(e).with_offset(no->value_offset);
    return fail(std::move(e));
  }
  return ok();
}

Result<GgufShardSet> GgufShardSet::open(const std::filesystem::path& any_shard,
                                        const GgufLimits& limits, GgufShardSetOptions options) {
  const auto name = parse_gguf_split_name(any_shard);
  const std::vector<std::filesystem::path> paths = gguf_split_paths(any_shard);
  std::vector<GgufShard> shards;
  for (std::size_t i = 0; i < paths.size(); ++i) {
    auto mapped = MappedFile::open(paths[i]);
    if (!mapped) {
      Error e = std::move(mapped).error();
      if (e.code() == ErrorCode::kNotFound && name) {
        return fail(Error(ErrorCode::kNotFound, "shard " + std::to_string(i + 1) + " of " +
                                                    std::to_string(paths.size()) +
                                                    " of the split set is missing")
                        .with_path(paths[i].string()));
      }
      return fail(std::move(e));
    }
    EREDU_TRY(auto contents, parse_gguf_contents(**mapped, limits));
    GgufShard shard{paths[i], std::move(contents), nullptr};
    if (options.keep_mappings) shard.mapping = std::move(*mapped);
    shards.push_back(std::move(shard));
  }
  if (!name) {
    // An ordinary file name: it must not claim to be part of a larger set, since the other shard
    // names could not be derived.
    EREDU_TRY(const auto info, read_gguf_split_info(*shards.front().contents));
    if (info && info->count > 1) {
      return fail(shard_error(ErrorCode::kInvalidModel,
                              "file declares split.count " + std::to_string(info->count) +
                                  " but its name does not follow <name>-NNNNN-of-NNNNN.gguf, so "
                                  "the other shards cannot be located",
                              any_shard.string()));
    }
  }
  return assemble(std::move(shards));
}

Result<GgufShardSet> GgufShardSet::assemble(std::vector<GgufShard> shards) {
  if (shards.empty()) return fail(ErrorCode::kInvalidArgument, "a GGUF set needs a shard");
  if (shards.size() > UINT32_MAX) return fail(ErrorCode::kInvalidArgument, "too many shards");
  const auto count = static_cast<std::uint32_t>(shards.size());
  std::optional<std::uint64_t> declared_total;
  std::uint64_t total = 0;
  for (std::uint32_t i = 0; i < count; ++i) {
    if (!shards[i].contents) return fail(ErrorCode::kInvalidArgument, "shard without contents");
    const GgufContents& c = *shards[i].contents;
    EREDU_TRY_VOID(check_gguf_shard(c, i, count));
    EREDU_TRY(const auto info, read_gguf_split_info(c));
    if (info && info->tensor_count) {
      if (declared_total && *declared_total != *info->tensor_count) {
        return fail(Error(ErrorCode::kInvalidModel,
                          "split.tensors.count " + std::to_string(*info->tensor_count) +
                              " disagrees with another shard's " + std::to_string(*declared_total))
                        .with_path(c.path())
                        .with_subject("split.tensors.count"));
      }
      declared_total = info->tensor_count;
    }
    total += c.tensors().size();
  }
  if (declared_total && *declared_total != total) {
    return fail(Error(ErrorCode::kInvalidModel,
                      "split.tensors.count is " + std::to_string(*declared_total) +
                          " but the shards hold " + std::to_string(total) + " tensors")
                    .with_path(shards.front().contents->path())
                    .with_subject("split.tensors.count"));
  }
  GgufShardSet set;
  set.shards_ = std::move(shards);
  set.tensors_.reserve(static_cast<std::size_t>(total));
  for (std::uint32_t i = 0; i < count; ++i) {
    for (const GgufTensorInfo& info : set.shards_[i].contents->tensors()) {
      const auto [it, inserted] = set.index_.emplace(info.name, set.tensors_.size());
      if (!inserted) {
        const GgufShard& other = set.shards_[set.tensors_[it->second].shard];
        return fail(Error(ErrorCode::kInvalidModel,
                          "tensor appears in two shards (also in " + other.path.string() + ")")
                        .with_path(set.shards_[i].path.string())
                        .with_subject(info.name)
                        .with_offset(info.info_offset));
      }
      set.tensors_.push_back(GgufShardTensor{&info, i});
    }
  }
  return set;
}

const GgufShardTensor* GgufShardSet::find_tensor(std::string_view name) const noexcept {
  const auto it = index_.find(name);
  return it == index_.end() ? nullptr : &tensors_[it->second];
}

Result<std::span<const std::byte>> GgufShardSet::tensor_bytes(const GgufShardTensor& tensor) const {
  if (tensor.shard >= shards_.size() || tensor.info == nullptr) {
    return fail(ErrorCode::kInvalidArgument, "tensor does not belong to this set");
  }
  const GgufShard& shard = shards_[tensor.shard];
  if (!shard.mapping) {
    return fail(Error(ErrorCode::kInvalidArgument,
                      "shard is not mapped (set opened with keep_mappings = false)")
                    .with_path(shard.path.string())
                    .with_subject(tensor.info->name));
  }
  auto span = shard.mapping->slice(tensor.info->data_offset, tensor.info->byte_size);
  if (!span) return fail(std::move(span).error().with_subject(tensor.info->name));
  return span;
}

}  // namespace eredu::checkpoint
