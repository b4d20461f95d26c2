#pragma once
// --products: a model's one-token matrix products alone (no attention, norms, pool hand-offs
// between operators or sampling), timed in the same process and interleaved round by round with
// the read test of --bandwidth, on the CPU backend's kernel table and its weights as loaded (row
// groups included). Decode against --bandwidth (bench/decode-bandwidth.sh) says how close a token
// gets to the memory's ceiling; this says how much of the gap is the products themselves and how
// much the rest of the token. Each round: one read pass of the buffer, then passes over every
// matrix a token multiplies (each on its own, through KernelTable::matmul with one token; a decode
// runs Q/K/V and gate/up as one job each, so it is slightly faster there): at least
// `min_passes`, and enough to read at least `min_round_bytes` (a model whose matrices fit in
// cache, like stories260K's 1 MiB, is then timed over milliseconds, not microseconds).

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "eredu/core/result.hpp"

namespace eredu::bench {

struct ProductsOptions {
  std::string model;
  std::size_t threads = 1;
  std::size_t rounds = 8;
  std::size_t min_passes = 4;
  std::uint64_t min_round_bytes = std::uint64_t{512} << 20;
  std::uint64_t read_bytes = std::uint64_t{1} << 30;
  bool quiet = false;
};

struct ProductsRound {
  double read_gb_per_s = 0;
  double products_gb_per_s = 0;  // the matrices' stored bytes, once per pass, over the time
};

struct ProductsResult {
  std::string file;
  std::size_t threads = 0;
  std::size_t matrices = 0;
  std::uint64_t matrix_bytes = 0;  // one pass: every matrix a token multiplies, as stored
  std::size_t passes_per_round = 0;
  std::vector<ProductsRound> rounds;
  [[nodiscard]] double median_read() const;
  [[nodiscard]] double median_products() const;
  [[nodiscard]] double median_ratio() const;  // of the rounds' products / read
};

// Loads `options.model` on the CPU backend and measures. The model's errors as loading gives them;
// kInvalidArgument for zero rounds, passes or threads, or a read buffer under 1 MiB.
[[nodiscard]] Result<ProductsResult> measure_decode_products(const ProductsOptions& options);

}  // namespace eredu::bench
