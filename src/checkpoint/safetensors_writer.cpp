// The deterministic SafeTensors writer (see include/eredu/checkpoint/safetensors_writer.hpp).

#include "eredu/checkpoint/safetensors_writer.hpp"

#include <cstring>
#include <fstream>
#include <new>
#include <nlohmann/json.hpp>
#include <system_error>

namespace eredu::checkpoint {
namespace {

void append_le64(std::vector<std::byte>& out, std::uint64_t value) {
  for (int i = 0; i < 8; ++i) {
    out.push_back(static_cast<std::byte>(value & 0xFF));
    value >>= 8;
  }
}

// nlohmann throws type_error 316 on invalid UTF-8 while dumping; translate it.
Result<std::string> dump(const nlohmann::json& value, int indent) {
  try {
    return value.dump(indent);
  } catch (const nlohmann::json::exception& e) {
    return fail(ErrorCode::kInvalidArgument, std::string("cannot encode JSON: ") + e.what());
  } catch (const std::bad_alloc&) {
    return fail(ErrorCode::kLimitExceeded, "out of memory while encoding JSON");
  }
}

}  // namespace

Result<void> SafetensorsWriter::add(std::string name, DType dtype, std::vector<std::uint64_t> shape,
                                    std::span<const std::byte> data) {
  const DTypeInfo& info = dtype_info(dtype);
  if (info.safetensors_name.empty()) {
    return fail(Error(ErrorCode::kInvalidArgument,
                      "dtype " + std::string(info.name) + " cannot be stored in SafeTensors")
                    .with_subject(name));
  }
  if (name.empty() || name == "__metadata__") {
    return fail(Error(ErrorCode::kInvalidArgument, "invalid tensor name").with_subject(name));
  }
  EREDU_TRY(const std::uint64_t size, checked_byte_size(dtype, shape));
  if (size != data.size()) {
    return fail(Error(ErrorCode::kInvalidArgument, std::to_string(data.size()) +
                                                       " bytes given, the dtype and shape need " +
                                                       std::to_string(size))
                    .with_subject(name));
  }
  if (tensors_.count(name) != 0) {
    return fail(Error(ErrorCode::kDuplicate, "tensor added twice").with_subject(name));
  }
  Pending pending{dtype, std::move(shape), std::vector<std::byte>(data.begin(), data.end())};
  tensors_.emplace(std::move(name), std::move(pending));
  return ok();
}

void SafetensorsWriter::set_metadata(std::string key, std::string value) {
  metadata_[std::move(key)] = std::move(value);
}

std::vector<std::string> SafetensorsWriter::tensor_names() const {
  std::vector<std::string> names;
  names.reserve(tensors_.size());
  for (const auto& [name, pending] : tensors_)
    names.push_back(name);
  return names;
}

std::uint64_t SafetensorsWriter::payload_bytes() const noexcept {
  std::uint64_t total = 0;
  for (const auto& [name, pending] : tensors_)
    total += pending.data.size();
  return total;
}

Result<std::string> SafetensorsWriter::header_json(const SafetensorsWriteOptions& options) const {
  nlohmann::json header = nlohmann::json::object();  // std::map: keys in bytewise order
  if (!metadata_.empty()) header["__metadata__"] = metadata_;
  std::uint64_t offset = 0;
  for (const auto& [name, pending] : tensors_) {
    const std::uint64_t end = offset + pending.data.size();
    header[name] = {{"dtype", std::string(dtype_info(pending.dtype).safetensors_name)},
                    {"shape", pending.shape},
                    {"data_offsets", {offset, end}}};
    offset = end;
  }
  EREDU_TRY(std::string text, dump(header, -1));
  const std::uint64_t alignment = options.header_alignment <= 1 ? 1 : options.header_alignment;
  while ((8 + text.size()) % alignment != 0)
    text.push_back(' ');
  return text;
}

Result<std::vector<std::byte>> SafetensorsWriter::serialize(
    const SafetensorsWriteOptions& options) const {
  EREDU_TRY(const std::string header, header_json(options));
  std::vector<std::byte> out;
  out.reserve(8 + header.size() + payload_bytes());
  append_le64(out, header.size());
  const auto* text = reinterpret_cast<const std::byte*>(header.data());
  out.insert(out.end(), text, text + header.size());
  for (const auto& [name, pending] : tensors_) {
    out.insert(out.end(), pending.data.begin(), pending.data.end());
  }
  return out;
}

Result<void> SafetensorsWriter::write_file(const std::filesystem::path& path,
                                           const SafetensorsWriteOptions& options) const {
  EREDU_TRY(const std::vector<std::byte> bytes, serialize(options));
  return write_safetensors_bytes(path, bytes);
}

std::vector<std::byte> raw_safetensors_bytes(std::string_view header_text,
                                             std::span<const std::byte> payload,
                                             std::optional<std::uint64_t> declared_length) {
  std::vector<std::byte> out;
  out.reserve(8 + header_text.size() + payload.size());
  append_le64(out, declared_length.value_or(header_text.size()));
  const auto* text = reinterpret_cast<const std::byte*>(header_text.data());
  out.insert(out.end(), text, text + header_text.size());
  out.insert(out.end(), payload.begin(), payload.end());
  return out;
}

Result<void> write_safetensors_bytes(const std::filesystem::path& path,
                                     std::span<const std::byte> bytes) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  if (out) {
    out.write(reinterpret_cast<const char*>(bytes.data()),
              static_cast<std::streamsize>(bytes.size()));
    out.close();
  }
  if (!out) {
    return fail(Error(ErrorCode::kIo, "cannot write the file").with_path(path.string()));
  }
  return ok();
}

Result<std::string> safetensors_index_json(const std::map<std::string, std::string>& weight_map,
                                           std::optional<std::uint64_t> total_size) {
  nlohmann::json index = nlohmann::json::object();
  if (total_size) index["metadata"] = {{"total_size", *total_size}};
  index["weight_map"] = weight_map;
  EREDU_TRY(std::string text, dump(index, 2));
  text.push_back('\n');
  return text;
}

Result<void> write_sharded_safetensors(const std::filesystem::path& directory,
                                       const std::vector<SafetensorsShardSpec>& shards,
                                       const SafetensorsWriteOptions& options) {
  std::error_code ec;
  std::filesystem::create_directories(directory, ec);
  if (ec) {
    return fail(Error(ErrorCode::kIo, "cannot create the directory: " + ec.message())
                    .with_path(directory.string()));
  }
  std::map<std::string, std::string> weight_map;
  std::uint64_t total = 0;
  for (const SafetensorsShardSpec& shard : shards) {
    for (std::string& name : shard.writer.tensor_names()) {
      if (weight_map.count(name) != 0) {
        return fail(Error(ErrorCode::kDuplicate, "tensor is in two shards: " + weight_map[name] +
                                                     " and " + shard.file_name)
                        .with_subject(name));
      }
      weight_map.emplace(std::move(name), shard.file_name);
    }
    total += shard.writer.payload_bytes();
    EREDU_TRY_VOID(shard.writer.write_file(directory / shard.file_name, options));
  }
  EREDU_TRY(const std::string index, safetensors_index_json(weight_map, total));
  return write_safetensors_bytes(directory / "model.safetensors.index.json",
                                 std::as_bytes(std::span(index.data(), index.size())));
}

}  // namespace eredu::checkpoint
