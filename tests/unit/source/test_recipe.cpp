#include <gtest/gtest.h>

#include "eredu/checkpoint/recipe.hpp"

namespace eredu::checkpoint {
namespace {

using R = DerivedWeightRecipe;
using Shape = std::vector<std::uint64_t>;

// Byte lengths below are computed by hand: F32 4 bytes, F16 2, U8 1, Q4_0 18 bytes per 32 elements.
TensorCatalog make_catalog() {
  auto catalog = TensorCatalog::create({
      {"q", {4, 8}, DType::kF32, 128, 0, "m"},
      {"k", {2, 8}, DType::kF32, 64, 0, "m"},
      {"v", {2, 8}, DType::kF32, 64, 0, "m"},
      {"h", {2, 8}, DType::kF16, 32, 0, "m"},
      {"e0", {3, 5}, DType::kF32, 60, 0, "m"},
      {"e1", {3, 5}, DType::kF32, 60, 0, "m"},
      {"blk", {4, 64}, DType::kQ4_0, 144, 0, "m"},
      {"blk2", {2, 64}, DType::kQ4_0, 72, 0, "m"},
      {"u8", {16}, DType::kU8, 16, 0, "m"},
      {"zero", {0, 8}, DType::kF32, 0, 0, "m"},
  });
  EXPECT_TRUE(catalog);
  return std::move(catalog).value();
}

void expect_meta(const R& recipe, const Shape& shape, DType dtype, std::uint64_t bytes) {
  const auto meta = recipe.infer(make_catalog());
  ASSERT_TRUE(meta) << meta.error().what();
  EXPECT_EQ(meta->shape, shape);
  EXPECT_EQ(meta->dtype, dtype);
  EXPECT_EQ(meta->byte_length, bytes);
}

void expect_error(const R& recipe, RecipeErrorKind kind, const std::string& path,
                  const std::string& key) {
  const auto meta = recipe.infer(make_catalog());
  ASSERT_FALSE(meta) << "expected " << to_string(kind);
  EXPECT_EQ(meta.error().kind(), kind) << meta.error().what();
  EXPECT_EQ(meta.error().node_path(), path) << meta.error().what();
  EXPECT_EQ(meta.error().key(), key) << meta.error().what();
  // The message names the node and the key.
  EXPECT_NE(meta.error().what().find("recipe node " + path), std::string::npos);
  if (!key.empty()) {
    EXPECT_NE(meta.error().what().find("'" + key + "'"), std::string::npos);
  }
}

TEST(RecipeInfer, SourceReadsTheCatalogEntry) {
  expect_meta(R::source("q"), {4, 8}, DType::kF32, 128);
  expect_meta(R::source("q", RangeSelection{0, 1, 3}), {2, 8}, DType::kF32, 64);
  expect_meta(R::source("blk", ContiguousSelection{64, {2, 32}}), {2, 32}, DType::kQ4_0, 36);
}

TEST(RecipeInfer, SelectSlicesADerivedValue) {
  expect_meta(R::select(R::source("q"), RangeSelection{1, 2, 6}), {4, 4}, DType::kF32, 64);
  expect_meta(R::select(R::source("blk"), RangeSelection{1, 32, 64}), {4, 32}, DType::kQ4_0, 72);
}

TEST(RecipeInfer, ConcatenateSumsTheJoinedAxis) {
  expect_meta(R::concatenate(0, {R::source("q"), R::source("k"), R::source("v")}), {8, 8},
              DType::kF32, 256);
  expect_meta(R::concatenate(1, {R::source("k"), R::source("v")}), {2, 16}, DType::kF32, 128);
  expect_meta(R::concatenate(0, {R::source("blk"), R::source("blk2")}), {6, 64}, DType::kQ4_0, 216);
}

TEST(RecipeInfer, StackInsertsANewAxis) {
  expect_meta(R::stack(0, {R::source("e0"), R::source("e1")}), {2, 3, 5}, DType::kF32, 120);
  expect_meta(R::stack(2, {R::source("e0"), R::source("e1")}), {3, 5, 2}, DType::kF32, 120);
  expect_meta(R::stack(1, {R::source("blk"), R::source("blk")}), {4, 2, 64}, DType::kQ4_0, 288);
}

TEST(RecipeInfer, ReshapeKeepsElementsAndBytes) {
  expect_meta(R::reshape(R::source("q"), {32}), {32}, DType::kF32, 128);
  expect_meta(R::reshape(R::source("blk"), {2, 2, 64}), {2, 2, 64}, DType::kQ4_0, 144);
  expect_meta(R::reshape(R::source("blk"), {8, 32}), {8, 32}, DType::kQ4_0, 144);
}

TEST(RecipeInfer, TransposePermutesTheShape) {
  expect_meta(R::transpose(R::source("e0"), {1, 0}), {5, 3}, DType::kF32, 60);
  expect_meta(R::transpose(R::reshape(R::source("blk"), {2, 2, 64}), {1, 0, 2}), {2, 2, 64},
              DType::kQ4_0, 144);
}

TEST(RecipeInfer, CastChangesThePlainDtype) {
  expect_meta(R::cast(R::source("h"), DType::kF32), {2, 8}, DType::kF32, 64);
  expect_meta(R::cast(R::source("q"), DType::kBF16), {4, 8}, DType::kBF16, 64);
}

TEST(RecipeInfer, ViewReinterpretsEqualBytes) {
  expect_meta(R::view(R::source("u8"), DType::kF32, {4}), {4}, DType::kF32, 16);
  expect_meta(R::view(R::source("blk"), DType::kU8, {144}), {144}, DType::kU8, 144);
  expect_meta(R::view(R::source("h"), DType::kU8, {2, 16}), {2, 16}, DType::kU8, 32);
}

TEST(RecipeInfer, NestedRecipesComposeAndListSourceKeysOnce) {
  const R fused = R::transpose(
      R::concatenate(0, {R::source("q"), R::source("k"), R::source("q", RangeSelection{0, 0, 1})}),
      {1, 0});
  expect_meta(fused, {8, 7}, DType::kF32, 224);
  EXPECT_EQ(fused.source_keys(), (std::vector<std::string>{"q", "k"}));
  EXPECT_EQ(fused.kind_name(), "transpose");
}

TEST(RecipeInferErrors, EmptySourceKey) {
  expect_error(R::source(""), RecipeErrorKind::kEmptySourceKey, "source", "");
}

TEST(RecipeInferErrors, UnknownSourceIsNotFound) {
  expect_error(R::source("nope"), RecipeErrorKind::kUnknownSource, "source", "nope");
  EXPECT_EQ(R::source("nope").infer(make_catalog()).error().code(), ErrorCode::kNotFound);
}

TEST(RecipeInferErrors, InvalidSelection) {
  expect_error(R::source("q", RangeSelection{0, 3, 9}), RecipeErrorKind::kInvalidSelection,
               "source", "q");
  expect_error(R::source("q", RangeSelection{2, 0, 1}), RecipeErrorKind::kInvalidSelection,
               "source", "q");
  expect_error(R::select(R::source("q"), ContiguousSelection{30, {4}}),
               RecipeErrorKind::kInvalidSelection, "select", "q");
}

TEST(RecipeInferErrors, MisalignedSelectionOfPackedData) {
  expect_error(R::select(R::source("blk"), RangeSelection{1, 16, 48}),
               RecipeErrorKind::kBlockMisaligned, "select", "blk");
  expect_error(R::source("blk", ContiguousSelection{16, {32}}), RecipeErrorKind::kBlockMisaligned,
               "source", "blk");
}

TEST(RecipeInferErrors, EmptyInputs) {
  expect_error(R::concatenate(0, {}), RecipeErrorKind::kEmptyInputs, "concatenate", "");
  expect_error(R::stack(0, {}), RecipeErrorKind::kEmptyInputs, "stack", "");
}

TEST(RecipeInferErrors, JoinAxisOutOfRange) {
  expect_error(R::concatenate(2, {R::source("q"), R::source("k")}),
               RecipeErrorKind::kInvalidJoinAxis, "concatenate", "q");
  expect_error(R::stack(3, {R::source("e0"), R::source("e1")}), RecipeErrorKind::kInvalidJoinAxis,
               "stack", "e0");
}

TEST(RecipeInferErrors, DtypeMismatchInJoins) {
  expect_error(R::concatenate(0, {R::source("k"), R::source("h")}), RecipeErrorKind::kDtypeMismatch,
               "concatenate", "k");
  expect_error(R::stack(0, {R::source("k"), R::source("h")}), RecipeErrorKind::kDtypeMismatch,
               "stack", "k");
}

TEST(RecipeInferErrors, ShapeMismatchInJoins) {
  expect_error(R::concatenate(0, {R::source("q"), R::source("e0")}),
               RecipeErrorKind::kShapeMismatch, "concatenate", "q");
  expect_error(R::concatenate(0, {R::source("q"), R::reshape(R::source("k"), {16})}),
               RecipeErrorKind::kShapeMismatch, "concatenate", "q");
  expect_error(R::stack(0, {R::source("q"), R::source("k")}), RecipeErrorKind::kShapeMismatch,
               "stack", "q");
}

TEST(RecipeInferErrors, ReshapeElementCountMismatch) {
  expect_error(R::reshape(R::source("q"), {5, 7}), RecipeErrorKind::kElementCountMismatch,
               "reshape", "q");
}

TEST(RecipeInferErrors, ReshapeSplittingBlocks) {
  expect_error(R::reshape(R::source("blk"), {16, 16}), RecipeErrorKind::kBlockMisaligned, "reshape",
               "blk");
}

TEST(RecipeInferErrors, InvalidPermutation) {
  expect_error(R::transpose(R::source("q"), {0, 0}), RecipeErrorKind::kInvalidPermutation,
               "transpose", "q");
  expect_error(R::transpose(R::source("q"), {0}), RecipeErrorKind::kInvalidPermutation, "transpose",
               "q");
  expect_error(R::transpose(R::source("q"), {0, 2}), RecipeErrorKind::kInvalidPermutation,
               "transpose", "q");
}

TEST(RecipeInferErrors, PackedInnermostAxisCannotMove) {
  expect_error(R::transpose(R::source("blk"), {1, 0}), RecipeErrorKind::kBlockMisaligned,
               "transpose", "blk");
  expect_error(R::stack(2, {R::source("blk"), R::source("blk")}), RecipeErrorKind::kBlockMisaligned,
               "stack", "blk");
}

TEST(RecipeInferErrors, CastToOrFromBlockQuantizedIsUnsupported) {
  expect_error(R::cast(R::source("blk"), DType::kF32), RecipeErrorKind::kUnsupportedDtype, "cast",
               "blk");
  expect_error(R::cast(R::source("q"), DType::kQ8_0), RecipeErrorKind::kUnsupportedDtype, "cast",
               "q");
  EXPECT_EQ(R::cast(R::source("q"), DType::kQ8_0).infer(make_catalog()).error().code(),
            ErrorCode::kUnsupported);
}

TEST(RecipeInferErrors, ViewByteCountMismatch) {
  expect_error(R::view(R::source("u8"), DType::kF32, {3}), RecipeErrorKind::kByteCountMismatch,
               "view", "u8");
  // A view target that is not whole blocks of a packed dtype.
  expect_error(R::view(R::source("u8"), DType::kQ4_0, {16}), RecipeErrorKind::kBlockMisaligned,
               "view", "u8");
}

TEST(RecipeInferErrors, ZeroSizedOutput) {
  expect_error(R::source("zero"), RecipeErrorKind::kZeroSizedOutput, "source", "zero");
}

TEST(RecipeInferErrors, ArithmeticOverflow) {
  expect_error(R::reshape(R::source("q"), {1ULL << 32, 1ULL << 32}), RecipeErrorKind::kOverflow,
               "reshape", "q");
  expect_error(R::view(R::source("u8"), DType::kF64, {1ULL << 62}), RecipeErrorKind::kOverflow,
               "view", "u8");
}

TEST(RecipeInferErrors, NestedErrorNamesThePathToTheFailingNode) {
  expect_error(R::concatenate(0, {R::source("q"), R::reshape(R::source("k"), {3})}),
               RecipeErrorKind::kElementCountMismatch, "concatenate/1/reshape", "k");
  expect_error(R::cast(R::select(R::source("missing"), FullSelection{}), DType::kF16),
               RecipeErrorKind::kUnknownSource, "cast/select/source", "missing");
}

Result<std::uint64_t> bytes_through_error_context(const R& recipe, const TensorCatalog& catalog) {
  EREDU_TRY(const RecipeMetadata meta, recipe.infer(catalog));
  return meta.byte_length;
}

TEST(RecipeInferErrors, ConvertsToAnErrorForErrorReturningCallers) {
  const auto catalog = make_catalog();
  EXPECT_EQ(bytes_through_error_context(R::source("k"), catalog).value(), 64U);
  const auto bad = bytes_through_error_context(R::source("nope"), catalog);
  ASSERT_FALSE(bad);
  EXPECT_EQ(bad.error().code(), ErrorCode::kNotFound);
  EXPECT_EQ(bad.error().subject(), "nope");
}

}  // namespace
}  // namespace eredu::checkpoint
