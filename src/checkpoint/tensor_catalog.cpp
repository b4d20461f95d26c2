#include "eredu/checkpoint/tensor_catalog.hpp"

#include "eredu/checkpoint/selection.hpp"

namespace eredu::checkpoint {
namespace {

Error entry_error(ErrorCode code, std::string message, const TensorMetadata& entry) {
  return Error(code, std::move(message)).with_subject(entry.name).with_path(entry.shard_path);
}

}  // namespace

std::uint64_t TensorMetadata::element_count() const noexcept {
  auto count = checked_element_count(shape);
  return count ? *count : 0;
}

Result<TensorCatalog> TensorCatalog::create(std::vector<TensorMetadata> entries) {
  TensorCatalog catalog;
  std::map<std::uint32_t, std::string> shard_paths;
  for (std::size_t i = 0; i < entries.size(); ++i) {
    const TensorMetadata& entry = entries[i];
    if (entry.name.empty()) {
      return fail(Error(ErrorCode::kInvalidModel,
                        "tensor entry " + std::to_string(i) + " has an empty name")
                      .with_path(entry.shard_path));
    }
    if (catalog.index_.find(entry.name) != catalog.index_.end()) {
      return fail(entry_error(ErrorCode::kDuplicate, "tensor name appears more than once", entry));
    }
    auto expected = checked_byte_size(entry.dtype, entry.shape);
    if (!expected) {
      return fail(entry_error(expected.error().code(),
                              "shape " + shape_to_string(entry.shape) + " in " +
                                  std::string(to_string(entry.dtype)) + ": " +
                                  expected.error().message(),
                              entry));
    }
    if (*expected != entry.byte_length) {
      return fail(entry_error(ErrorCode::kInvalidModel,
                              "byte length " + std::to_string(entry.byte_length) +
                                  " does not match shape " + shape_to_string(entry.shape) + " in " +
                                  std::string(to_string(entry.dtype)) + " (" +
                                  std::to_string(*expected) + " bytes)",
                              entry));
    }
    auto [it, inserted] = shard_paths.emplace(entry.shard_index, entry.shard_path);
    if (!inserted && it->second != entry.shard_path) {
      return fail(entry_error(ErrorCode::kInvalidModel,
                              "shard index " + std::to_string(entry.shard_index) +
                                  " is given two paths: '" + it->second + "' and '" +
                                  entry.shard_path + "'",
                              entry));
    }
    if (entry.byte_length > UINT64_MAX - catalog.total_bytes_) {
      return fail(entry_error(ErrorCode::kOverflow, "total tensor bytes overflow 64 bits", entry));
    }
    catalog.total_bytes_ += entry.byte_length;
    catalog.index_.emplace(entry.name, i);
  }
  catalog.entries_ = std::move(entries);
  return catalog;
}

const TensorMetadata* TensorCatalog::find(std::string_view name) const noexcept {
  const auto it = index_.find(name);
  return it == index_.end() ? nullptr : &entries_[it->second];
}

Result<const TensorMetadata*> TensorCatalog::get(std::string_view name) const {
  if (const TensorMetadata* entry = find(name)) return entry;
  return fail(Error(ErrorCode::kNotFound, "no tensor of that name in the checkpoint")
                  .with_subject(std::string(name)));
}

std::vector<std::string> TensorCatalog::keys() const {
  std::vector<std::string> out;
  out.reserve(entries_.size());
  for (const TensorMetadata& entry : entries_)
    out.push_back(entry.name);
  return out;
}

}  // namespace eredu::checkpoint
