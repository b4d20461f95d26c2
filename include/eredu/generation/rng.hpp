#pragma once
// The random number generator of the host sampler, written out so that a seed gives the same
// stream on every platform, compiler and standard library (std::mt19937 is portable, but the
// std:: distributions are not, so none of them is used).
//
// - SplitMix64 (Steele, Lea, Flood 2014; public-domain reference by S. Vigna) expands the 64-bit
//   seed into the 256-bit state, as the xoshiro authors recommend.
// - xoshiro256** 1.0 (Blackman and Vigna 2018) produces the stream.
// - next_double() maps the top 53 bits to a double in [0, 1): (x >> 11) * 2^-53, which is exact in
//   IEEE-754 binary64, so the uniform values are bit-identical everywhere.

#include <cstdint>

namespace eredu::generation {

// SplitMix64: a 64-bit counter passed through a bijective mixer. Used only for seeding.
class SplitMix64 {
 public:
  explicit constexpr SplitMix64(std::uint64_t seed) noexcept : state_(seed) {}

  constexpr std::uint64_t next() noexcept {
    state_ += 0x9E3779B97F4A7C15ULL;
    std::uint64_t z = state_;
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
    return z ^ (z >> 31);
  }

 private:
  std::uint64_t state_;
};

// xoshiro256**: the sampler's generator. Four SplitMix64 outputs form the state; they are never
// all zero (SplitMix64 is a bijection of distinct counters), which xoshiro requires.
class Xoshiro256StarStar {
 public:
  explicit constexpr Xoshiro256StarStar(std::uint64_t seed) noexcept { reseed(seed); }

  constexpr void reseed(std::uint64_t seed) noexcept {
    SplitMix64 mix(seed);
    for (std::uint64_t& word : state_)
      word = mix.next();
  }

  constexpr std::uint64_t next() noexcept {
    const std::uint64_t result = rotl(state_[1] * 5, 7) * 9;
    const std::uint64_t t = state_[1] << 17;
    state_[2] ^= state_[0];
    state_[3] ^= state_[1];
    state_[1] ^= state_[2];
    state_[0] ^= state_[3];
    state_[2] ^= t;
    state_[3] = rotl(state_[3], 45);
    return result;
  }

  // A uniform double in [0, 1) with 53 random bits.
  constexpr double next_double() noexcept { return static_cast<double>(next() >> 11) * 0x1.0p-53; }

 private:
  static constexpr std::uint64_t rotl(std::uint64_t x, int k) noexcept {
    return (x << k) | (x >> (64 - k));
  }
  std::uint64_t state_[4] = {};
};

}  // namespace eredu::generation
