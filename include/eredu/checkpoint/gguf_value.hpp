#pragma once
// GGUF metadata values: the thirteen value types of the GGUF spec (v2/v3), held as one variant
// whose index is the on-disk type id, and arrays of them (arrays of arrays allowed, depth-limited
// by the reader). Shared by the reader (gguf.hpp) and the writer (gguf_writer.hpp).

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <type_traits>
#include <variant>
#include <vector>

#include "eredu/core/result.hpp"

namespace eredu::checkpoint {

// The on-disk value type ids of GGUF (gguf_type). The numeric values are the file format.
enum class GgufValueType : std::uint32_t {
  kU8 = 0,
  kI8 = 1,
  kU16 = 2,
  kI16 = 3,
  kU32 = 4,
  kI32 = 5,
  kF32 = 6,
  kBool = 7,
  kString = 8,
  kArray = 9,
  kU64 = 10,
  kI64 = 11,
  kF64 = 12,
};

inline constexpr std::uint32_t kGgufValueTypeCount = 13;

// "u8", "i32", "f32", "bool", "string", "array", ...
[[nodiscard]] constexpr std::string_view to_string(GgufValueType type) noexcept {
  switch (type) {
    case GgufValueType::kU8:
      return "u8";
    case GgufValueType::kI8:
      return "i8";
    case GgufValueType::kU16:
      return "u16";
    case GgufValueType::kI16:
      return "i16";
    case GgufValueType::kU32:
      return "u32";
    case GgufValueType::kI32:
      return "i32";
    case GgufValueType::kF32:
      return "f32";
    case GgufValueType::kBool:
      return "bool";
    case GgufValueType::kString:
      return "string";
    case GgufValueType::kArray:
      return "array";
    case GgufValueType::kU64:
      return "u64";
    case GgufValueType::kI64:
      return "i64";
    case GgufValueType::kF64:
      return "f64";
  }
  return "unknown";
}

// Encoded size in bytes of one scalar of `type`; 0 for string and array (variable length).
[[nodiscard]] constexpr std::size_t gguf_scalar_size(GgufValueType type) noexcept {
  switch (type) {
    case GgufValueType::kU8:
    case GgufValueType::kI8:
    case GgufValueType::kBool:
      return 1;
    case GgufValueType::kU16:
    case GgufValueType::kI16:
      return 2;
    case GgufValueType::kU32:
    case GgufValueType::kI32:
    case GgufValueType::kF32:
      return 4;
    case GgufValueType::kU64:
    case GgufValueType::kI64:
    case GgufValueType::kF64:
      return 8;
    case GgufValueType::kString:
    case GgufValueType::kArray:
      return 0;
  }
  return 0;
}

// The C++ type that holds one scalar of a GGUF value type, and back.
template <typename T>
inline constexpr std::optional<GgufValueType> gguf_type_of = std::nullopt;
template <>
inline constexpr std::optional<GgufValueType> gguf_type_of<std::uint8_t> = GgufValueType::kU8;
template <>
inline constexpr std::optional<GgufValueType> gguf_type_of<std::int8_t> = GgufValueType::kI8;
template <>
inline constexpr std::optional<GgufValueType> gguf_type_of<std::uint16_t> = GgufValueType::kU16;
template <>
inline constexpr std::optional<GgufValueType> gguf_type_of<std::int16_t> = GgufValueType::kI16;
template <>
inline constexpr std::optional<GgufValueType> gguf_type_of<std::uint32_t> = GgufValueType::kU32;
template <>
inline constexpr std::optional<GgufValueType> gguf_type_of<std::int32_t> = GgufValueType::kI32;
template <>
inline constexpr std::optional<GgufValueType> gguf_type_of<float> = GgufValueType::kF32;
template <>
inline constexpr std::optional<GgufValueType> gguf_type_of<bool> = GgufValueType::kBool;
template <>
inline constexpr std::optional<GgufValueType> gguf_type_of<std::uint64_t> = GgufValueType::kU64;
template <>
inline constexpr std::optional<GgufValueType> gguf_type_of<std::int64_t> = GgufValueType::kI64;
template <>
inline constexpr std::optional<GgufValueType> gguf_type_of<double> = GgufValueType::kF64;

// A fixed-width GGUF scalar (every value type except string and array).
template <typename T>
concept GgufScalar = gguf_type_of<T>
.has_value();

// An array value. Scalar elements are kept as their little-endian encoded bytes (one allocation,
// no per-element overhead, so memory stays proportional to the file); string and nested-array
// elements are kept decoded. Elements all share one type.
class GgufArray {
 public:
  GgufArray() = default;
  explicit GgufArray(GgufValueType element_type) : element_type_(element_type) {}

