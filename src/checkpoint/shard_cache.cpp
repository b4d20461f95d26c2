#include "eredu/checkpoint/shard_cache.hpp"

#include <algorithm>
#include <mutex>
#include <new>

namespace eredu::checkpoint {
namespace detail {

struct ShardCacheState {
  struct Slot {
    std::size_t shard_index = 0;
    std::shared_ptr<const MappedFile> file;
    std::size_t pins = 0;
    std::uint64_t last_use = 0;
  };

  std::vector<std::string> shard_paths;
  std::size_t max_open_shards = kDefaultMaxOpenShards;
  ShardCache::Opener opener;

  mutable std::mutex mutex;
  std::vector<Slot> slots;  // open shards, at most max_open_shards
  std::uint64_t clock = 0;
  ShardCacheStats stats;

  Slot* find(std::size_t index) {
    for (Slot& slot : slots) {
      if (slot.shard_index == index) return &slot;
    }
    return nullptr;
  }

  void unpin(std::size_t index) noexcept {
    std::lock_guard lock(mutex);
    if (Slot* slot = find(index); slot != nullptr && slot->pins > 0) --slot->pins;
  }
};

}  // namespace detail

ShardPin::ShardPin(std::shared_ptr<detail::ShardCacheState> state, std::size_t shard_index,
                   std::shared_ptr<const MappedFile> file) noexcept
    : state_(std::move(state)), shard_index_(shard_index), file_(std::move(file)) {}

ShardPin::ShardPin(ShardPin&& other) noexcept
    : state_(std::move(other.state_)),
      shard_index_(other.shard_index_),
      file_(std::move(other.file_)) {
  other.state_.reset();
  other.file_.reset();
}

ShardPin& ShardPin::operator=(ShardPin&& other) noexcept {
  if (this != &other) {
    reset();
    state_ = std::move(other.state_);
    shard_index_ = other.shard_index_;
    file_ = std::move(other.file_);
    other.state_.reset();
    other.file_.reset();
  }
  return *this;
}

ShardPin::~ShardPin() {
  reset();
}

void ShardPin::reset() noexcept {
  if (state_) state_->unpin(shard_index_);
  state_.reset();
  file_.reset();
}

Result<ShardCache> ShardCache::create(std::vector<std::string> shard_paths,
                                      std::size_t max_open_shards, Opener opener) {
  if (max_open_shards == 0) {
    return fail(ErrorCode::kInvalidArgument,
                "the open-shard limit must be at least 1 (0 would make every read impossible)");
  }
  if (!opener) return fail(ErrorCode::kInvalidArgument, "the shard cache needs a shard opener");
  try {
    auto state = std::make_shared<detail::ShardCacheState>();
    state->shard_paths = std::move(shard_paths);
    state->max_open_shards = max_open_shards;
    state->opener = std::move(opener);
    state->stats.max_open_shards = max_open_shards;
    return ShardCache(std::move(state));
  } catch (const std::bad_alloc&) {
    return fail(ErrorCode::kLimitExceeded, "out of memory creating the shard cache");
  }
}

Result<ShardPin> ShardCache::pin(std::size_t index) const {
  detail::ShardCacheState& s = *state_;
  if (index >= s.shard_paths.size()) {
    return fail(ErrorCode::kInvalidArgument, "shard index " + std::to_string(index) +
                                                 " is out of range (" +
                                                 std::to_string(s.shard_paths.size()) + " shards)");
  }
  std::lock_guard lock(s.mutex);
  ++s.clock;
  if (detail::ShardCacheState::Slot* slot = s.find(index)) {
    ++s.stats.hits;
    ++slot->pins;
    slot->last_use = s.clock;
    return ShardPin(state_, index, slot->file);
  }
  ++s.stats.misses;
  if (s.slots.size() >= s.max_open_shards) {
    // Evict the least recently used shard that no lease pins.
    auto victim = s.slots.end();
    for (auto it = s.slots.begin(); it != s.slots.end(); ++it) {
      if (it->pins == 0 && (victim == s.slots.end() || it->last_use < victim->last_use))
        victim = it;
    }
    if (victim == s.slots.end()) {
      std::string pinned;
      for (const auto& slot : s.slots) {
        if (!pinned.empty()) pinned += ", ";
        pinned += s.shard_paths[slot.shard_index];
      }
      return fail(Error(ErrorCode::kCapacityExhausted,
                        "cannot open another shard: all " + std::to_string(s.max_open_shards) +
                            " open shards are pinned by live leases (" + pinned + ")")
                      .with_path(s.shard_paths[index]));
    }
    s.slots.erase(victim);
    ++s.stats.evictions;
  }
  auto file = s.opener(index);
  if (!file) return fail(std::move(file).error().with_path(s.shard_paths[index]));
  if (*file == nullptr) {
    return fail(Error(ErrorCode::kInternal, "shard opener returned no file")
                    .with_path(s.shard_paths[index]));
  }
  ++s.stats.shard_opens;
  s.slots.push_back({index, *file, 1, s.clock});
  return ShardPin(state_, index, std::move(*file));
}

ShardCacheStats ShardCache::stats() const {
  std::lock_guard lock(state_->mutex);
  ShardCacheStats out = state_->stats;
  out.open_shards = state_->slots.size();
  out.pinned_shards = 0;
  for (const auto& slot : state_->slots)
    out.pinned_shards += slot.pins > 0 ? 1 : 0;
  return out;
}

std::vector<std::string> ShardCache::open_shard_paths() const {
  std::lock_guard lock(state_->mutex);
  std::vector<const detail::ShardCacheState::Slot*> order;
  for (const auto& slot : state_->slots)
    order.push_back(&slot);
  std::sort(order.begin(), order.end(),
            [](const auto* a, const auto* b) { return a->last_use < b->last_use; });
  std::vector<std::string> out;
  for (const auto* slot : order)
    out.push_back(state_->shard_paths[slot->shard_index]);
  return out;
}

std::size_t ShardCache::shard_count() const noexcept {
  return state_->shard_paths.size();
}
std::size_t ShardCache::max_open_shards() const noexcept {
  return state_->max_open_shards;
}
const std::string& ShardCache::shard_path(std::size_t index) const {
  static const std::string kNone;
  return index < state_->shard_paths.size() ? state_->shard_paths[index] : kNone;
}

}  // namespace eredu::checkpoint
