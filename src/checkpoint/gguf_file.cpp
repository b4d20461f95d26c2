// Typed metadata accessors of GgufContents and payload access of GgufFile.

#include <cmath>
#include <limits>

#include "eredu/checkpoint/gguf.hpp"

namespace eredu::checkpoint {
namespace {

// An integer metadata value as sign and magnitude (so every integer type compares safely).
struct IntegerValue {
  bool negative = false;
  std::uint64_t magnitude = 0;
};

std::optional<IntegerValue> as_integer(const GgufValue& value) {
  return std::visit(
      [](const auto& v) -> std::optional<IntegerValue> {
        using T = std::decay_t<decltype(v)>;
        if constexpr (std::is_same_v<T, bool> || std::is_floating_point_v<T> ||
                      !std::is_integral_v<T>) {
          return std::nullopt;
        } else if constexpr (std::is_signed_v<T>) {
          if (v < 0) {
            return IntegerValue{true, std::uint64_t{0} - static_cast<std::uint64_t>(v)};
          }
          return IntegerValue{false, static_cast<std::uint64_t>(v)};
        } else {
          return IntegerValue{false, static_cast<std::uint64_t>(v)};
        }
      },
      value.storage());
}

}  // namespace

const GgufMetadataEntry* GgufContents::find_metadata(std::string_view key) const noexcept {
  const auto it = metadata_index_.find(key);
  return it == metadata_index_.end() ? nullptr : &metadata_[it->second];
}

const GgufTensorInfo* GgufContents::find_tensor(std::string_view name) const noexcept {
  const auto it = tensor_index_.find(name);
  return it == tensor_index_.end() ? nullptr : &tensors_[it->second];
}

Result<const GgufMetadataEntry*> GgufContents::require(std::string_view key) const {
  const GgufMetadataEntry* entry = find_metadata(key);
  if (entry == nullptr) {
    return fail(Error(ErrorCode::kNotFound, "metadata key is missing")
                    .with_path(path_)
                    .with_subject(std::string(key)));
  }
  return entry;
}

Error GgufContents::type_error(const GgufMetadataEntry& entry, std::string_view expected) const {
  std::string found(to_string(entry.value.type()));
  if (const auto* array = entry.value.get_if<GgufArray>()) {
    found += " of " + std::string(to_string(array->element_type()));
  }
  return Error(ErrorCode::kInvalidModel,
               "metadata key has type " + found + ", expected " + std::string(expected))
      .with_path(path_)
      .with_subject(entry.key)
      .with_offset(entry.value_offset);
}

Result<std::uint64_t> GgufContents::get_u64(std::string_view key) const {
  EREDU_TRY(const GgufMetadataEntry* entry, require(key));
  const auto integer = as_integer(entry->value);
  if (!integer) return fail(type_error(*entry, "an unsigned integer"));
  if (integer->negative) {
    return fail(
        Error(ErrorCode::kInvalidModel, "metadata value is negative, expected an unsigned integer")
            .with_path(path_)
            .with_subject(entry->key)
            .with_offset(entry->value_offset));
  }
  return integer->magnitude;
}

Result<std::uint32_t> GgufContents::get_u32(std::string_view key) const {
  EREDU_TRY(const std::uint64_t value, get_u64(key));
  if (value > std::numeric_limits<std::uint32_t>::max()) {
    const GgufMetadataEntry& entry = *find_metadata(key);
    return fail(Error(ErrorCode::kInvalidModel,
                      "metadata value " + std::to_string(value) + " does not fit in u32")
                    .with_path(path_)
                    .with_subject(entry.key)
                    .with_offset(entry.value_offset));
  }
  return static_cast<std::uint32_t>(value);
}

Result<std::int64_t> GgufContents::get_i64(std::string_view key) const {
  EREDU_TRY(const GgufMetadataEntry* entry, require(key));
  const auto integer = as_integer(entry->value);
  if (!integer) return fail(type_error(*entry, "an integer"));
  const std::uint64_t limit = static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max());
  if (!integer->negative && integer->magnitude > limit) {
    return fail(
        Error(ErrorCode::kInvalidModel,
              "metadata value " + std::to_string(integer->magnitude) + " does not fit in i64")
            .with_path(path_)
            .with_subject(entry->key)
            .with_offset(entry->value_offset));
  }
  if (integer->negative) {
    return static_cast<std::int64_t>(std::uint64_t{0} - integer->magnitude);  // C++20: modular
  }
  return static_cast<std::int64_t>(integer->magnitude);
}

