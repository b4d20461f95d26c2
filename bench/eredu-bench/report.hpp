#pragma once
// eredu-bench's outputs: llama-bench's markdown table, CSV with a header row, and a JSON array of
// one object per row; every format carries the same fields.

#include <string>
#include <vector>

#include "bandwidth.hpp"
#include "bench_result.hpp"
#include "products.hpp"

namespace eredu::bench {

enum class OutputFormat { kMarkdown, kCsv, kJson };

// "1.10 MiB", "2.06 GiB" (binary units, two decimals, as llama-bench prints size).
[[nodiscard]] std::string format_size(std::uint64_t bytes);
// "135.00 M", "1.10 B" (as llama-bench prints params).
[[nodiscard]] std::string format_params(std::uint64_t params);

[[nodiscard]] std::string render_results(const std::vector<TestResult>& rows, OutputFormat format);
[[nodiscard]] std::string render_bandwidth(const BandwidthResult& result, OutputFormat format);
// One row per round and a median row (markdown, CSV), or one object with every round (JSON).
[[nodiscard]] std::string render_products(const ProductsResult& result, OutputFormat format);

}  // namespace eredu::bench
