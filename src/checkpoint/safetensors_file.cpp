// Opening SafeTensors files: reading just a header, binding a header to a file's bytes, handing
// out a tensor's exact byte span, and the optional finite-values check.

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <new>
#include <vector>

#include "eredu/checkpoint/safetensors.hpp"
#include "safetensors_detail.hpp"

namespace eredu::checkpoint {

// Binds a header just parsed from `file`'s own bytes: no need to fingerprint them again.
struct SafetensorsFileAccess {
  static SafetensorsFile bind(SafetensorsHeader header, std::shared_ptr<const MappedFile> file) {
    SafetensorsFile result;
    result.header_ = std::move(header);
    result.file_ = std::move(file);
    return result;
  }
};

namespace {

Error os_error(const std::filesystem::path& path, const char* what, int err) {
  const ErrorCode code = err == ENOENT ? ErrorCode::kNotFound : ErrorCode::kIo;
  return Error(code, std::string(what) + ": " + std::strerror(err)).with_path(path.string());
}

class Descriptor {
 public:
  explicit Descriptor(int fd) : fd_(fd) {}
  Descriptor(const Descriptor&) = delete;
  Descriptor& operator=(const Descriptor&) = delete;
  ~Descriptor() {
    if (fd_ >= 0) ::close(fd_);
  }
  [[nodiscard]] int get() const { return fd_; }

 private:
  int fd_;
};

// Opens `path` read-only and returns its descriptor and size; a regular file only.
Result<std::uint64_t> open_regular(const std::filesystem::path& path, int& fd_out) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return fail(os_error(path, "cannot open", errno));
  fd_out = fd;
  struct stat st {};
  if (::fstat(fd, &st) != 0) return fail(os_error(path, "cannot stat", errno));
  if (!S_ISREG(st.st_mode)) {
    return fail(Error(ErrorCode::kIo, "not a regular file").with_path(path.string()));
  }
  return static_cast<std::uint64_t>(st.st_size);
}

// Reads exactly out.size() bytes at `offset`; a short read means the file shrank.
Result<void> read_exact(int fd, std::uint64_t offset, std::span<std::byte> out,
                        const std::filesystem::path& path) {
  std::size_t done = 0;
  while (done < out.size()) {
    const ssize_t got =
        ::pread(fd, out.data() + done, out.size() - done, static_cast<off_t>(offset + done));
    if (got < 0) {
      if (errno == EINTR) continue;
      return fail(os_error(path, "cannot read", errno));
    }
    if (got == 0) {
      return fail(Error(ErrorCode::kIo, "the file shrank while it was being read")
                      .with_path(path.string())
                      .with_offset(offset + done));
    }
    done += static_cast<std::size_t>(got);
  }
  return ok();
}

}  // namespace

Result<std::shared_ptr<const MappedFile>> detail::read_file_into_memory(
    const std::filesystem::path& path) {
  int fd = -1;
  auto size = open_regular(path, fd);
  const Descriptor guard(fd);
  if (!size) return fail(std::move(size).error());
  if (*size > SIZE_MAX) {
    return fail(Error(ErrorCode::kLimitExceeded, "the file does not fit in memory")
                    .with_path(path.string()));
  }
  std::vector<std::byte> bytes(static_cast<std::size_t>(*size));
  EREDU_TRY_VOID(read_exact(fd, 0, bytes, path));
  // from_bytes keeps its own copy; the file is briefly held twice (documented in the header).
  return MappedFile::from_bytes(bytes, path.string());
}

namespace {

// Reads a 2-, 4- or 8-byte little-endian word at `p` (no alignment assumed).
std::uint64_t load_le(const std::byte* p, std::size_t width) {
  std::uint64_t value = 0;
  for (std::size_t i = width; i-- > 0;)
    value = (value << 8) | static_cast<std::uint64_t>(p[i]);
  return value;
}

// Whether the `width`-byte little-endian word `bits` of `dtype` is NaN or infinite.
bool is_non_finite(DType dtype, std::uint64_t bits) {
  switch (dtype) {
    case DType::kF64:
      return (bits & 0x7FF0000000000000ULL) == 0x7FF0000000000000ULL;
    case DType::kF32:
      return (bits & 0x7F800000U) == 0x7F800000U;
    case DType::kF16:
      return (bits & 0x7C00U) == 0x7C00U;
    case DType::kBF16:
      return (bits & 0x7F80U) == 0x7F80U;
    case DType::kF8_E5M2:
      return (bits & 0x7CU) == 0x7CU;
    case DType::kF8_E4M3:
      return (bits & 0x7FU) == 0x7FU;  // E4M3FN: only NaN, no infinities
    default:
      return false;
  }
}

}  // namespace

