#include <gtest/gtest.h>

#include "eredu/checkpoint/tensor_catalog.hpp"

namespace eredu::checkpoint {
namespace {

TensorMetadata f32(std::string name, std::vector<std::uint64_t> shape, std::uint64_t bytes,
                   std::uint32_t shard = 0, std::string path = "a.safetensors") {
  return TensorMetadata{std::move(name), std::move(shape), DType::kF32, bytes,
                        shard,           std::move(path)};
}

TEST(TensorCatalog, KeepsEntryOrderAndFindsByName) {
  auto catalog = TensorCatalog::create(
      {f32("w", {2, 3}, 24), f32("b", {3}, 12),
       TensorMetadata{"q", {4, 64}, DType::kQ8_0, 4 * 2 * 34, 1, "b.safetensors"}});
  ASSERT_TRUE(catalog) << catalog.error().what();
  EXPECT_EQ(catalog->keys(), (std::vector<std::string>{"w", "b", "q"}));
  ASSERT_NE(catalog->find("b"), nullptr);
  EXPECT_EQ(catalog->find("b")->shape, (std::vector<std::uint64_t>{3}));
  EXPECT_EQ(catalog->find("q")->element_count(), 256U);
  EXPECT_EQ(catalog->total_bytes(), 24U + 12U + 272U);
  EXPECT_FALSE(catalog->contains("missing"));
  const auto missing = catalog->get("missing");
  ASSERT_FALSE(missing);
  EXPECT_EQ(missing.error().code(), ErrorCode::kNotFound);
  EXPECT_EQ(missing.error().subject(), "missing");
}

TEST(TensorCatalog, RejectsAnEmptyName) {
  const auto catalog = TensorCatalog::create({f32("w", {1}, 4), f32("", {1}, 4)});
  ASSERT_FALSE(catalog);
  EXPECT_EQ(catalog.error().code(), ErrorCode::kInvalidModel);
  EXPECT_NE(catalog.error().message().find("entry 1"), std::string::npos);
}

TEST(TensorCatalog, RejectsADuplicateNameNamingIt) {
  const auto catalog = TensorCatalog::create({f32("w", {1}, 4), f32("w", {2}, 8)});
  ASSERT_FALSE(catalog);
  EXPECT_EQ(catalog.error().code(), ErrorCode::kDuplicate);
  EXPECT_EQ(catalog.error().subject(), "w");
}

TEST(TensorCatalog, RejectsAByteLengthThatDisagreesWithTheShape) {
  const auto catalog = TensorCatalog::create({f32("w", {2, 3}, 23)});
  ASSERT_FALSE(catalog);
  EXPECT_EQ(catalog.error().code(), ErrorCode::kInvalidModel);
  EXPECT_EQ(catalog.error().subject(), "w");
  EXPECT_EQ(catalog.error().path(), "a.safetensors");
  EXPECT_NE(catalog.error().message().find("24 bytes"), std::string::npos);
}

TEST(TensorCatalog, RejectsAPackedShapeThatIsNotWholeBlocks) {
  // 48 is not a multiple of the Q4_0 block of 32 elements.
  const auto catalog =
      TensorCatalog::create({TensorMetadata{"q", {2, 48}, DType::kQ4_0, 54, 0, "m.gguf"}});
  ASSERT_FALSE(catalog);
  EXPECT_EQ(catalog.error().code(), ErrorCode::kInvalidModel);
  EXPECT_EQ(catalog.error().subject(), "q");
}

TEST(TensorCatalog, RejectsAShapeWhoseByteSizeOverflows) {
  const auto catalog = TensorCatalog::create({f32("big", {1ULL << 32, 1ULL << 32}, 0)});
  ASSERT_FALSE(catalog);
  EXPECT_EQ(catalog.error().code(), ErrorCode::kOverflow);
  EXPECT_EQ(catalog.error().subject(), "big");
}

TEST(TensorCatalog, RejectsOneShardIndexWithTwoPaths) {
  const auto catalog =
      TensorCatalog::create({f32("a", {1}, 4, 0, "x.gguf"), f32("b", {1}, 4, 0, "y.gguf")});
  ASSERT_FALSE(catalog);
  EXPECT_EQ(catalog.error().code(), ErrorCode::kInvalidModel);
  EXPECT_EQ(catalog.error().subject(), "b");
}

TEST(TensorCatalog, AcceptsZeroSizedTensorsWithZeroBytes) {
  // Documented policy: containers can store zero-sized tensors, so the catalog records them.
  const auto catalog = TensorCatalog::create({f32("empty", {0, 8}, 0), f32("scalar", {}, 4)});
  ASSERT_TRUE(catalog) << catalog.error().what();
  EXPECT_EQ(catalog->find("empty")->element_count(), 0U);
  EXPECT_EQ(catalog->find("scalar")->element_count(), 1U);
  const auto wrong = TensorCatalog::create({f32("empty", {0, 8}, 4)});
  ASSERT_FALSE(wrong);
  EXPECT_EQ(wrong.error().code(), ErrorCode::kInvalidModel);
}

TEST(TensorCatalog, EmptyCatalogHasNoEntries) {
  const auto catalog = TensorCatalog::create({});
  ASSERT_TRUE(catalog);
  EXPECT_TRUE(catalog->empty());
  EXPECT_EQ(catalog->total_bytes(), 0U);
}

}  // namespace
}  // namespace eredu::checkpoint
