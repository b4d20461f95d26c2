#pragma once
// Which part of a stored tensor a caller wants, and how the reader may satisfy it.
//
// A selection is expressed in elements of the tensor's row-major shape (outermost first); callers
// never compute byte offsets. `plan_selection` turns a selection into the byte geometry inside the
// tensor's payload, checking every bound with overflow-checked arithmetic and the block alignment
// of packed (block-quantized) encodings, so that a read can be bounded before any payload is
// touched.

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <variant>
#include <vector>

#include "eredu/core/dtype.hpp"
#include "eredu/core/result.hpp"

namespace eredu::checkpoint {

// The whole tensor.
struct FullSelection {
  friend bool operator==(const FullSelection&, const FullSelection&) = default;
};

// Indices [start, end) along one axis (non-empty: start < end <= shape[axis]); every other axis is
// kept whole. For packed encodings a range on the innermost axis must start and end on block
// boundaries.
struct RangeSelection {
  std::size_t axis = 0;
  std::uint64_t start = 0;
  std::uint64_t end = 0;
  friend bool operator==(const RangeSelection&, const RangeSelection&) = default;
};

// One row-major run of elements [offset_elements, offset_elements + count(shape)), viewed with
// `shape`. The run must be non-empty and inside the tensor; for packed encodings its start must be
// on a block boundary and `shape`'s innermost dimension a whole number of blocks.
struct ContiguousSelection {
  std::uint64_t offset_elements = 0;
  std::vector<std::uint64_t> shape;
  friend bool operator==(const ContiguousSelection&, const ContiguousSelection&) = default;
};

using TensorSelection = std::variant<FullSelection, RangeSelection, ContiguousSelection>;

// "full", "range(axis=0, 2..5)", "contiguous(offset=64, shape=[2, 32])".
[[nodiscard]] std::string describe(const TensorSelection& selection);

enum class ReadPolicy : std::uint8_t {
  // Physical reads are restricted to the selected bytes; a selection that is not one contiguous
  // byte span is refused (kUnsupported, "bounded selection unavailable") before any payload I/O.
  // The default for execution.
  kRequireBounded,
  // Tooling only: a selection that is not one byte span may be gathered from the smallest span of
  // the tensor that holds it (the lease then owns a copy and its proof says it was not bounded).
  kAllowFullTensorRead,
};

// Where a selection's bytes lie inside its tensor's payload (offsets relative to the payload
// start). The selected bytes are `chunk_count` runs of `chunk_bytes`, the first at
// `span_offset_bytes`, each following one `chunk_stride_bytes` after the previous; `contiguous`
// means one run (chunk_count 1). [span_offset_bytes, span_offset_bytes + span_length_bytes) is the
// smallest span holding them all.
struct SelectionLayout {
  std::vector<std::uint64_t> output_shape;
  std::uint64_t output_bytes = 0;
  bool contiguous = true;
  std::uint64_t span_offset_bytes = 0;
  std::uint64_t span_length_bytes = 0;
  std::uint64_t chunk_count = 1;
  std::uint64_t chunk_bytes = 0;
  std::uint64_t chunk_stride_bytes = 0;
};

// Validates `selection` against a tensor of `shape` in `dtype` and computes its byte layout.
// Errors: kInvalidArgument (axis out of range, empty or out-of-bounds range or run, block
// misalignment), kOverflow (arithmetic). The tensor's own shape must already be valid for `dtype`.
[[nodiscard]] Result<SelectionLayout> plan_selection(std::span<const std::uint64_t> shape,
                                                     DType dtype, const TensorSelection& selection);

// "[2, 3, 4]" — for messages.
[[nodiscard]] std::string shape_to_string(std::span<const std::uint64_t> shape);

}  // namespace eredu::checkpoint
