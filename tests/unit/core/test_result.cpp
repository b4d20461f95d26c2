#include <gtest/gtest.h>

#include <memory>
#include <string>

#include "eredu/core/result.hpp"

namespace eredu {
namespace {

Result<int> parse_positive(int v) {
  if (v <= 0) return fail(ErrorCode::kInvalidArgument, "must be positive");
  return v;
}

Result<int> doubled(int v) {
  EREDU_TRY(const int checked, parse_positive(v));
  return checked * 2;
}

Result<void> check(int v) {
  EREDU_TRY_VOID(parse_positive(v).and_then([](int) { return Result<void>(); }));
  return ok();
}

TEST(Result, HoldsValueOrErrorAndPropagatesThroughTry) {
  EXPECT_EQ(doubled(21).value(), 42);
  const Result<int> bad = doubled(-1);
  ASSERT_FALSE(bad.has_value());
  EXPECT_EQ(bad.error().code(), ErrorCode::kInvalidArgument);
  EXPECT_EQ(bad.error().message(), "must be positive");
  EXPECT_TRUE(check(1).has_value());
  EXPECT_FALSE(check(0).has_value());
}

TEST(Result, SupportsMoveOnlyValues) {
  Result<std::unique_ptr<int>> r = std::make_unique<int>(7);
  ASSERT_TRUE(r);
  std::unique_ptr<int> p = std::move(r).value();
  EXPECT_EQ(*p, 7);
}

TEST(Result, TransformErrorMapsOnlyErrors) {
  auto mapped = Result<int>(fail(ErrorCode::kIo, "disk")).transform_error([](Error e) {
    return std::string(e.message());
  });
  EXPECT_EQ(mapped.error(), "disk");
  auto kept = Result<int>(5).transform_error([](Error e) { return e.message(); });
  EXPECT_EQ(kept.value(), 5);
}

TEST(Error, WhatNamesPathSubjectAndOffset) {
  Error e = Error(ErrorCode::kInvalidModel, "data past end of file")
                .with_path("model.gguf")
                .with_subject("blk.0.attn_q.weight")
                .with_offset(1234);
  EXPECT_EQ(e.what(),
            "invalid model: model.gguf: 'blk.0.attn_q.weight' at byte 1234: data past end of file");
}

TEST(ResultDeathTest, ValueOnErrorTerminatesInsteadOfThrowing) {
  EXPECT_DEATH(
      {
        Result<int> r = fail(ErrorCode::kInternal, "x");
        (void)r.value();
      },
      "called on an error");
}

}  // namespace
}  // namespace eredu
