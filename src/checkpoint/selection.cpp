#include "eredu/checkpoint/selection.hpp"

#include <string>
#include <type_traits>

namespace eredu::checkpoint {
namespace {

Error invalid(std::string message) {
  return Error(ErrorCode::kInvalidArgument, std::move(message));
}

Result<std::uint64_t> checked_mul(std::uint64_t a, std::uint64_t b) {
  if (a != 0 && b > UINT64_MAX / a) {
    return fail(ErrorCode::kOverflow, "selection arithmetic overflows 64 bits");
  }
  return a * b;
}

Result<std::uint64_t> checked_add(std::uint64_t a, std::uint64_t b) {
  if (b > UINT64_MAX - a)
    return fail(ErrorCode::kOverflow, "selection arithmetic overflows 64 bits");
  return a + b;
}

// Bytes of `elements` consecutive elements starting on a block boundary (callers check alignment).
Result<std::uint64_t> bytes_of(const DTypeInfo& info, std::uint64_t elements) {
  return checked_mul(elements / info.block_elements, info.block_bytes);
}

// Product of shape[begin, end), overflow-checked.
Result<std::uint64_t> product(std::span<const std::uint64_t> shape, std::size_t begin,
                              std::size_t end) {
  return checked_element_count(shape.subspan(begin, end - begin));
}

Result<SelectionLayout> plan_full(std::span<const std::uint64_t> shape, DType dtype) {
  EREDU_TRY(const std::uint64_t bytes, checked_byte_size(dtype, shape));
  SelectionLayout layout;
  layout.output_shape.assign(shape.begin(), shape.end());
  layout.output_bytes = bytes;
  layout.span_length_bytes = bytes;
  layout.chunk_bytes = bytes;
  layout.chunk_stride_bytes = bytes;
  return layout;
}

Result<SelectionLayout> plan_range(std::span<const std::uint64_t> shape, DType dtype,
                                   const RangeSelection& range) {
  const DTypeInfo& info = dtype_info(dtype);
  if (range.axis >= shape.size()) {
    return fail(invalid("range axis " + std::to_string(range.axis) + " is out of range for shape " +
                        shape_to_string(shape)));
  }
  const std::uint64_t dim = shape[range.axis];
  if (range.start >= range.end || range.end > dim) {
    return fail(invalid("range " + std::to_string(range.start) + ".." + std::to_string(range.end) +
                        " on axis " + std::to_string(range.axis) + " is empty or outside 0.." +
                        std::to_string(dim) + " of shape " + shape_to_string(shape)));
  }
  const bool innermost = range.axis + 1 == shape.size();
  if (innermost &&
      (range.start % info.block_elements != 0 || range.end % info.block_elements != 0)) {
    return fail(invalid("range " + std::to_string(range.start) + ".." + std::to_string(range.end) +
                        " on the innermost axis is not aligned to the " + std::string(info.name) +
                        " block size " + std::to_string(info.block_elements)));
  }
  EREDU_TRY(const std::uint64_t outer, product(shape, 0, range.axis));
  EREDU_TRY(const std::uint64_t inner, product(shape, range.axis + 1, shape.size()));
  // Element offsets below are multiples of `inner` (whole blocks when the axis is not innermost,
  // because the innermost dimension is whole blocks) or block-aligned range bounds.
  EREDU_TRY(const std::uint64_t chunk_elements, checked_mul(range.end - range.start, inner));
  EREDU_TRY(const std::uint64_t stride_elements, checked_mul(dim, inner));
  EREDU_TRY(const std::uint64_t start_elements, checked_mul(range.start, inner));

  SelectionLayout layout;
  layout.output_shape.assign(shape.begin(), shape.end());
  layout.output_shape[range.axis] = range.end - range.start;
  EREDU_TRY(layout.output_bytes, checked_byte_size(dtype, layout.output_shape));
  EREDU_TRY(layout.chunk_bytes, bytes_of(info, chunk_elements));
  EREDU_TRY(layout.chunk_stride_bytes, bytes_of(info, stride_elements));
  EREDU_TRY(layout.span_offset_bytes, bytes_of(info, start_elements));
  const bool whole_axis = range.start == 0 && range.end == dim;
  if (outer <= 1 || whole_axis || layout.chunk_bytes == 0) {
    layout.contiguous = true;
    layout.chunk_count = 1;
    layout.chunk_bytes = layout.output_bytes;
    layout.chunk_stride_bytes = layout.output_bytes;
    layout.span_length_bytes = layout.output_bytes;
    if (whole_axis) layout.span_offset_bytes = 0;
    return layout;
  }
  layout.contiguous = false;
  layout.chunk_count = outer;
  EREDU_TRY(const std::uint64_t head, checked_mul(outer - 1, layout.chunk_stride_bytes));
  EREDU_TRY(layout.span_length_bytes, checked_add(head, layout.chunk_bytes));
  return layout;
}

Result<SelectionLayout> plan_contiguous(std::span<const std::uint64_t> shape, DType dtype,
                                        const ContiguousSelection& run) {
  const DTypeInfo& info = dtype_info(dtype);
  EREDU_TRY(const std::uint64_t total, checked_element_count(shape));
  EREDU_TRY(const std::uint64_t count, checked_element_count(run.shape));
  if (count == 0)
    return fail(
        invalid("contiguous selection of shape " + shape_to_string(run.shape) + " is empty"));
  EREDU_TRY(const std::uint64_t run_end, checked_add(run.offset_elements, count));
  if (run_end > total) {
    return fail(invalid("contiguous selection of " + std::to_string(count) +
                        " elements at element " + std::to_string(run.offset_elements) +
                        " ends past the tensor's " + std::to_string(total) + " elements"));
  }
  if (run.offset_elements % info.block_elements != 0) {
    return fail(invalid("contiguous selection starts at element " +
                        std::to_string(run.offset_elements) + ", not on a " +
                        std::string(info.name) + " block boundary (" +
                        std::to_string(info.block_elements) + ")"));
  }
  auto bytes = checked_byte_size(dtype, run.shape);
  if (!bytes) {
    if (bytes.error().code() == ErrorCode::kOverflow) return fail(std::move(bytes).error());
    return fail(invalid("contiguous selection shape " + shape_to_string(run.shape) + ": " +
                        bytes.error().message()));
  }
  SelectionLayout layout;
  layout.output_shape = run.shape;
  layout.output_bytes = *bytes;
  layout.chunk_bytes = *bytes;
  layout.chunk_stride_bytes = *bytes;
  layout.span_length_bytes = *bytes;
  EREDU_TRY(layout.span_offset_bytes, bytes_of(info, run.offset_elements));
  return layout;
}

}  // namespace

std::string shape_to_string(std::span<const std::uint64_t> shape) {
  std::string out = "[";
  for (std::size_t i = 0; i < shape.size(); ++i) {
    if (i != 0) out += ", ";
    out += std::to_string(shape[i]);
  }
  out += ']';
  return out;
}

std::string describe(const TensorSelection& selection) {
  return std::visit(
      [](const auto& s) -> std::string {
        using S = std::decay_t<decltype(s)>;
        if constexpr (std::is_same_v<S, FullSelection>) {
          return "full";
        } else if constexpr (std::is_same_v<S, RangeSelection>) {
          return "range(axis=" + std::to_string(s.axis) + ", " + std::to_string(s.start) + ".." +
                 std::to_string(s.end) + ")";
        } else {
          return "contiguous(offset=" + std::to_string(s.offset_elements) +
                 ", shape=" + shape_to_string(s.shape) + ")";
        }
      },
      selection);
}

Result<SelectionLayout> plan_selection(std::span<const std::uint64_t> shape, DType dtype,
                                       const TensorSelection& selection) {
  if (const auto* range = std::get_if<RangeSelection>(&selection)) {
    return plan_range(shape, dtype, *range);
  }
  if (const auto* run = std::get_if<ContiguousSelection>(&selection)) {
    return plan_contiguous(shape, dtype, *run);
  }
  return plan_full(shape, dtype);
}

}  // namespace eredu::checkpoint
