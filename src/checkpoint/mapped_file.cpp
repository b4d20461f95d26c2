#include "eredu/checkpoint/mapped_file.hpp"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace eredu::checkpoint {
namespace {

Error io_error(const std::filesystem::path& path, const char* what, int err) {
  const ErrorCode code = err == ENOENT ? ErrorCode::kNotFound : ErrorCode::kIo;
  return Error(code, std::string(what) + ": " + std::strerror(err)).with_path(path.string());
}

// Closes a descriptor on every path out of open().
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
}

void MappedFile::release_pages(std::span<const std::byte> range) const noexcept {
  if (!is_mapped_ || range.data() < data_ || range.data() + range.size() > data_ + size_) return;
  const auto page = static_cast<std::uintptr_t>(::sysconf(_SC_PAGESIZE));
  const auto begin = reinterpret_cast<std::uintptr_t>(range.data());
  const std::uintptr_t first = (begin + page - 1) / page * page;
  const std::uintptr_t last = (begin + range.size()) / page * page;
  // A private read-only file mapping: dropped pages are read from the file again when touched.
  if (first < last) ::madvise(reinterpret_cast<void*>(first), last - first, MADV_DONTNEED);
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
