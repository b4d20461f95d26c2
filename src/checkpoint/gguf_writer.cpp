// The deterministic GGUF writer (see gguf_writer.hpp).

#include "eredu/checkpoint/gguf_writer.hpp"

#include <cerrno>
#include <cstdio>
#include <cstring>

namespace eredu::checkpoint {
namespace {

template <typename T>
void put(std::vector<std::byte>& out, T value) {
  const auto* p = reinterpret_cast<const std::byte*>(&value);
  out.insert(out.end(), p, p + sizeof(T));
}

void put_string(std::vector<std::byte>& out, std::string_view s) {
  put<std::uint64_t>(out, s.size());
  const auto* p = reinterpret_cast<const std::byte*>(s.data());
  out.insert(out.end(), p, p + s.size());
}

void pad_to(std::vector<std::byte>& out, std::uint64_t alignment) {
  while (out.size() % alignment != 0)
    out.push_back(std::byte{0});
}

}  // namespace

void encode_gguf_array(const GgufArray& array, std::vector<std::byte>& out) {
  put<std::uint32_t>(out, static_cast<std::uint32_t>(array.element_type()));
  put<std::uint64_t>(out, array.size());
  switch (array.element_type()) {
    case GgufValueType::kString:
      for (const std::string& s : array.strings())
        put_string(out, s);
      break;
    case GgufValueType::kArray:
      for (const GgufArray& inner : array.arrays())
        encode_gguf_array(inner, out);
      break;
    default: {
      const auto encoded = array.encoded_scalars();
      out.insert(out.end(), encoded.begin(), encoded.end());
    }
  }
}

void encode_gguf_value(const GgufValue& value, std::vector<std::byte>& out) {
  std::visit(
      [&](const auto& v) {
        using T = std::decay_t<decltype(v)>;
        if constexpr (std::is_same_v<T, std::string>) {
          put_string(out, v);
        } else if constexpr (std::is_same_v<T, GgufArray>) {
          encode_gguf_array(v, out);
        } else if constexpr (std::is_same_v<T, bool>) {
          put<std::uint8_t>(out, v ? 1 : 0);
        } else {
          put<T>(out, v);
        }
      },
      value.storage());
}

GgufWriter& GgufWriter::add_metadata(std::string key, GgufValue value) {
  metadata_.emplace_back(std::move(key), std::move(value));
  return *this;
}

GgufWriter& GgufWriter::set_alignment(std::uint32_t alignment) {
  options_.alignment = alignment;
  return add_metadata("general.alignment", GgufValue(alignment));
}

Result<void> GgufWriter::add_tensor(std::string name, DType dtype,
                                    std::span<const std::uint64_t> shape,
                                    std::span<const std::byte> data) {
  const DTypeInfo& info = dtype_info(dtype);
  if (!info.ggml_type_id) {
    return fail(Error(ErrorCode::kInvalidArgument,
                      "dtype " + std::string(info.name) + " cannot be stored in GGUF")
                    .with_subject(name));
  }
  auto size = checked_byte_size(dtype, shape);
  if (!size) {
    return fail(Error(ErrorCode::kInvalidArgument, size.error().message()).with_subject(name));
  }
  if (*size != data.size()) {
    return fail(
        Error(ErrorCode::kInvalidArgument, "tensor data has " + std::to_string(data.size()) +
                                               " bytes, its shape needs " + std::to_string(*size))
            .with_subject(name));
  }
  GgufWriterTensor tensor;
  tensor.name = std::move(name);
  tensor.ggml_type = *info.ggml_type_id;
  tensor.ne.assign(shape.rbegin(), shape.rend());
  tensor.data.assign(data.begin(), data.end());
  tensors_.push_back(std::move(tensor));
  return ok();
}

GgufWriter& GgufWriter::add_raw_tensor(GgufWriterTensor tensor) {
  tensors_.push_back(std::move(tensor));
  return *this;
}

Result<GgufImage> GgufWriter::build() const {
  if (options_.alignment == 0) {
    return fail(ErrorCode::kInvalidArgument, "GGUF writer alignment must not be 0");
  }
  GgufImage image;
  std::vector<std::byte>& out = image.bytes;
  GgufLayout& layout = image.layout;
  out.insert(out.end(), {std::byte{'G'}, std::byte{'G'}, std::byte{'U'}, std::byte{'F'}});
  put<std::uint32_t>(out, options_.version);
  put<std::uint64_t>(out, tensors_.size());
  put<std::uint64_t>(out, metadata_.size());
  for (const auto& [key, value] : metadata_) {
    GgufKvLayout kv;
    kv.key = key;
    kv.offset = out.size();
    kv.key_offset = kv.offset + 8;
    put_string(out, key);
    kv.type_offset = out.size();
    put<std::uint32_t>(out, static_cast<std::uint32_t>(value.type()));
    kv.value_offset = out.size();
    encode_gguf_value(value, out);
    kv.end = out.size();
    layout.metadata.push_back(std::move(kv));
  }
  // Data placement first (relative offsets), so that the infos can declare them.
  std::vector<std::uint64_t> placed;
  std::uint64_t cursor = 0;
  for (const GgufWriterTensor& t : tensors_) {
    placed.push_back(cursor);
    const std::uint64_t size = t.data.size();
    if (size > UINT64_MAX - cursor - options_.alignment) {
      return fail(ErrorCode::kOverflow, "GGUF writer: data section size overflows");
    }
    cursor += size;
    cursor += (options_.alignment - cursor % options_.alignment) % options_.alignment;
  }
  for (std::size_t i = 0; i < tensors_.size(); ++i) {
    const GgufWriterTensor& t = tensors_[i];
    GgufTensorLayout tl;
    tl.name = t.name;
    tl.offset = out.size();
    tl.name_offset = tl.offset + 8;
    put_string(out, t.name);
    tl.rank_offset = out.size();
    put<std::uint32_t>(out, static_cast<std::uint32_t>(t.ne.size()));
    tl.dims_offset = out.size();
    for (std::uint64_t d : t.ne)
      put<std::uint64_t>(out, d);
    tl.type_offset = out.size();
    put<std::uint32_t>(out, t.ggml_type);
    tl.offset_offset = out.size();
    put<std::uint64_t>(out, t.declared_offset.value_or(placed[i]));
    tl.end = out.size();
    layout.tensors.push_back(std::move(tl));
  }
  layout.infos_end = out.size();
  pad_to(out, options_.alignment);
  layout.data_section_offset = out.size();
  for (std::size_t i = 0; i < tensors_.size(); ++i) {
    layout.tensors[i].data_offset = out.size();
    layout.tensors[i].data_size = tensors_[i].data.size();
    out.insert(out.end(), tensors_[i].data.begin(), tensors_[i].data.end());
    pad_to(out, options_.alignment);
  }
  layout.size = out.size();
  return image;
}

Result<void> write_bytes_to_file(const std::filesystem::path& path,
                                 std::span<const std::byte> bytes) {
  std::FILE* f = std::fopen(path.c_str(), "wb");
  if (f == nullptr) {
    return fail(Error(ErrorCode::kIo, std::string("cannot create: ") + std::strerror(errno))
                    .with_path(path.string()));
  }
  const std::size_t written = bytes.empty() ? 0 : std::fwrite(bytes.data(), 1, bytes.size(), f);
  const bool closed = std::fclose(f) == 0;
  if (written != bytes.size() || !closed) {
    return fail(Error(ErrorCode::kIo, "short write").with_path(path.string()));
  }
  return ok();
}

Result<void> GgufWriter::write_file(const std::filesystem::path& path) const {
  EREDU_TRY(const GgufImage image, build());
  return write_bytes_to_file(path, image.bytes);
}

}  // namespace eredu::checkpoint
