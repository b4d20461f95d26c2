#pragma once
// A bounded cache of open shards (memory-mapped files or in-memory buffers).
//
// At most `max_open_shards` shards are open at once (default 4; zero is an invalid limit). A lease
// pins the shard it reads from; pinned shards are never evicted. When a shard is needed and the
// cache is full, the least recently used unpinned shard is closed; when every open shard is pinned,
// the request fails with kCapacityExhausted listing the pinned shard paths. Thread-safe.

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "eredu/checkpoint/mapped_file.hpp"
#include "eredu/core/result.hpp"

namespace eredu::checkpoint {

inline constexpr std::size_t kDefaultMaxOpenShards = 4;

struct ShardCacheStats {
  std::uint64_t hits = 0;         // pin of an already open shard
  std::uint64_t misses = 0;       // pin that had to open the shard
  std::uint64_t evictions = 0;    // unpinned shards closed to make room
  std::uint64_t shard_opens = 0;  // successful opens (misses minus failed opens)
  std::size_t open_shards = 0;    // currently open
  std::size_t pinned_shards = 0;  // currently open and pinned by at least one lease
  std::size_t max_open_shards = 0;
};

namespace detail {
struct ShardCacheState;
}

// Keeps one open shard alive and pinned in its cache until destroyed (move-only).
class ShardPin {
 public:
  ShardPin() = default;
  ShardPin(ShardPin&& other) noexcept;
  ShardPin& operator=(ShardPin&& other) noexcept;
  ShardPin(const ShardPin&) = delete;
  ShardPin& operator=(const ShardPin&) = delete;
  ~ShardPin();

  [[nodiscard]] bool valid() const noexcept { return file_ != nullptr; }
  [[nodiscard]] std::size_t shard_index() const noexcept { return shard_index_; }
  [[nodiscard]] const std::shared_ptr<const MappedFile>& file() const noexcept { return file_; }
  // Releases the pin now (idempotent).
  void reset() noexcept;

 private:
  friend class ShardCache;
  ShardPin(std::shared_ptr<detail::ShardCacheState> state, std::size_t shard_index,
           std::shared_ptr<const MappedFile> file) noexcept;
  std::shared_ptr<detail::ShardCacheState> state_;
  std::size_t shard_index_ = 0;
  std::shared_ptr<const MappedFile> file_;
};

class ShardCache {
 public:
  // Opens shard `index` (called with the cache's lock held, at most once per miss).
  using Opener = std::function<Result<std::shared_ptr<const MappedFile>>(std::size_t index)>;

  // `shard_paths[i]` names shard i in messages. kInvalidArgument when max_open_shards is 0 or the
  // opener is empty.
  [[nodiscard]] static Result<ShardCache> create(std::vector<std::string> shard_paths,
                                                 std::size_t max_open_shards, Opener opener);

  // Pins shard `index`, opening it (and evicting the least recently used unpinned shard) if needed.
  // kInvalidArgument for an unknown index; kCapacityExhausted listing the pinned paths when the
  // cache is full of pinned shards; the opener's error when opening fails.
  [[nodiscard]] Result<ShardPin> pin(std::size_t index) const;

  [[nodiscard]] ShardCacheStats stats() const;
  // Paths of the open shards, least recently used first.
  [[nodiscard]] std::vector<std::string> open_shard_paths() const;
  [[nodiscard]] std::size_t shard_count() const noexcept;
  [[nodiscard]] std::size_t max_open_shards() const noexcept;
  [[nodiscard]] const std::string& shard_path(std::size_t index) const;

 private:
  explicit ShardCache(std::shared_ptr<detail::ShardCacheState> state) : state_(std::move(state)) {}
  std::shared_ptr<detail::ShardCacheState> state_;
};

}  // namespace eredu::checkpoint
