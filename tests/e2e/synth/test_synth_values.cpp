// eredu-synth's values: reproducible from the seed (and independent of the thread count), weights
// distributed N(0, 0.02) after decoding with the codec, norms exactly 1.

#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "eredu/checkpoint/encoding/codec.hpp"
#include "eredu/checkpoint/gguf.hpp"
#include "synth_fixture.hpp"

namespace eredu::synth::testing {
namespace {

using checkpoint::GgufFile;

TEST_F(SynthTest, SameSeedGivesByteIdenticalFiles) {
  for (const std::string type : {"F16", "Q4_0"}) {
    const fs::path a = write_tiny(type, 7, "", "a");
    const fs::path b = write_tiny(type, 7, "", "b");
    EXPECT_EQ(read_bytes(a), read_bytes(b)) << type;
  }
}

TEST_F(SynthTest, ThreadCountDoesNotChangeTheBytes) {
  const fs::path one = write_tiny("Q8_0", 3, "-t 1", "t1");
  const fs::path three = write_tiny("Q8_0", 3, "-t 3", "t3");
  EXPECT_EQ(read_bytes(one), read_bytes(three));
}

TEST_F(SynthTest, DifferentSeedsGiveDifferentWeightsButTheSameLayout) {
  auto a = GgufFile::open(write_tiny("F32", 1));
  auto b = GgufFile::open(write_tiny("F32", 2));
  ASSERT_TRUE(a.has_value() && b.has_value());
  ASSERT_EQ(a->header().file_size, b->header().file_size);
  ASSERT_EQ(a->tensors().size(), b->tensors().size());
  for (std::size_t i = 0; i < a->tensors().size(); ++i) {
    const auto& ta = a->tensors()[i];
    const auto& tb = b->tensors()[i];
    ASSERT_EQ(ta.name, tb.name);
    ASSERT_EQ(ta.data_offset, tb.data_offset);
    const auto bytes_a = a->tensor_bytes(ta).value();
    const auto bytes_b = b->tensor_bytes(tb).value();
    const bool same = std::equal(bytes_a.begin(), bytes_a.end(), bytes_b.begin(), bytes_b.end());
    if (ta.shape.size() == 2) {
      EXPECT_FALSE(same) << ta.name;
    } else {
      EXPECT_TRUE(same) << ta.name;  // norms are 1 whatever the seed
    }
  }
}

TEST_F(SynthTest, DistinctTensorsAndRowsHoldDistinctValues) {
  auto file = GgufFile::open(write_tiny("F32", 5));
  ASSERT_TRUE(file.has_value());
  const auto q = file->tensor_bytes("blk.0.attn_q.weight").value();
  const auto q1 = file->tensor_bytes("blk.1.attn_q.weight").value();
  EXPECT_FALSE(std::equal(q.begin(), q.end(), q1.begin(), q1.end()));
  const std::size_t row = 64 * sizeof(float);
  EXPECT_FALSE(std::equal(q.begin(), q.begin() + row, q.begin() + row, q.begin() + 2 * row));
}

struct Moments {
  double mean = 0;
  double stddev = 0;
  std::uint64_t n = 0;
};

Moments moments(const std::vector<float>& values) {
  Moments m;
  m.n = values.size();
  double sum = 0;
  for (float v : values)
    sum += v;
  m.mean = sum / static_cast<double>(m.n);
  double sq = 0;
  for (float v : values)
    sq += (v - m.mean) * (v - m.mean);
  m.stddev = std::sqrt(sq / static_cast<double>(m.n - 1));
  return m;
}

TEST_F(SynthTest, DecodedWeightsHaveMeanZeroAndStandardDeviationTwoHundredths) {
  for (const std::string& type : kEncodings) {
    SCOPED_TRACE(type);
    auto file = GgufFile::open(write_tiny(type, 11));
    ASSERT_TRUE(file.has_value());
    std::vector<float> all;
    for (const auto& t : file->tensors()) {
      std::vector<float> values(static_cast<std::size_t>(t.element_count));
      ASSERT_TRUE(encoding::dequantize(t.dtype, file->tensor_bytes(t).value(), values));
      if (t.shape.size() == 1) {
        for (float v : values)
          ASSERT_EQ(v, 1.0f) << t.name;
        continue;
      }
      // Each matrix on its own (the smallest has 2048 values: loose bounds)...
      const Moments m = moments(values);
      EXPECT_NEAR(m.mean, 0.0, 0.003) << t.name;
      EXPECT_NEAR(m.stddev, 0.02, 0.002) << t.name;
      all.insert(all.end(), values.begin(), values.end());
    }
    // ...and all of them together (about 150k values: the standard error of the standard
    // deviation is ~4e-5; 4-bit rounding adds up to ~0.0002).
    const Moments m = moments(all);
    EXPECT_NEAR(m.mean, 0.0, 0.0003);
    EXPECT_NEAR(m.stddev, 0.02, 0.0005);
    // A normal puts 68.3% of its mass within one standard deviation (a uniform 57.7%).
    std::uint64_t within = 0;
    for (float v : all)
      within += std::fabs(v) < 0.02f ? 1 : 0;
    EXPECT_NEAR(static_cast<double>(within) / static_cast<double>(all.size()), 0.683,
                type.starts_with("Q4") || type.starts_with("Q5") ? 0.03 : 0.01);
  }
}

}  // namespace
}  // namespace eredu::synth::testing