  // Builders (used by the writer and by tests).
  template <GgufScalar T>
  [[nodiscard]] static GgufArray of(std::span<const T> values) {
    GgufArray array(*gguf_type_of<T>);
    array.size_ = values.size();
    array.scalars_.resize(values.size() * sizeof(T));
    for (std::size_t i = 0; i < values.size(); ++i) {
      if constexpr (std::is_same_v<T, bool>) {
        array.scalars_[i] = static_cast<std::byte>(values[i] ? 1 : 0);
      } else {
        std::memcpy(array.scalars_.data() + i * sizeof(T), &values[i], sizeof(T));
      }
    }
    return array;
  }
  template <GgufScalar T>
  [[nodiscard]] static GgufArray of(const std::vector<T>& values) {
    if constexpr (std::is_same_v<T, bool>) {
      GgufArray array(GgufValueType::kBool);
      for (bool b : values)
        array.scalars_.push_back(static_cast<std::byte>(b ? 1 : 0));
      array.size_ = values.size();
      return array;
    } else {
      return of(std::span<const T>(values));
    }
  }
  [[nodiscard]] static GgufArray of_strings(std::vector<std::string> values) {
    GgufArray array(GgufValueType::kString);
    array.size_ = values.size();
    array.strings_ = std::move(values);
    return array;
  }
  [[nodiscard]] static GgufArray of_arrays(std::vector<GgufArray> values) {
    GgufArray array(GgufValueType::kArray);
    array.size_ = values.size();
    array.arrays_ = std::move(values);
    return array;
  }
  // A scalar array from encoded little-endian bytes (size must be count * element width).
  [[nodiscard]] static GgufArray from_encoded(GgufValueType element_type, std::uint64_t count,
                                              std::vector<std::byte> encoded) {
    GgufArray array(element_type);
    array.size_ = count;
    array.scalars_ = std::move(encoded);
    return array;
  }

  [[nodiscard]] GgufValueType element_type() const noexcept { return element_type_; }
  [[nodiscard]] std::uint64_t size() const noexcept { return size_; }
  [[nodiscard]] bool empty() const noexcept { return size_ == 0; }

  // Scalar element i, or nullopt when T is not the element type or i is out of range.
  template <GgufScalar T>
  [[nodiscard]] std::optional<T> at(std::uint64_t i) const noexcept {
    if (element_type_ != *gguf_type_of<T> || i >= size_) return std::nullopt;
    if constexpr (std::is_same_v<T, bool>) {
      return scalars_[static_cast<std::size_t>(i)] != std::byte{0};
    } else {
      T value;
      std::memcpy(&value, scalars_.data() + static_cast<std::size_t>(i) * sizeof(T), sizeof(T));
      return value;
    }
  }
  // All scalar elements as T; an error naming both types when T is not the element type.
  template <GgufScalar T>
  [[nodiscard]] Result<std::vector<T>> values() const {
    if (element_type_ != *gguf_type_of<T>) {
      return fail(ErrorCode::kInvalidModel, "array holds " + std::string(to_string(element_type_)) +
                                                " elements, expected " +
                                                std::string(to_string(*gguf_type_of<T>)));
    }
    std::vector<T> out;
    out.reserve(static_cast<std::size_t>(size_));
    for (std::uint64_t i = 0; i < size_; ++i)
      out.push_back(*at<T>(i));
    return out;
  }
  // The encoded bytes of a scalar array (empty for string/array elements).
  [[nodiscard]] std::span<const std::byte> encoded_scalars() const noexcept { return scalars_; }
  // The elements of a string array (empty otherwise). Strings are raw bytes, not validated UTF-8.
  [[nodiscard]] std::span<const std::string> strings() const noexcept { return strings_; }
  // The elements of an array of arrays (empty otherwise).
  [[nodiscard]] std::span<const GgufArray> arrays() const noexcept { return arrays_; }

  friend bool operator==(const GgufArray&, const GgufArray&) = default;

 private:
  GgufValueType element_type_ = GgufValueType::kU8;
  std::uint64_t size_ = 0;
  std::vector<std::byte> scalars_;
  std::vector<std::string> strings_;
  std::vector<GgufArray> arrays_;
};

// One metadata value. The variant index equals the GGUF value type id.
class GgufValue {
 public:
  using Storage = std::variant<std::uint8_t, std::int8_t, std::uint16_t, std::int16_t,
                               std::uint32_t, std::int32_t, float, bool, std::string, GgufArray,
                               std::uint64_t, std::int64_t, double>;

  GgufValue() = default;
  template <GgufScalar T>
  explicit GgufValue(T value) : storage_(value) {}
  explicit GgufValue(std::string value) : storage_(std::move(value)) {}
  explicit GgufValue(std::string_view value) : storage_(std::string(value)) {}
  explicit GgufValue(const char* value) : storage_(std::string(value)) {}
  explicit GgufValue(GgufArray value) : storage_(std::move(value)) {}

  [[nodiscard]] GgufValueType type() const noexcept {
    return static_cast<GgufValueType>(storage_.index());
  }
  [[nodiscard]] const Storage& storage() const noexcept { return storage_; }
  // A pointer to the held value when it is exactly of type T (std::string, GgufArray or a
  // scalar), nullptr otherwise.
  template <typename T>
  [[nodiscard]] const T* get_if() const noexcept {
    return std::get_if<T>(&storage_);
  }

  friend bool operator==(const GgufValue&, const GgufValue&) = default;

 private:
  Storage storage_;
};

static_assert(std::variant_size_v<GgufValue::Storage> == kGgufValueTypeCount);

}  // namespace eredu::checkpoint
