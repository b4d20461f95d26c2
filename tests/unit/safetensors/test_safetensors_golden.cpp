// A file written by the independent Python `safetensors` package
// (tests/reference/make_safetensors_golden.py); the expected values are the script's literals.

#include <cstring>

#include "safetensors_test_util.hpp"

namespace eredu::checkpoint {
namespace {

const std::filesystem::path kGolden =
    std::filesystem::path(EREDU_SOURCE_DIR) / "tests/reference/data/safetensors_golden.safetensors";

template <typename T>
std::vector<T> values_of(const SafetensorsFile& file, std::string_view name) {
  const auto bytes = file.tensor_bytes(name);
  EXPECT_TRUE(bytes.has_value()) << name;
  if (!bytes) return {};
  std::vector<T> out(bytes->size() / sizeof(T));
  if (!out.empty()) std::memcpy(out.data(), bytes->data(), out.size() * sizeof(T));
  return out;
}

TEST(SafetensorsGolden, PythonReferenceFileReadsWithExactNamesDtypesShapesAndValues) {
  const auto file = open_safetensors(kGolden);
  ASSERT_TRUE(file.has_value()) << file.error().what();
  EXPECT_EQ(file->metadata(),
            (std::map<std::string, std::string>{{"format", "np"}, {"source", "eredu golden"}}));
  ASSERT_EQ(file->tensors().size(), 9U);

  struct Expected {
    const char* name;
    DType dtype;
    std::vector<std::uint64_t> shape;
  };
  const Expected expected[] = {
      {"model.weight_f32", DType::kF32, {2, 3}},
      {"model.bias_f16", DType::kF16, {4}},
      {"ids.i64", DType::kI64, {3}},
      {"mask.bool", DType::kBool, {2, 2}},
      {"counts.u16", DType::kU16, {3}},
      {"scalar.f64", DType::kF64, {}},
      {"empty.i32", DType::kI32, {0, 3}},
      {"bytes.u8", DType::kU8, {5}},
      {"small.i8", DType::kI8, {2}},
  };
  for (const Expected& e : expected) {
    const SafetensorsTensor* t = file->find(e.name);
    ASSERT_NE(t, nullptr) << e.name;
    EXPECT_EQ(t->dtype, e.dtype) << e.name;
    EXPECT_EQ(t->shape, e.shape) << e.name;
  }

  EXPECT_EQ(values_of<float>(*file, "model.weight_f32"),
            (std::vector<float>{1.5F, -2.25F, 3.0F, 0.0F, 0.5F, -8.0F}));
  // float16 bit patterns of 1.0, -0.5, 65504.0 and 0.25.
  EXPECT_EQ(values_of<std::uint16_t>(*file, "model.bias_f16"),
            (std::vector<std::uint16_t>{0x3C00, 0xB800, 0x7BFF, 0x3400}));
  EXPECT_EQ(values_of<std::int64_t>(*file, "ids.i64"),
            (std::vector<std::int64_t>{-1, 0, 9223372036854775807}));
  EXPECT_EQ(values_of<std::uint8_t>(*file, "mask.bool"), (std::vector<std::uint8_t>{1, 0, 0, 1}));
  EXPECT_EQ(values_of<std::uint16_t>(*file, "counts.u16"),
            (std::vector<std::uint16_t>{1, 65535, 300}));
  EXPECT_EQ(values_of<double>(*file, "scalar.f64"), (std::vector<double>{3.141592653589793}));
  EXPECT_TRUE(values_of<std::int32_t>(*file, "empty.i32").empty());
  EXPECT_EQ(values_of<std::uint8_t>(*file, "bytes.u8"),
            (std::vector<std::uint8_t>{0, 1, 127, 128, 255}));
  EXPECT_EQ(values_of<std::int8_t>(*file, "small.i8"), (std::vector<std::int8_t>{-128, 127}));
}

TEST(SafetensorsGolden, OurWriterReproducesThePythonFileContentsWhenReadBack) {
  // Re-encode the golden tensors with our writer; reading both must give the same catalogue and
  // bytes (the layouts differ: Python orders by dtype alignment, we order by name).
  const auto golden = open_safetensors(kGolden);
  ASSERT_TRUE(golden.has_value()) << golden.error().what();
  SafetensorsWriter writer;
  for (const auto& [key, value] : golden->metadata())
    writer.set_metadata(key, value);
  for (const SafetensorsTensor& t : golden->tensors()) {
    const auto bytes = golden->tensor_bytes(t);
    ASSERT_TRUE(bytes.has_value());
    ASSERT_TRUE(writer.add(t.name, t.dtype, t.shape, *bytes));
  }
  const auto ours = writer.serialize();
  ASSERT_TRUE(ours.has_value());
  const auto reread = testing::parse_bytes(*ours);
  ASSERT_TRUE(reread.has_value()) << reread.error().what();
  EXPECT_EQ(reread->metadata(), golden->metadata());
  ASSERT_EQ(reread->tensors().size(), golden->tensors().size());
  for (const SafetensorsTensor& t : golden->tensors()) {
    const SafetensorsTensor* r = reread->find(t.name);
    ASSERT_NE(r, nullptr);
    EXPECT_EQ(r->dtype, t.dtype);
    EXPECT_EQ(r->shape, t.shape);
    const auto a = golden->tensor_bytes(t);
    const auto b = reread->tensor_bytes(*r);
    EXPECT_TRUE(std::equal(a->begin(), a->end(), b->begin(), b->end())) << t.name;
  }
}

}  // namespace
}  // namespace eredu::checkpoint
