#pragma once
// A cooperative stop flag. Any thread may call request_stop(); the generation loop checks
// stop_requested() between tokens (GenerationSequence::poll), so a request made while a token is
// being computed takes effect after that token is committed. The flag never clears by itself;
// reset() re-arms it for a new request once no loop is using it.

#include <atomic>

namespace eredu::generation {

class CancellationToken {
 public:
  CancellationToken() = default;
  CancellationToken(const CancellationToken&) = delete;
  CancellationToken& operator=(const CancellationToken&) = delete;

  // Asks the loop to stop. Callable from any thread, any number of times.
  void request_stop() noexcept { stop_.store(true, std::memory_order_release); }
  // True once request_stop() was called (and reset() was not called since).
  [[nodiscard]] bool stop_requested() const noexcept {
    return stop_.load(std::memory_order_acquire);
  }
  // Re-arms the token. Only call it while no generation loop is watching the token.
  void reset() noexcept { stop_.store(false, std::memory_order_release); }

 private:
  std::atomic<bool> stop_{false};
};

}  // namespace eredu::generation
