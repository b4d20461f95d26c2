// The streaming GGUF writer (see gguf_stream_writer.hpp). Field encodings come from
// encode_gguf_value (shared with GgufWriter) so that both writers produce the same bytes.

#include "eredu/checkpoint/gguf_stream_writer.hpp"

#include <algorithm>
#include <array>
#include <cerrno>
#include <cstring>

namespace eredu::checkpoint {
namespace {

template <typename T>
void put(std::vector<std::byte>& out, T value) {
  const auto* p = reinterpret_cast<const std::byte*>(&value);
  out.insert(out.end(), p, p + sizeof(T));
}

// Bytes of zero padding that bring `position` to a multiple of `alignment` (non-zero).
std::uint64_t padding_for(std::uint64_t position, std::uint64_t alignment) {
  return (alignment - position % alignment) % alignment;
}

}  // namespace

GgufStreamWriter::~GgufStreamWriter() {
  close_file();
}

GgufStreamWriter::GgufStreamWriter(GgufStreamWriter&& other) noexcept
    : options_(other.options_),
      metadata_(std::move(other.metadata_)),
      tensors_(std::move(other.tensors_)),
      file_size_(other.file_size_),
      path_(std::move(other.path_)),
      file_(std::exchange(other.file_, nullptr)),
      opened_(other.opened_),
      current_(other.current_),
      current_written_(other.current_written_) {}

GgufStreamWriter& GgufStreamWriter::operator=(GgufStreamWriter&& other) noexcept {
  if (this != &other) {
    close_file();
    options_ = other.options_;
    metadata_ = std::move(other.metadata_);
    tensors_ = std::move(other.tensors_);
    file_size_ = other.file_size_;
    path_ = std::move(other.path_);
    file_ = std::exchange(other.file_, nullptr);
    opened_ = other.opened_;
    current_ = other.current_;
    current_written_ = other.current_written_;
  }
  return *this;
}

GgufStreamWriter& GgufStreamWriter::add_metadata(std::string key, GgufValue value) {
  metadata_.emplace_back(std::move(key), std::move(value));
  return *this;
}

GgufStreamWriter& GgufStreamWriter::set_alignment(std::uint32_t alignment) {
  options_.alignment = alignment;
  return add_metadata("general.alignment", GgufValue(alignment));
}

Result<void> GgufStreamWriter::add_tensor_info(std::string name, DType dtype,
                                               std::span<const std::uint64_t> shape) {
  if (opened_) {
    return fail(Error(ErrorCode::kInvalidArgument,
                      "GGUF stream writer: tensors must be declared before open()")
                    .with_subject(name));
  }
  const DTypeInfo& info = dtype_info(dtype);
  if (!info.ggml_type_id) {
    return fail(Error(ErrorCode::kInvalidArgument,
                      "dtype " + std::string(info.name) + " cannot be stored in GGUF")
                    .with_subject(name));
  }
  auto size = checked_byte_size(dtype, shape);
  if (!size) {
    return fail(Error(size.error().code() == ErrorCode::kOverflow ? ErrorCode::kOverflow
                                                                  : ErrorCode::kInvalidArgument,
                      size.error().message())
                    .with_subject(name));
  }
  GgufStreamTensor tensor;
  tensor.name = std::move(name);
  tensor.dtype = dtype;
  tensor.ne.assign(shape.rbegin(), shape.rend());
  tensor.byte_size = *size;
  tensors_.push_back(std::move(tensor));
  return ok();
}

Result<std::pair<std::vector<std::uint64_t>, std::uint64_t>> GgufStreamWriter::place_payloads()
    const {
  if (options_.alignment == 0) {
    return fail(ErrorCode::kInvalidArgument, "GGUF writer alignment must not be 0");
  }
  std::vector<std::uint64_t> placed;
  placed.reserve(tensors_.size());
  std::uint64_t cursor = 0;
  for (const GgufStreamTensor& t : tensors_) {
    placed.push_back(cursor);
    if (t.byte_size > UINT64_MAX - cursor - options_.alignment) {
      return fail(Error(ErrorCode::kOverflow, "GGUF stream writer: data section size overflows")
                      .with_subject(t.name));
    }
    cursor += t.byte_size;
    cursor += padding_for(cursor, options_.alignment);
  }
  return std::pair{std::move(placed), cursor};
}

Result<std::vector<std::byte>> GgufStreamWriter::header_bytes() const {
  EREDU_TRY(const auto placement, place_payloads());
  std::vector<std::byte> out;
  // The magic as one 32-bit word in file order ("GGUF"); inserting a braced list into the empty
  // vector trips GCC 12's -O3 -Wstringop-overflow false positive.
  out.reserve(256);
  put(out, std::uint32_t{0x46554747});
  put<std::uint32_t>(out, options_.version);
  put<std::uint64_t>(out, tensors_.size());
  put<std::uint64_t>(out, metadata_.size());
  for (const auto& [key, value] : metadata_) {
    encode_gguf_value(GgufValue(key), out);
    put<std::uint32_t>(out, static_cast<std::uint32_t>(value.type()));
    encode_gguf_value(value, out);
  }
  for (std::size_t i = 0; i < tensors_.size(); ++i) {
    const GgufStreamTensor& t = tensors_[i];
    encode_gguf_value(GgufValue(t.name), out);
    put<std::uint32_t>(out, static_cast<std::uint32_t>(t.ne.size()));
    for (std::uint64_t d : t.ne)
      put<std::uint64_t>(out, d);
    put<std::uint32_t>(out, *dtype_info(t.dtype).ggml_type_id);
    put<std::uint64_t>(out, placement.first[i]);
  }
  out.resize(out.size() + padding_for(out.size(), options_.alignment), std::byte{0});
  return out;
}

Result<void> GgufStreamWriter::open(const std::filesystem::path& path) {
  if (opened_) {
    return fail(Error(ErrorCode::kInvalidArgument, "GGUF stream writer: already opened")
                    .with_path(path.string()));
  }
  EREDU_TRY(const auto placement, place_payloads());
  EREDU_TRY(const std::vector<std::byte> header, header_bytes());
  if (placement.second > UINT64_MAX - header.size()) {
    return fail(ErrorCode::kOverflow, "GGUF stream writer: file size overflows");
  }
  file_ = std::fopen(path.c_str(), "wb");
  if (file_ == nullptr) {
    return fail(Error(ErrorCode::kIo, std::string("cannot create: ") + std::strerror(errno))
                    .with_path(path.string()));
  }
  path_ = path;
  opened_ = true;
  for (std::size_t i = 0; i < tensors_.size(); ++i)
    tensors_[i].relative_offset = placement.first[i];
  file_size_ = header.size() + placement.second;
  current_ = 0;
  current_written_ = 0;
  EREDU_TRY_VOID(write_raw(header));
  // Empty tensors are complete at once (their padding is empty too: the cursor stays aligned).
  while (current_ < tensors_.size() && tensors_[current_].byte_size == 0)
    ++current_;
  return ok();
}

Result<void> GgufStreamWriter::write_tensor_data(std::span<const std::byte> chunk) {
  if (file_ == nullptr) {
    return fail(ErrorCode::kInvalidArgument, "GGUF stream writer: not open");
  }
  if (chunk.empty()) return ok();
  if (current_ >= tensors_.size()) {
    return fail(
        Error(ErrorCode::kInvalidArgument, "GGUF stream writer: " + std::to_string(chunk.size()) +
                                               " bytes written after the last tensor's payload")
            .with_path(path_.string()));
  }
  const GgufStreamTensor& t = tensors_[current_];
  const std::uint64_t left = t.byte_size - current_written_;
  if (chunk.size() > left) {
    return fail(Error(ErrorCode::kInvalidArgument,
                      "GGUF stream writer: a chunk of " + std::to_string(chunk.size()) +
                          " bytes exceeds the " + std::to_string(left) +
                          " payload bytes left for this tensor")
                    .with_path(path_.string())
                    .with_subject(t.name));
  }
  EREDU_TRY_VOID(write_raw(chunk));
  current_written_ += chunk.size();
  if (current_written_ == t.byte_size) {
    EREDU_TRY_VOID(write_padding(padding_for(t.relative_offset + t.byte_size, options_.alignment)));
    current_written_ = 0;
    ++current_;
    while (current_ < tensors_.size() && tensors_[current_].byte_size == 0)
      ++current_;
  }
  return ok();
}

Result<void> GgufStreamWriter::close() {
  if (file_ == nullptr) {
    return fail(ErrorCode::kInvalidArgument, "GGUF stream writer: not open");
  }
  if (current_ < tensors_.size()) {
    const GgufStreamTensor& t = tensors_[current_];
    close_file();
    return fail(Error(ErrorCode::kInvalidArgument,
                      "GGUF stream writer: closed after " + std::to_string(current_written_) +
                          " of " + std::to_string(t.byte_size) + " payload bytes of this tensor")
                    .with_path(path_.string())
                    .with_subject(t.name));
  }
  const bool flushed = std::fflush(file_) == 0;
  const bool closed = std::fclose(file_) == 0;
  file_ = nullptr;
  if (!flushed || !closed) {
    return fail(Error(ErrorCode::kIo, "flush/close failed").with_path(path_.string()));
  }
  return ok();
}

Result<void> GgufStreamWriter::write_raw(std::span<const std::byte> bytes) {
  if (std::fwrite(bytes.data(), 1, bytes.size(), file_) != bytes.size()) {
    const int error = errno;
    close_file();
    return fail(Error(ErrorCode::kIo, std::string("short write: ") + std::strerror(error))
                    .with_path(path_.string()));
  }
  return ok();
}

Result<void> GgufStreamWriter::write_padding(std::uint64_t count) {
  static constexpr std::array<std::byte, 256> kZeros{};
  while (count > 0) {
    const std::uint64_t n = std::min<std::uint64_t>(count, kZeros.size());
    EREDU_TRY_VOID(write_raw(std::span<const std::byte>(kZeros.data(), n)));
    count -= n;
  }
  return ok();
}

void GgufStreamWriter::close_file() noexcept {
  if (file_ != nullptr) {
    std::fclose(file_);
    file_ = nullptr;
  }
}

}  // namespace eredu::checkpoint