Result<SafetensorsHeader> read_safetensors_header(const std::filesystem::path& path,
                                                  const SafetensorsLimits& limits) {
  try {
    int fd = -1;
    auto size = open_regular(path, fd);
    const Descriptor guard(fd);
    if (!size) return fail(std::move(size).error());
    std::vector<std::byte> prefix(static_cast<std::size_t>(std::min<std::uint64_t>(*size, 8)));
    EREDU_TRY_VOID(read_exact(fd, 0, prefix, path));
    // N is checked against the file size and the limit before the header buffer is allocated.
    EREDU_TRY(const std::uint64_t length,
              detail::checked_safetensors_header_length(prefix, *size, path.string(), limits));
    prefix.resize(static_cast<std::size_t>(8 + length));
    EREDU_TRY_VOID(read_exact(fd, 8, std::span(prefix).subspan(8), path));
    return parse_safetensors_header(prefix, *size, path.string(), limits);
  } catch (const std::bad_alloc&) {
    return fail(Error(ErrorCode::kLimitExceeded, "out of memory while reading the header")
                    .with_path(path.string()));
  }
}

Result<SafetensorsFile> SafetensorsFile::attach(SafetensorsHeader header,
                                                std::shared_ptr<const MappedFile> file) {
  if (!file) return fail(ErrorCode::kInvalidArgument, "SafetensorsFile::attach: no file");
  auto changed = [&](const std::string& what) {
    return fail(
        Error(ErrorCode::kInvalidModel, "the file changed since its header was read (" + what + ")")
            .with_path(file->path()));
  };
  if (file->size() != header.file_size()) {
    return changed("size " + std::to_string(header.file_size()) + " then, " +
                   std::to_string(file->size()) + " now");
  }
  // data_start() <= file_size() was validated with the header.
  const auto prefix = file->bytes().first(static_cast<std::size_t>(header.data_start()));
  if (detail::fnv1a64(prefix) != header.header_hash()) return changed("header bytes differ");
  SafetensorsFile result;
  result.header_ = std::move(header);
  result.file_ = std::move(file);
  return result;
}

Result<std::span<const std::byte>> SafetensorsFile::tensor_bytes(
    const SafetensorsTensor& tensor) const {
  if (tensor.byte_size == 0) return std::span<const std::byte>();
  auto bytes = file_->slice(tensor.offset, tensor.byte_size);
  if (!bytes) return fail(std::move(bytes).error().with_subject(tensor.name));
  return *bytes;
}

Result<std::span<const std::byte>> SafetensorsFile::tensor_bytes(std::string_view name) const {
  const SafetensorsTensor* tensor = find(name);
  if (tensor == nullptr) {
    return fail(Error(ErrorCode::kNotFound, "no tensor of that name in the file")
                    .with_path(file_->path())
                    .with_subject(std::string(name)));
  }
  return tensor_bytes(*tensor);
}

Result<SafetensorsFile> parse_safetensors(std::shared_ptr<const MappedFile> file,
                                          const SafetensorsLimits& limits) {
  if (!file) return fail(ErrorCode::kInvalidArgument, "parse_safetensors: no file");
  EREDU_TRY(SafetensorsHeader header,
            parse_safetensors_header(file->bytes(), file->size(), file->path(), limits));
  return SafetensorsFileAccess::bind(std::move(header), std::move(file));
}

Result<SafetensorsFile> open_safetensors(const std::filesystem::path& path,
                                         const SafetensorsLimits& limits,
                                         SafetensorsOpenMode mode) {
  try {
    std::shared_ptr<const MappedFile> file;
    if (mode == SafetensorsOpenMode::kMap) {
      EREDU_TRY(auto mapped, MappedFile::open(path));
      file = std::move(mapped);
    } else {
      EREDU_TRY(auto loaded, detail::read_file_into_memory(path));
      file = std::move(loaded);
    }
    return parse_safetensors(std::move(file), limits);
  } catch (const std::bad_alloc&) {
    return fail(Error(ErrorCode::kLimitExceeded, "out of memory while opening the file")
                    .with_path(path.string()));
  }
}

Result<void> check_tensor_finite(const SafetensorsFile& file, const SafetensorsTensor& tensor) {
  const DTypeInfo& info = dtype_info(tensor.dtype);
  if (!info.is_float || info.block_elements != 1) return ok();
  EREDU_TRY(const auto bytes, file.tensor_bytes(tensor));
  const std::size_t width = info.block_bytes;
  for (std::size_t at = 0; at + width <= bytes.size(); at += width) {
    if (is_non_finite(tensor.dtype, load_le(bytes.data() + at, width))) {
      return fail(Error(ErrorCode::kInvalidModel,
                        "element " + std::to_string(at / width) + " is NaN or infinite")
                      .with_path(file.header().path())
                      .with_subject(tensor.name)
                      .with_offset(tensor.offset + at));
    }
  }
  return ok();
}

}  // namespace eredu::checkpoint
