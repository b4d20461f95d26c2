// Zero-initialised memory the kernel fills in on first write: see zeroed_pages.hpp.
#include "eredu/backends/cpu/zeroed_pages.hpp"

#include <sys/mman.h>

#include <cerrno>
#include <cstring>
#include <string>
#include <utility>

namespace eredu::cpu {

Result<ZeroedPages> ZeroedPages::map(std::size_t bytes, const char* what) {
  if (bytes == 0) return ZeroedPages{};
  void* address =
      ::mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (address == MAP_FAILED) {
    const int code = errno;
    return fail(ErrorCode::kCapacityExhausted, std::string(what) + ": cannot map " +
                                                   std::to_string(bytes) + " bytes (" +
                                                   std::strerror(code) + ")");
  }
  return ZeroedPages(static_cast<std::byte*>(address), bytes);
}

ZeroedPages::ZeroedPages(ZeroedPages&& other) noexcept
    : data_(std::exchange(other.data_, nullptr)), bytes_(std::exchange(other.bytes_, 0)) {}

ZeroedPages& ZeroedPages::operator=(ZeroedPages&& other) noexcept {
  if (this != &other) {
    release();
    data_ = std::exchange(other.data_, nullptr);
    bytes_ = std::exchange(other.bytes_, 0);
  }
  return *this;
}

ZeroedPages::~ZeroedPages() {
  release();
}

void ZeroedPages::release() noexcept {
  if (data_ != nullptr) ::munmap(data_, bytes_);
  data_ = nullptr;
  bytes_ = 0;
}

}  // namespace eredu::cpu