Result<float> GgufContents::get_f32(std::string_view key) const {
  EREDU_TRY(const GgufMetadataEntry* entry, require(key));
  if (const auto* v = entry->value.get_if<float>()) return *v;
  return fail(type_error(*entry, "f32"));
}

Result<double> GgufContents::get_float(std::string_view key) const {
  EREDU_TRY(const GgufMetadataEntry* entry, require(key));
  if (const auto* v = entry->value.get_if<float>()) return static_cast<double>(*v);
  if (const auto* v = entry->value.get_if<double>()) return *v;
  return fail(type_error(*entry, "f32 or f64"));
}

Result<bool> GgufContents::get_bool(std::string_view key) const {
  EREDU_TRY(const GgufMetadataEntry* entry, require(key));
  if (const auto* v = entry->value.get_if<bool>()) return *v;
  return fail(type_error(*entry, "bool"));
}

Result<std::string_view> GgufContents::get_string(std::string_view key) const {
  EREDU_TRY(const GgufMetadataEntry* entry, require(key));
  if (const auto* v = entry->value.get_if<std::string>()) return std::string_view(*v);
  return fail(type_error(*entry, "string"));
}

Result<const GgufArray*> GgufContents::get_array(std::string_view key) const {
  EREDU_TRY(const GgufMetadataEntry* entry, require(key));
  if (const auto* v = entry->value.get_if<GgufArray>()) return v;
  return fail(type_error(*entry, "array"));
}

Result<const GgufArray*> GgufContents::get_array(std::string_view key,
                                                 GgufValueType element_type) const {
  EREDU_TRY(const GgufMetadataEntry* entry, require(key));
  const auto* v = entry->value.get_if<GgufArray>();
  if (v == nullptr || v->element_type() != element_type) {
    return fail(type_error(*entry, "array of " + std::string(to_string(element_type))));
  }
  return v;
}

Result<GgufFile> GgufFile::open(const std::filesystem::path& path, const GgufLimits& limits) {
  EREDU_TRY(auto file, MappedFile::open(path));
  return parse(std::move(file), limits);
}

Result<GgufFile> GgufFile::parse(std::shared_ptr<const MappedFile> file, const GgufLimits& limits) {
  if (!file) return fail(ErrorCode::kInvalidArgument, "GgufFile::parse: no file");
  EREDU_TRY(auto contents, parse_gguf_contents(*file, limits));
  return GgufFile(std::move(contents), std::move(file));
}

Result<GgufFile> GgufFile::attach(std::shared_ptr<const GgufContents> contents,
                                  std::shared_ptr<const MappedFile> file) {
  if (!contents || !file) return fail(ErrorCode::kInvalidArgument, "GgufFile::attach: null input");
  if (file->size() != contents->header().file_size) {
    return fail(Error(ErrorCode::kIo, "file changed since it was parsed: size was " +
                                          std::to_string(contents->header().file_size) +
                                          " bytes, is now " + std::to_string(file->size()))
                    .with_path(file->path()));
  }
  return GgufFile(std::move(contents), std::move(file));
}

Result<std::span<const std::byte>> GgufFile::tensor_bytes(const GgufTensorInfo& info) const {
  auto span = file_->slice(info.data_offset, info.byte_size);
  if (!span) return fail(std::move(span).error().with_subject(info.name));
  return span;
}

Result<std::span<const std::byte>> GgufFile::tensor_bytes(std::string_view name) const {
  const GgufTensorInfo* info = contents_->find_tensor(name);
  if (info == nullptr) {
    return fail(Error(ErrorCode::kNotFound, "no such tensor")
                    .with_path(file_->path())
                    .with_subject(std::string(name)));
  }
  return tensor_bytes(*info);
}

}  // namespace eredu::checkpoint
