// Write → read round trips through the deterministic writer, typed accessors, and the layout of
// the written bytes checked against the GGUF spec by hand.

#include <cmath>
#include <limits>

#include "gguf_fixtures.hpp"

namespace eredu::checkpoint {
namespace {

using testing::parse_bytes;
using testing::pattern_bytes;

template <typename T>
T read_le(const std::vector<std::byte>& bytes, std::uint64_t offset) {
  T value;
  std::memcpy(&value, bytes.data() + offset, sizeof(T));
  return value;
}

// One entry per value type (and arrays of each), with boundary values.
std::vector<std::pair<std::string, GgufValue>> every_value_type() {
  using L8 = std::numeric_limits<std::int8_t>;
  using L16 = std::numeric_limits<std::int16_t>;
  using L32 = std::numeric_limits<std::int32_t>;
  using L64 = std::numeric_limits<std::int64_t>;
  return {
      {"t.u8", GgufValue(std::uint8_t{255})},
      {"t.i8", GgufValue(L8::min())},
      {"t.u16", GgufValue(std::uint16_t{65535})},
      {"t.i16", GgufValue(L16::min())},
      {"t.u32", GgufValue(std::uint32_t{4294967295u})},
      {"t.i32", GgufValue(L32::min())},
      {"t.f32", GgufValue(-1.5e-7f)},
      {"t.bool_true", GgufValue(true)},
      {"t.bool_false", GgufValue(false)},
      {"t.string", GgufValue("héllo\n")},
      {"t.empty_string", GgufValue("")},
      {"t.u64", GgufValue(std::uint64_t{18446744073709551615ull})},
      {"t.i64", GgufValue(L64::min())},
      {"t.f64", GgufValue(3.141592653589793)},
      {"t.a_u8", GgufValue(GgufArray::of(std::vector<std::uint8_t>{0, 1, 255}))},
      {"t.a_i8", GgufValue(GgufArray::of(std::vector<std::int8_t>{-128, 0, 127}))},
      {"t.a_u16", GgufValue(GgufArray::of(std::vector<std::uint16_t>{1, 65535}))},
      {"t.a_i16", GgufValue(GgufArray::of(std::vector<std::int16_t>{-32768, 32767}))},
      {"t.a_u32", GgufValue(GgufArray::of(std::vector<std::uint32_t>{7, 4294967295u}))},
      {"t.a_i32", GgufValue(GgufArray::of(std::vector<std::int32_t>{-1, L32::max()}))},
      {"t.a_f32", GgufValue(GgufArray::of(std::vector<float>{0.5f, -0.0f, 1e30f}))},
      {"t.a_bool", GgufValue(GgufArray::of(std::vector<bool>{true, false, true}))},
      {"t.a_string", GgufValue(GgufArray::of_strings({"a", "", "<0x0A>", "▁the"}))},
      {"t.a_u64", GgufValue(GgufArray::of(std::vector<std::uint64_t>{1ull << 63}))},
      {"t.a_i64", GgufValue(GgufArray::of(std::vector<std::int64_t>{L64::min(), L64::max()}))},
      {"t.a_f64", GgufValue(GgufArray::of(std::vector<double>{1e-300, -2.5}))},
      {"t.a_empty", GgufValue(GgufArray::of(std::vector<std::uint32_t>{}))},
      {"t.a_nested",
       GgufValue(GgufArray::of_arrays({GgufArray::of(std::vector<std::int32_t>{1, 2}),
                                       GgufArray::of(std::vector<std::int32_t>{3})}))},
  };
}

TEST(GgufRoundTrip, EveryValueTypeReadsBackEqualInOrder) {
  for (std::uint32_t version : {2u, 3u}) {
    SCOPED_TRACE(version);
    GgufWriter w(GgufWriterOptions{version, 32});
    const auto values = every_value_type();
    for (const auto& [key, value] : values)
      w.add_metadata(key, value);
    const auto file = parse_bytes(w.build().value().bytes);
    ASSERT_TRUE(file.has_value()) << file.error().what();
    EXPECT_EQ(file->header().version, version);
    ASSERT_EQ(file->metadata().size(), values.size());
    for (std::size_t i = 0; i < values.size(); ++i) {
      EXPECT_EQ(file->metadata()[i].key, values[i].first);
      EXPECT_EQ(file->metadata()[i].value, values[i].second) << values[i].first;
    }
  }
}

TEST(GgufRoundTrip, WrittenBytesFollowTheSpecLayout) {
  // A header, one u32 entry and one F32 tensor, laid out by hand from the GGUF spec.
  GgufWriter w;
  w.add_metadata("k", GgufValue(std::uint32_t{0x11223344}));
  const std::vector<std::uint64_t> shape{2, 3};
  ASSERT_TRUE(w.add_tensor("w", DType::kF32, shape, pattern_bytes(24)).has_value());
  const GgufImage image = w.build().value();
  const auto& b = image.bytes;
  EXPECT_EQ(std::memcmp(b.data(), "GGUF", 4), 0);
  EXPECT_EQ(read_le<std::uint32_t>(b, 4), 3u);
  EXPECT_EQ(read_le<std::uint64_t>(b, 8), 1u);   // tensors
  EXPECT_EQ(read_le<std::uint64_t>(b, 16), 1u);  // metadata
  EXPECT_EQ(read_le<std::uint64_t>(b, 24), 1u);  // key length
  EXPECT_EQ(static_cast<char>(b[32]), 'k');
  EXPECT_EQ(read_le<std::uint32_t>(b, 33), 4u);  // u32
  EXPECT_EQ(read_le<std::uint32_t>(b, 37), 0x11223344u);
  EXPECT_EQ(read_le<std::uint64_t>(b, 41), 1u);  // name length
  EXPECT_EQ(static_cast<char>(b[49]), 'w');
  EXPECT_EQ(read_le<std::uint32_t>(b, 50), 2u);  // n_dims
  EXPECT_EQ(read_le<std::uint64_t>(b, 54), 3u);  // ne[0]: innermost = last row-major dim
  EXPECT_EQ(read_le<std::uint64_t>(b, 62), 2u);  // ne[1]
  EXPECT_EQ(read_le<std::uint32_t>(b, 70), 0u);  // F32
  EXPECT_EQ(read_le<std::uint64_t>(b, 74), 0u);  // offset
  // Infos end at 82; the data section starts at 96, the next multiple of 32.
  EXPECT_EQ(image.layout.infos_end, 82u);
  EXPECT_EQ(image.layout.data_section_offset, 96u);
  EXPECT_EQ(b.size(), 96u + 32u);
  const auto file = parse_bytes(b);
  ASSERT_TRUE(file.has_value()) << file.error().what();
  EXPECT_EQ(file->header().data_section_offset, 96u);
  const GgufTensorInfo& t = file->tensors()[0];
  EXPECT_EQ(t.ne, (std::vector<std::uint64_t>{3, 2}));
  EXPECT_EQ(t.shape, (std::vector<std::uint64_t>{2, 3}));
  EXPECT_EQ(t.element_count, 6u);
  EXPECT_EQ(t.byte_size, 24u);
  EXPECT_EQ(t.data_offset, 96u);
  EXPECT_EQ(t.info_offset, 41u);
}

TEST(GgufRoundTrip, WriterIsDeterministic) {
  const GgufImage a = testing::valid_image();
  const GgufImage b = testing::valid_image();
  EXPECT_EQ(a.bytes, b.bytes);
  const std::filesystem::path dir = testing::temp_dir("determinism");
  ASSERT_TRUE(testing::valid_writer().write_file(dir / "a.gguf").has_value());
  auto mapped = MappedFile::open(dir / "a.gguf").value();
  EXPECT_TRUE(
      std::equal(mapped->bytes().begin(), mapped->bytes().end(), a.bytes.begin(), a.bytes.end()));
  std::filesystem::remove_all(dir);
}

TEST(GgufRoundTrip, TensorBytesAreExactlyTheWrittenSpans) {
  const std::filesystem::path dir = testing::temp_dir("spans");
  ASSERT_TRUE(testing::valid_writer().write_file(dir / "m.gguf").has_value());
  auto file = GgufFile::open(dir / "m.gguf");
  ASSERT_TRUE(file.has_value()) << file.error().what();
  const struct {
    const char* name;
    DType dtype;
    std::vector<std::uint64_t> shape;
    std::size_t bytes;
    unsigned seed;
  } expected[] = {{"a.weight", DType::kF32, {2, 4}, 32, 1},
                  {"b.weight", DType::kQ8_0, {2, 32}, 68, 2},
                  {"c.bias", DType::kF16, {3}, 6, 3}};
  ASSERT_EQ(file->tensors().size(), 3u);
  for (const auto& e : expected) {
    SCOPED_TRACE(e.name);
    const GgufTensorInfo* info = file->find_tensor(e.name);
    ASSERT_NE(info, nullptr);
    EXPECT_EQ(info->dtype, e.dtype);
    EXPECT_EQ(info->shape, e.shape);
    EXPECT_EQ(info->byte_size, e.bytes);
    EXPECT_EQ(info->data_offset % 32, 0u);
    const auto span = file->tensor_bytes(*info).value();
    const auto want = pattern_bytes(e.bytes, e.seed);
    EXPECT_TRUE(std::equal(span.begin(), span.end(), want.begin(), want.end()));
  }
  EXPECT_EQ(file->tensor_bytes("nope").error().code(), ErrorCode::kNotFound);
  std::filesystem::remove_all(dir);
}

TEST(GgufRoundTrip, WriterRejectsDataOfTheWrongSizeAndDtypesGgufCannotStore) {
  GgufWriter w;
  const std::vector<std::uint64_t> shape{2, 32};
  EXPECT_EQ(w.add_tensor("q", DType::kQ8_0, shape, pattern_bytes(67)).error().code(),
            ErrorCode::kInvalidArgument);
  EXPECT_EQ(w.add_tensor("u", DType::kU32, shape, pattern_bytes(256)).error().code(),
            ErrorCode::kInvalidArgument);
  const std::vector<std::uint64_t> odd{1, 33};
  EXPECT_EQ(w.add_tensor("q", DType::kQ4_0, odd, pattern_bytes(18)).error().code(),
            ErrorCode::kInvalidArgument);
}

TEST(GgufAccessors, TypedGettersConvertIntegersAndNameKeyFoundAndExpectedTypes) {
  GgufWriter w;
  w.add_metadata("llama.block_count", GgufValue(std::uint16_t{5}));
  w.add_metadata("llama.big", GgufValue(std::uint64_t{1ull << 40}));
  w.add_metadata("llama.negative", GgufValue(std::int32_t{-3}));
  w.add_metadata("llama.as_string", GgufValue("12"));
  w.add_metadata("llama.eps", GgufValue(1e-5f));
  w.add_metadata("llama.f64", GgufValue(0.25));
  w.add_metadata("llama.flag", GgufValue(true));
  w.add_metadata("llama.scores", GgufValue(GgufArray::of(std::vector<float>{0.5f, 1.5f})));
  const GgufImage image = w.build().value();
  const auto file = parse_bytes(image.bytes);
  ASSERT_TRUE(file.has_value()) << file.error().what();
  const GgufContents& c = file->contents();
  EXPECT_EQ(c.get_u32("llama.block_count").value(), 5u);
  EXPECT_EQ(c.get_u64("llama.big").value(), 1ull << 40);
  EXPECT_EQ(c.get_i64("llama.negative").value(), -3);
  EXPECT_EQ(c.get_f32("llama.eps").value(), 1e-5f);
  EXPECT_EQ(c.get_float("llama.f64").value(), 0.25);
  EXPECT_EQ(c.get_float("llama.eps").value(), static_cast<double>(1e-5f));
  EXPECT_TRUE(c.get_bool("llama.flag").value());
  EXPECT_EQ(c.get_string("llama.as_string").value(), "12");
  EXPECT_EQ(c.get_array("llama.scores", GgufValueType::kF32).value()->values<float>().value(),
            (std::vector<float>{0.5f, 1.5f}));

  const auto wrong = c.get_u32("llama.as_string");
  ASSERT_FALSE(wrong.has_value());
  EXPECT_EQ(wrong.error().code(), ErrorCode::kInvalidModel);
  EXPECT_EQ(wrong.error().subject(), "llama.as_string");
  EXPECT_EQ(wrong.error().message(), "metadata key has type string, expected an unsigned integer");
  EXPECT_EQ(wrong.error().offset(), image.layout.metadata[3].value_offset);
  EXPECT_EQ(wrong.error().path(), "fixture.gguf");

  EXPECT_EQ(c.get_u32("llama.big").error().code(), ErrorCode::kInvalidModel);
  EXPECT_EQ(c.get_u64("llama.negative").error().code(), ErrorCode::kInvalidModel);
  EXPECT_EQ(c.get_f32("llama.f64").error().message(), "metadata key has type f64, expected f32");
  EXPECT_EQ(c.get_array("llama.scores", GgufValueType::kU8).error().message(),
            "metadata key has type array of f32, expected array of u8");
  EXPECT_EQ(c.get_string("llama.flag").error().message(),
            "metadata key has type bool, expected string");
  const auto missing = c.get_u32("llama.context_length");
  EXPECT_EQ(missing.error().code(), ErrorCode::kNotFound);
  EXPECT_EQ(missing.error().subject(), "llama.context_length");
  // Typed array access refuses a different element type.
  EXPECT_FALSE(c.get_array("llama.scores").value()->values<std::uint32_t>().has_value());
  EXPECT_FALSE(c.get_array("llama.scores").value()->at<double>(0).has_value());
  EXPECT_FALSE(c.get_array("llama.scores").value()->at<float>(2).has_value());
}

}  // namespace
}  // namespace eredu::checkpoint
