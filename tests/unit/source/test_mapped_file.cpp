// MappedFile::copy_out: the bytes a reader copies out of a mapped file are the file's, read without
// mapping a page of it, and a range it cannot read is an error naming the file and the offset.
#include <fcntl.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <optional>
#include <string>
#include <vector>

#include "eredu/checkpoint/mapped_file.hpp"
#include "page_residency.hpp"

namespace eredu::checkpoint {
namespace {

class MappedFileCopy : public ::testing::Test {
 protected:
  void SetUp() override {
    path_ = std::filesystem::temp_directory_path() /
            ("eredu_mapped_copy_" + std::to_string(::getpid()) + ".bin");
    contents_.resize(std::size_t{1} << 20);
    for (std::size_t i = 0; i < contents_.size(); ++i) {
      contents_[i] = static_cast<std::byte>((i * 2654435761U) >> 24);
    }
    std::ofstream out(path_, std::ios::binary);
    out.write(reinterpret_cast<const char*>(contents_.data()),
              static_cast<std::streamsize>(contents_.size()));
  }
  void TearDown() override {
    std::error_code ignored;
    std::filesystem::remove(path_, ignored);
  }
  std::filesystem::path path_;
  std::vector<std::byte> contents_;
};

TEST_F(MappedFileCopy, CopiesTheFilesBytesWithoutMappingAPageOfIt) {
  auto file = MappedFile::open(path_);
  ASSERT_TRUE(file.has_value()) << file.error().what();
  const std::span<const std::byte> all = (*file)->bytes();
  if (!testing::page_is_mapped(all.data()).has_value())
    GTEST_SKIP() << "/proc/self/pagemap cannot be read";
  // An odd range across many pages, as a vector between two matrices lies.
  const std::size_t offset = 300001;
  const std::size_t length = 200003;
  std::vector<std::byte> copy(length);
  ASSERT_TRUE((*file)->copy_out(all.subspan(offset, length), copy.data()).has_value());
  EXPECT_TRUE(std::equal(copy.begin(), copy.end(), contents_.begin() + offset));
  const auto page = static_cast<std::size_t>(::sysconf(_SC_PAGESIZE));
  std::size_t mapped = 0;
  for (std::size_t p = 0; p < all.size(); p += page) {
    mapped += testing::page_is_mapped(all.data() + p).value_or(false) ? 1 : 0;
  }
  EXPECT_EQ(mapped, 0U) << "copy_out mapped pages of the file";
}

TEST_F(MappedFileCopy, ARangeOutsideTheFileIsAnInvalidArgumentNamingTheFile) {
  auto file = MappedFile::open(path_);
  ASSERT_TRUE(file.has_value()) << file.error().what();
  std::vector<std::byte> other(16);
  std::vector<std::byte> out(16);
  auto copied = (*file)->copy_out(std::span<const std::byte>(other), out.data());
  ASSERT_FALSE(copied.has_value());
  EXPECT_EQ(copied.error().code(), ErrorCode::kInvalidArgument);
  EXPECT_NE(std::string(copied.error().what()).find(path_.string()), std::string::npos)
      << copied.error().what();
}

TEST_F(MappedFileCopy, AFileThatShrankUnderItsMappingIsAnIoErrorNamingTheFileAndOffset) {
  auto file = MappedFile::open(path_);
  ASSERT_TRUE(file.has_value()) << file.error().what();
  std::filesystem::resize_file(path_, 4096);
  std::vector<std::byte> out(8192);
  auto copied = (*file)->copy_out((*file)->bytes().subspan(8192, 8192), out.data());
  ASSERT_FALSE(copied.has_value());
  EXPECT_EQ(copied.error().code(), ErrorCode::kIo);
  const std::string what = copied.error().what();
  EXPECT_NE(what.find(path_.string()), std::string::npos) << what;
  EXPECT_EQ(copied.error().offset(), std::optional<std::uint64_t>(8192)) << what;
}

TEST(MappedFileFromBytes, CopiesTheBytesItWasMadeFrom) {
  const std::vector<std::byte> bytes{std::byte{1}, std::byte{2}, std::byte{3}, std::byte{4}};
  const auto file = MappedFile::from_bytes(bytes, "in-memory");
  std::vector<std::byte> out(2);
  ASSERT_TRUE(file->copy_out(file->bytes().subspan(1, 2), out.data()).has_value());
  EXPECT_EQ(out, (std::vector<std::byte>{std::byte{2}, std::byte{3}}));
}

}  // namespace
}  // namespace eredu::checkpoint
