#include "eredu/checkpoint/mapped_file.hpp"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <string>
#include <utility>

namespace eredu::checkpoint {
namespace {

Error io_error(const std::filesystem::path& path, const char* what, int err) {
  const ErrorCode code = err == ENOENT ? ErrorCode::kNotFound : ErrorCode::kIo;
  return Error(code, std::string(what) + ": " + std::strerror(err)).with_path(path.string());
}

// Closes a descriptor on every path out of open() but the one that keeps it.
struct FdGuard {
  int fd;
  ~FdGuard() {
    if (fd >= 0) ::close(fd);
  }
};

}  // namespace

Result<std::shared_ptr<const MappedFile>> MappedFile::open(const std::filesystem::path& path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return fail(io_error(path, "cannot open", errno));
  FdGuard guard{fd};
  struct stat st {};
  if (::fstat(fd, &st) != 0) return fail(io_error(path, "cannot stat", errno));
  if (!S_ISREG(st.st_mode)) {
    return fail(Error(ErrorCode::kIo, "not a regular file").with_path(path.string()));
  }
  std::shared_ptr<MappedFile> file(new MappedFile());
  file->path_ = path.string();
  file->size_ = static_cast<std::size_t>(st.st_size);
  if (file->size_ == 0) return std::shared_ptr<const MappedFile>(std::move(file));
  void* data = ::mmap(nullptr, file->size_, PROT_READ, MAP_PRIVATE, fd, 0);
  if (data == MAP_FAILED) return fail(io_error(path, "cannot map", errno));
  file->data_ = static_cast<const std::byte*>(data);
  file->is_mapped_ = true;
  file->fd_ = std::exchange(guard.fd, -1);
  return std::shared_ptr<const MappedFile>(std::move(file));
}

std::shared_ptr<const MappedFile> MappedFile::from_bytes(std::span<const std::byte> bytes,
                                                         std::string name) {
  std::shared_ptr<MappedFile> file(new MappedFile());
  file->path_ = std::move(name);
  file->size_ = bytes.size();
  if (!bytes.empty()) {
    file->owned_ = std::make_unique<std::byte[]>(bytes.size());
    std::memcpy(file->owned_.get(), bytes.data(), bytes.size());
    file->data_ = file->owned_.get();
  }
  return file;
}

MappedFile::~MappedFile() {
  if (is_mapped_) ::munmap(const_cast<std::byte*>(data_), size_);
  if (fd_ >= 0) ::close(fd_);
}

Result<void> MappedFile::copy_out(std::span<const std::byte> range, std::byte* out) const {
  if (range.empty()) return ok();
  const auto begin = reinterpret_cast<std::uintptr_t>(range.data());
  const auto first = reinterpret_cast<std::uintptr_t>(data_);
  if (begin < first || begin - first > size_ || range.size() > size_ - (begin - first)) {
    return fail(Error(ErrorCode::kInvalidArgument, "copy_out: " + std::to_string(range.size()) +
                                                       " bytes that are not inside " +
                                                       "the file's mapping")
                    .with_path(path_));
  }
  const std::size_t offset = begin - first;
  if (!is_mapped_) {
    std::memcpy(out, range.data(), range.size());
    return ok();
  }
  std::size_t done = 0;
  while (done < range.size()) {
    const ::ssize_t got =
        ::pread(fd_, out + done, range.size() - done, static_cast<::off_t>(offset + done));
    if (got < 0 && errno == EINTR) continue;
    if (got <= 0) {
      const std::string why = got < 0 ? std::strerror(errno) : "the file ended early";
      return fail(
          Error(ErrorCode::kIo, "cannot read " + std::to_string(range.size()) + " bytes: " + why)
              .with_path(path_)
              .with_offset(offset + done));
    }
    done += static_cast<std::size_t>(got);
  }
  return ok();
}

Result<std::span<const std::byte>> MappedFile::slice(std::uint64_t offset,
                                                     std::uint64_t length) const {
  if (offset > size_ || length > size_ - offset) {
    return fail(Error(ErrorCode::kInvalidModel, "range of " + std::to_string(length) +
                                                    " bytes at offset " + std::to_string(offset) +
                                                    " ends past the end of the file (" +
                                                    std::to_string(size_) + " bytes)")
                    .with_path(path_)
                    .with_offset(offset));
  }
  return bytes().subspan(static_cast<std::size_t>(offset), static_cast<std::size_t>(length));
}

}  // namespace eredu::checkpoint
