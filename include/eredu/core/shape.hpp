#pragma once
// Tensor shapes in messages: "[64, 512]" (row-major, outermost first, as schemas and backends
// state them).

#include <cstdint>
#include <string>
#include <vector>

namespace eredu {

[[nodiscard]] inline std::string format_shape(const std::vector<std::uint64_t>& shape) {
  std::string out = "[";
  for (std::size_t i = 0; i < shape.size(); ++i) {
    if (i != 0) out += ", ";
    out += std::to_string(shape[i]);
  }
  return out + "]";
}

}  // namespace eredu
