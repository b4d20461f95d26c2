#include <gtest/gtest.h>

#include "eredu/checkpoint/selection.hpp"

namespace eredu::checkpoint {
namespace {

using Shape = std::vector<std::uint64_t>;

TEST(Selection, FullCoversTheWholePayload) {
  const Shape shape{4, 6};
  const auto layout = plan_selection(shape, DType::kF16, FullSelection{});
  ASSERT_TRUE(layout);
  EXPECT_EQ(layout->output_shape, shape);
  EXPECT_TRUE(layout->contiguous);
  EXPECT_EQ(layout->span_offset_bytes, 0U);
  EXPECT_EQ(layout->span_length_bytes, 48U);
  EXPECT_EQ(layout->output_bytes, 48U);
}

TEST(Selection, OutermostRangeIsOneByteSpan) {
  // Rows 1..3 of a [4, 6] F32 matrix: rows are 24 bytes, so bytes 24..72.
  const auto layout = plan_selection(Shape{4, 6}, DType::kF32, RangeSelection{0, 1, 3});
  ASSERT_TRUE(layout);
  EXPECT_EQ(layout->output_shape, (Shape{2, 6}));
  EXPECT_TRUE(layout->contiguous);
  EXPECT_EQ(layout->span_offset_bytes, 24U);
  EXPECT_EQ(layout->span_length_bytes, 48U);
}

TEST(Selection, InnerRangeIsContiguousOnlyWhenOuterAxesAreOne) {
  const auto single = plan_selection(Shape{1, 8, 4}, DType::kF32, RangeSelection{1, 2, 5});
  ASSERT_TRUE(single);
  EXPECT_TRUE(single->contiguous);
  EXPECT_EQ(single->span_offset_bytes, 2U * 16U);
  EXPECT_EQ(single->span_length_bytes, 3U * 16U);

  // Columns 1..3 of a [3, 4] F32 matrix: 3 runs of 8 bytes, 16 bytes apart, from byte 4.
  const auto gathered = plan_selection(Shape{3, 4}, DType::kF32, RangeSelection{1, 1, 3});
  ASSERT_TRUE(gathered);
  EXPECT_FALSE(gathered->contiguous);
  EXPECT_EQ(gathered->output_shape, (Shape{3, 2}));
  EXPECT_EQ(gathered->chunk_count, 3U);
  EXPECT_EQ(gathered->chunk_bytes, 8U);
  EXPECT_EQ(gathered->chunk_stride_bytes, 16U);
  EXPECT_EQ(gathered->span_offset_bytes, 4U);
  EXPECT_EQ(gathered->span_length_bytes, 2U * 16U + 8U);
  EXPECT_EQ(gathered->output_bytes, 24U);
}

TEST(Selection, WholeAxisRangeIsTheFullTensor) {
  const auto layout = plan_selection(Shape{3, 4}, DType::kF32, RangeSelection{1, 0, 4});
  ASSERT_TRUE(layout);
  EXPECT_TRUE(layout->contiguous);
  EXPECT_EQ(layout->span_offset_bytes, 0U);
  EXPECT_EQ(layout->span_length_bytes, 48U);
}

TEST(Selection, PackedRangesMapToWholeBlocks) {
  // Q8_0: 32 elements in 34 bytes. A [4, 64] tensor has rows of 2 blocks = 68 bytes.
  const auto rows = plan_selection(Shape{4, 64}, DType::kQ8_0, RangeSelection{0, 2, 4});
  ASSERT_TRUE(rows);
  EXPECT_EQ(rows->span_offset_bytes, 136U);
  EXPECT_EQ(rows->span_length_bytes, 136U);
  const auto blocks = plan_selection(Shape{1, 128}, DType::kQ8_0, RangeSelection{1, 32, 96});
  ASSERT_TRUE(blocks);
  EXPECT_EQ(blocks->span_offset_bytes, 34U);
  EXPECT_EQ(blocks->span_length_bytes, 68U);
  const auto misaligned = plan_selection(Shape{1, 128}, DType::kQ8_0, RangeSelection{1, 16, 48});
  ASSERT_FALSE(misaligned);
  EXPECT_EQ(misaligned.error().code(), ErrorCode::kInvalidArgument);
}

TEST(Selection, ContiguousRunIsViewedWithItsShape) {
  // Elements 8..20 of a [4, 6] F16 tensor viewed as [2, 6]: bytes 16..40.
  const auto layout = plan_selection(Shape{4, 6}, DType::kF16, ContiguousSelection{8, {2, 6}});
  ASSERT_TRUE(layout);
  EXPECT_EQ(layout->output_shape, (Shape{2, 6}));
  EXPECT_EQ(layout->span_offset_bytes, 16U);
  EXPECT_EQ(layout->span_length_bytes, 24U);
}

TEST(Selection, RejectsOutOfBoundsAndEmptySelections) {
  const Shape shape{4, 6};
  for (const TensorSelection& bad : std::vector<TensorSelection>{
           RangeSelection{2, 0, 1}, RangeSelection{0, 2, 2}, RangeSelection{0, 3, 2},
           RangeSelection{0, 0, 5}, ContiguousSelection{20, {5}}, ContiguousSelection{0, {0}},
           ContiguousSelection{UINT64_MAX, {2}}}) {
    const auto layout = plan_selection(shape, DType::kF32, bad);
    ASSERT_FALSE(layout) << describe(bad);
    EXPECT_TRUE(layout.error().code() == ErrorCode::kInvalidArgument ||
                layout.error().code() == ErrorCode::kOverflow)
        << describe(bad);
  }
  EXPECT_FALSE(plan_selection(Shape{}, DType::kF32, RangeSelection{0, 0, 1}));
}

TEST(Selection, DescribesSelectionsForMessages) {
  EXPECT_EQ(describe(FullSelection{}), "full");
  EXPECT_EQ(describe(RangeSelection{1, 2, 5}), "range(axis=1, 2..5)");
  EXPECT_EQ(describe(ContiguousSelection{64, {2, 32}}), "contiguous(offset=64, shape=[2, 32])");
}

}  // namespace
}  // namespace eredu::checkpoint
