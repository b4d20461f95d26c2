#pragma once
// Memory that reads as zeros and takes no physical pages until it is written: an anonymous private
// mapping. For the KV cache, which is sized for the whole context (4096 positions by default) but
// written one position at a time: a zero-filled std::vector made all of it resident and spent
// start-up time clearing it (llama1b Q4_K_M, 4096 positions: 117 MB more peak RSS and 0.2 s more
// to the first token than 512 positions), where the kernel hands out a zeroed page on the first
// write to it, so the resident size follows the positions actually used.
#include <cstddef>

#include "eredu/core/result.hpp"

namespace eredu::cpu {

class ZeroedPages {
 public:
  ZeroedPages() = default;
  // `bytes` of zeros, mapped but not resident. Where the kernel refuses the mapping (ENOMEM past
  // the overcommit limit): kCapacityExhausted naming `what` and the size. Throws only
  // std::bad_alloc, building that error's message. Not advised into huge pages: a KV cache's
  // layer is a few huge pages (llama1b's keys: two), and its first row would make 2 MiB resident.
  [[nodiscard]] static Result<ZeroedPages> map(std::size_t bytes, const char* what);

  ZeroedPages(ZeroedPages&& other) noexcept;
  ZeroedPages& operator=(ZeroedPages&& other) noexcept;
  ZeroedPages(const ZeroedPages&) = delete;
  ZeroedPages& operator=(const ZeroedPages&) = delete;
  ~ZeroedPages();

  [[nodiscard]] std::byte* data() noexcept { return data_; }
  [[nodiscard]] const std::byte* data() const noexcept { return data_; }
  [[nodiscard]] std::size_t size() const noexcept { return bytes_; }

 private:
  ZeroedPages(std::byte* data, std::size_t bytes) noexcept : data_(data), bytes_(bytes) {}
  void release() noexcept;

  std::byte* data_ = nullptr;
  std::size_t bytes_ = 0;
};

}  // namespace eredu::cpu
