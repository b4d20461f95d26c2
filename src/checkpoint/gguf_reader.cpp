// The GGUF container parser. Reads through a bounds-checked cursor; every count is checked against
// the bytes left times the smallest encoding of one item before anything is reserved; every size
// and offset is computed with checked arithmetic. See gguf.hpp for the decisions taken.

#include <algorithm>
#include <cstring>
#include <new>

#include "eredu/checkpoint/gguf.hpp"
#include "eredu/core/log.hpp"
#include "gguf_text.hpp"

namespace eredu::checkpoint {

// Parses one file into GgufContents. A class (a friend of GgufContents) so that the running state
// (cursor, budget) lives in one place.
class GgufParser {
 public:
  GgufParser(const MappedFile& file, const GgufLimits& limits)
      : bytes_(file.bytes()), path_(file.path()), limits_(limits) {}

  Result<std::shared_ptr<const GgufContents>> run();

 private:
  // ---- errors ------------------------------------------------------------------------------
  [[nodiscard]] Error error(ErrorCode code, std::string message, std::uint64_t offset,
                            std::string_view subject = {}) const {
    Error e(code, std::move(message));
    e.set_path(path_);
    // with_subject/with_offset modify in place and return an rvalue reference to the same object.
    if (!subject.empty()) (void)std::move(e).with_subject(std::string(subject));
    (void)std::move(e).with_offset(offset);
    return e;
  }

  [[nodiscard]] std::uint64_t remaining() const noexcept { return bytes_.size() - pos_; }

  // Fails unless `n` bytes are left at the cursor; `what` names the field.
  [[nodiscard]] Result<void> need(std::uint64_t n, std::string_view what,
                                  std::string_view subject) const {
    if (n > remaining()) {
      return fail(error(ErrorCode::kInvalidModel,
                        "truncated: " + std::string(what) + " needs " + std::to_string(n) +
                            " bytes, " + std::to_string(remaining()) +
                            " left before end of file (" + std::to_string(bytes_.size()) +
                            " bytes)",
                        pos_, subject));
    }
    return ok();
  }

  template <typename T>
  Result<T> read(std::string_view what, std::string_view subject = {}) {
    EREDU_TRY_VOID(need(sizeof(T), what, subject));
    T value;
    std::memcpy(&value, bytes_.data() + pos_, sizeof(T));
    pos_ += sizeof(T);
    return value;
  }

  // Charges `n` bytes of decoded metadata against the budget.
  Result<void> charge(std::uint64_t n, std::uint64_t offset, std::string_view subject) {
    if (n > limits_.max_metadata_bytes || used_ > limits_.max_metadata_bytes - n) {
      return fail(error(ErrorCode::kLimitExceeded,
                        "metadata too large (> " + std::to_string(limits_.max_metadata_bytes) +
                            " bytes decoded; GgufLimits::max_metadata_bytes)",
                        offset, subject));
    }
    used_ += n;
    return ok();
  }

  Result<void> parse_header();
  // Reads a u64 length and that many bytes; `cap` bounds the length (keys and names have their
  // own caps, checked by the caller first; values use GgufLimits::max_string_bytes).
  Result<std::string> read_string(std::string_view what, std::string_view subject,
                                  std::uint64_t cap);
  Result<void> parse_metadata_entry(std::uint64_t index);
  Result<GgufValue> read_value(GgufValueType type, std::string_view key, std::uint32_t depth);
  Result<GgufArray> read_array(std::string_view key, std::uint32_t depth);
  Result<void> check_key(const std::string& key, std::uint64_t offset) const;
  Result<void> apply_alignment(const GgufMetadataEntry& entry);
  Result<void> parse_tensor_info(std::uint64_t index);
  Result<void> check_tensor_ranges();

  std::span<const std::byte> bytes_;
  std::string path_;
  const GgufLimits& limits_;
  std::uint64_t pos_ = 0;
  std::uint64_t used_ = 0;
  std::shared_ptr<GgufContents> out_ = std::make_shared<GgufContents>();
};

Result<void> GgufParser::parse_header() {
  GgufHeaderInfo& header = out_->header_;
  header.file_size = bytes_.size();
  const auto truncated = [&](std::string_view field) {
    return fail(error(ErrorCode::kInvalidModel,
                      "truncated header (need " + std::to_string(kGgufHeaderBytes) +
                          " bytes, have " + std::to_string(bytes_.size()) + "): cut inside the " +
                          std::string(field),
                      pos_));
  };
  if (remaining() < 4) return truncated("magic");
  std::array<unsigned char, 4> magic{};
  std::memcpy(magic.data(), bytes_.data(), 4);
  if (std::memcmp(magic.data(), "FUGG", 4) == 0) {
    return fail(
        error(ErrorCode::kUnsupported, "big-endian GGUF is not supported (magic 'FUGG')", 0));
  }
  if (std::memcmp(magic.data(), "GGUF", 4) != 0) {
    return fail(error(ErrorCode::kInvalidModel,
                      "bad magic " + detail::describe_magic(magic) +
                          ": not a GGUF file (expected 'GGUF'; pre-GGUF ggml/ggmf/ggjt files are "
                          "not supported)",
                      0));
  }
  pos_ = 4;
  if (remaining() < 4) return truncated("version");
  EREDU_TRY(const std::uint32_t version, read<std::uint32_t>("version"));
  header.version = version;
  if (version == 0) {
    return fail(error(ErrorCode::kInvalidModel, "GGUF version 0 is invalid", 4));
  }
  if ((version & 0xFFFFu) == 0) {
    // A byte-swapped small version number: the file was written on a big-endian host.
    return fail(error(ErrorCode::kUnsupported,
                      "big-endian GGUF is not supported (version field reads " +
                          std::to_string(version) + ", a byte-swapped " +
                          std::to_string(__builtin_bswap32(version)) + ")",
                      4));
  }
  if (version == 1) {
    return fail(error(ErrorCode::kUnsupported,
                      "GGUF v1 is not supported (32-bit lengths); supported versions are 2 and 3",
                      4));
  }
  if (version > 3) {
    return fail(error(ErrorCode::kUnsupported,
                      "GGUF v" + std::to_string(version) +
                          " is newer than supported (supported versions are 2 and 3)",
                      4));
  }
  if (remaining() < 8) return truncated("tensor count");
  EREDU_TRY(header.tensor_count, read<std::uint64_t>("tensor count"));
  if (remaining() < 8) return truncated("metadata count");
  EREDU_TRY(header.metadata_count, read<std::uint64_t>("metadata count"));

  // Bound both counts by the file before anything is reserved.
  if (header.tensor_count > limits_.max_tensors) {
    return fail(error(ErrorCode::kLimitExceeded,
                      "tensor count " + std::to_string(header.tensor_count) +
                          " exceeds the limit of " + std::to_string(limits_.max_tensors),
                      8));
  }
  if (header.metadata_count > limits_.max_metadata_entries) {
    return fail(error(ErrorCode::kLimitExceeded,
                      "metadata count " + std::to_string(header.metadata_count) +
                          " exceeds the limit of " + std::to_string(limits_.max_metadata_entries),
                      16));
  }
  // Both fit in 2^20-ish by the limits above, but the products are checked anyway (limits are
  // caller-configurable).
  const auto min_bytes = [](std::uint64_t count,
                            std::uint64_t each) -> std::optional<std::uint64_t> {
    if (count != 0 && each > UINT64_MAX / count) return std::nullopt;
    return count * each;
  };
  const auto tensor_min = min_bytes(header.tensor_count, kGgufMinTensorInfoBytes);
  if (!tensor_min || *tensor_min > remaining()) {
    return fail(error(ErrorCode::kInvalidModel,
                      "tensor count " + std::to_string(header.tensor_count) +
                          " cannot fit: each tensor info needs at least " +
                          std::to_string(kGgufMinTensorInfoBytes) + " bytes and only " +
                          std::to_string(remaining()) + " bytes follow the header",
                      8));
  }
  const auto kv_min = min_bytes(header.metadata_count, kGgufMinKvBytes);
  if (!kv_min || *kv_min > remaining() - *tensor_min) {
    return fail(error(ErrorCode::kInvalidModel,
                      "metadata count " + std::to_string(header.metadata_count) +
                          " cannot fit: each entry needs at least " +
                          std::to_string(kGgufMinKvBytes) + " bytes and only " +
                          std::to_string(remaining() - *tensor_min) +
                          " bytes are left after the minimal tensor infos",
                      16));
  }
  return ok();
}

Result<std::string> GgufParser::read_string(std::string_view what, std::string_view subject,
                                            std::uint64_t cap) {
  const std::uint64_t at = pos_;
  EREDU_TRY(const std::uint64_t length, read<std::uint64_t>(what, subject));
  if (length > cap) {
    return fail(error(ErrorCode::kLimitExceeded,
                      std::string(what) + " length " + std::to_string(length) +
                          " exceeds the limit of " + std::to_string(cap) +
                          " bytes (GgufLimits::max_string_bytes)",
                      at, subject));
  }
  if (length > remaining()) {
    return fail(error(ErrorCode::kInvalidModel,
                      std::string(what) + " length " + std::to_string(length) + " exceeds the " +
                          std::to_string(remaining()) + " bytes left in the file",
                      at, subject));
  }
  EREDU_TRY_VOID(charge(length, at, subject));
  std::string out(reinterpret_cast<const char*>(bytes_.data() + pos_),
                  static_cast<std::size_t>(length));
  pos_ += length;
  return out;
}

Result<void> GgufParser::check_key(const std::string& key, std::uint64_t offset) const {
  for (std::size_t i = 0; i < key.size(); ++i) {
    const auto c = static_cast<unsigned char>(key[i]);
    if (c < 0x20 || c > 0x7E) {
      return fail(error(ErrorCode::kInvalidModel,
                        "metadata key contains byte 0x" + detail::hex_byte(c) + " at position " +
                            std::to_string(i) + "; keys must be printable ASCII",
                        offset, detail::printable(key)));
    }
  }
  if (limits_.strict_keys && !detail::is_lower_snake_dotted(key)) {
    return fail(error(ErrorCode::kInvalidModel,
                      "metadata key is not dotted lower_snake_case with non-empty segments", offset,
                      key));
  }
  return ok();
}

Result<GgufArray> GgufParser::read_array(std::string_view key, std::uint32_t depth) {
  const std::uint64_t at = pos_;
  // Parsing recurses once per level, so the depth is also capped here whatever the limits say.
  const std::uint32_t max_depth = std::min<std::uint32_t>(limits_.max_nesting_depth, 64);
  if (depth > max_depth) {
    return fail(error(ErrorCode::kLimitExceeded,
                      "arrays nested deeper than " + std::to_string(max_depth) +
                          " levels (GgufLimits::max_nesting_depth)",
                      at, key));
  }
  EREDU_TRY(const std::uint32_t raw_type, read<std::uint32_t>("array element type", key));
  if (raw_type >= kGgufValueTypeCount) {
    return fail(error(
        ErrorCode::kInvalidModel,
        "array element type id " + std::to_string(raw_type) + " is not a GGUF value type (0..12)",
        at, key));
  }
  const auto type = static_cast<GgufValueType>(raw_type);
  const std::uint64_t count_at = pos_;
  EREDU_TRY(const std::uint64_t count, read<std::uint64_t>("array length", key));
  if (count > limits_.max_array_elements) {
    return fail(error(ErrorCode::kLimitExceeded,
                      "array of " + std::to_string(count) + " elements exceeds the limit of " +
                          std::to_string(limits_.max_array_elements) +
                          " (GgufLimits::max_array_elements)",
                      count_at, key));
  }
  // The smallest encoding of one element: its width, a string's length field, or a nested
  // array's type and length fields.
  const std::uint64_t width = gguf_scalar_size(type);
  const std::uint64_t min_each = type == GgufValueType::kString  ? 8
                                 : type == GgufValueType::kArray ? 12
                                                                 : width;
  if (count > remaining() / min_each) {
    return fail(error(ErrorCode::kInvalidModel,
                      "array of " + std::to_string(count) + " " + std::string(to_string(type)) +
                          " elements needs at least " + std::to_string(min_each) +
                          " bytes each, but only " + std::to_string(remaining()) +
                          " bytes are left in the file",
                      count_at, key));
  }
  if (width != 0) {
    const std::uint64_t n = count * width;  // <= remaining(), no overflow
    EREDU_TRY_VOID(charge(n, count_at, key));
    std::vector<std::byte> encoded(bytes_.begin() + static_cast<std::ptrdiff_t>(pos_),
                                   bytes_.begin() + static_cast<std::ptrdiff_t>(pos_ + n));
    if (type == GgufValueType::kBool) {
      for (std::uint64_t i = 0; i < count; ++i) {
        const auto b = static_cast<unsigned char>(encoded[static_cast<std::size_t>(i)]);
        if (b > 1) {
          return fail(error(ErrorCode::kInvalidModel,
                            "bool array element " + std::to_string(i) + " is " + std::to_string(b) +
                                " (must be 0 or 1)",
                            pos_ + i, key));
        }
      }
    }
    pos_ += n;
    return GgufArray::from_encoded(type, count, std::move(encoded));
  }
  if (type == GgufValueType::kString) {
    EREDU_TRY_VOID(charge(count * sizeof(std::string), count_at, key));
    std::vector<std::string> strings;
    strings.reserve(static_cast<std::size_t>(count));
    for (std::uint64_t i = 0; i < count; ++i) {
      EREDU_TRY(std::string s, read_string("string array element", key, limits_.max_string_bytes));
      strings.push_back(std::move(s));
    }
    return GgufArray::of_strings(std::move(strings));
  }
  EREDU_TRY_VOID(charge(count * sizeof(GgufArray), count_at, key));
  std::vector<GgufArray> arrays;
  arrays.reserve(static_cast<std::size_t>(count));
  for (std::uint64_t i = 0; i < count; ++i) {
    EREDU_TRY(GgufArray inner, read_array(key, depth + 1));
    arrays.push_back(std::move(inner));
  }
  return GgufArray::of_arrays(std::move(arrays));
}

Result<GgufValue> GgufParser::read_value(GgufValueType type, std::string_view key,
                                         std::uint32_t depth) {
  switch (type) {
    case GgufValueType::kU8: {
      EREDU_TRY(auto v, read<std::uint8_t>("u8 value", key));
      return GgufValue(v);
    }
    case GgufValueType::kI8: {
      EREDU_TRY(auto v, read<std::int8_t>("i8 value", key));
      return GgufValue(v);
    }
    case GgufValueType::kU16: {
      EREDU_TRY(auto v, read<std::uint16_t>("u16 value", key));
      return GgufValue(v);
    }
    case GgufValueType::kI16: {
      EREDU_TRY(auto v, read<std::int16_t>("i16 value", key));
      return GgufValue(v);
    }
    case GgufValueType::kU32: {
      EREDU_TRY(auto v, read<std::uint32_t>("u32 value", key));
      return GgufValue(v);
    }
    case GgufValueType::kI32: {
      EREDU_TRY(auto v, read<std::int32_t>("i32 value", key));
      return GgufValue(v);
    }
    case GgufValueType::kF32: {
      EREDU_TRY(auto v, read<float>("f32 value", key));
      return GgufValue(v);
    }
    case GgufValueType::kBool: {
      const std::uint64_t at = pos_;
      EREDU_TRY(auto v, read<std::uint8_t>("bool value", key));
      if (v > 1) {
        return fail(error(ErrorCode::kInvalidModel,
                          "bool value is " + std::to_string(v) + " (must be 0 or 1)", at, key));
      }
      return GgufValue(v == 1);
    }
    case GgufValueType::kString: {
      EREDU_TRY(std::string s, read_string("string value", key, limits_.max_string_bytes));
      return GgufValue(std::move(s));
    }
    case GgufValueType::kArray: {
      EREDU_TRY(GgufArray a, read_array(key, depth + 1));
      return GgufValue(std::move(a));
    }
    case GgufValueType::kU64: {
      EREDU_TRY(auto v, read<std::uint64_t>("u64 value", key));
      return GgufValue(v);
    }
    case GgufValueType::kI64: {
      EREDU_TRY(auto v, read<std::int64_t>("i64 value", key));
      return GgufValue(v);
    }
    case GgufValueType::kF64: {
      EREDU_TRY(auto v, read<double>("f64 value", key));
      return GgufValue(v);
    }
  }
  return fail(error(ErrorCode::kInternal, "unhandled value type", pos_, key));
}

Result<void> GgufParser::apply_alignment(const GgufMetadataEntry& entry) {
  std::uint64_t alignment = 0;
  if (const auto* u32 = entry.value.get_if<std::uint32_t>()) {
    alignment = *u32;
  } else if (const auto* u64 = entry.value.get_if<std::uint64_t>()) {
    alignment = *u64;
  } else {
    return fail(error(ErrorCode::kInvalidModel,
                      "general.alignment has type " + std::string(to_string(entry.value.type())) +
                          ", expected u32 (or u64)",
                      entry.value_offset, entry.key));
  }
  if (alignment == 0 || (alignment & (alignment - 1)) != 0) {
    return fail(
        error(ErrorCode::kInvalidModel,
              "general.alignment " + std::to_string(alignment) + " is not a non-zero power of two",
              entry.value_offset, entry.key));
  }
  if (alignment > limits_.max_alignment) {
    return fail(error(ErrorCode::kLimitExceeded,
                      "general.alignment " + std::to_string(alignment) + " exceeds the limit of " +
                          std::to_string(limits_.max_alignment) + " (GgufLimits::max_alignment)",
                      entry.value_offset, entry.key));
  }
  if (alignment % 8 != 0) {
    log::warn(
        "{}: general.alignment {} is not a multiple of 8 (the GGUF spec asks for one); "
        "accepted",
        path_, alignment);
  }
  out_->header_.alignment = alignment;
  return ok();
}

Result<void> GgufParser::parse_metadata_entry(std::uint64_t index) {
  GgufMetadataEntry entry;
  entry.offset = pos_;
  EREDU_TRY(const std::uint64_t key_length,
            read<std::uint64_t>("metadata key length", "metadata entry " + std::to_string(index)));
  if (key_length == 0 || key_length > kGgufMaxKeyBytes) {
    return fail(error(ErrorCode::kInvalidModel,
                      "metadata key length " + std::to_string(key_length) + " is outside 1.." +
                          std::to_string(kGgufMaxKeyBytes),
                      entry.offset, "metadata entry " + std::to_string(index)));
  }
  pos_ = entry.offset;  // re-read through read_string so that the same bounds apply
  EREDU_TRY(entry.key, read_string("metadata key", "metadata entry " + std::to_string(index),
                                   kGgufMaxKeyBytes));
  EREDU_TRY_VOID(check_key(entry.key, entry.offset + 8));
  if (out_->metadata_index_.count(entry.key) != 0) {
    return fail(
        error(ErrorCode::kInvalidModel, "duplicate metadata key", entry.offset + 8, entry.key));
  }
  const std::uint64_t type_at = pos_;
  EREDU_TRY(const std::uint32_t raw_type, read<std::uint32_t>("value type", entry.key));
  if (raw_type >= kGgufValueTypeCount) {
    return fail(
        error(ErrorCode::kInvalidModel,
              "value type id " + std::to_string(raw_type) + " is not a GGUF value type (0..12)",
              type_at, entry.key));
  }
  entry.value_offset = pos_;
  EREDU_TRY_VOID(charge(2 * entry.key.size(), entry.offset, entry.key));
  EREDU_TRY(entry.value, read_value(static_cast<GgufValueType>(raw_type), entry.key, 0));
  if (entry.key == "general.alignment") EREDU_TRY_VOID(apply_alignment(entry));
  // metadata_ was reserved for every declared entry, so stored keys never move and the index
  // may hold views of them.
  out_->metadata_.push_back(std::move(entry));
  out_->metadata_index_.emplace(out_->metadata_.back().key, out_->metadata_.size() - 1);
  return ok();
}

Result<void> GgufParser::parse_tensor_info(std::uint64_t index) {
  GgufTensorInfo info;
  info.info_offset = pos_;
  const std::string placeholder = "tensor " + std::to_string(index);
  EREDU_TRY(const std::uint64_t name_length,
            read<std::uint64_t>("tensor name length", placeholder));
  if (name_length == 0 || name_length > kGgufMaxTensorNameBytes) {
    return fail(error(ErrorCode::kInvalidModel,
                      "tensor name length " + std::to_string(name_length) + " is outside 1.." +
                          std::to_string(kGgufMaxTensorNameBytes),
                      info.info_offset, placeholder));
  }
  pos_ = info.info_offset;
  EREDU_TRY(info.name, read_string("tensor name", placeholder, kGgufMaxTensorNameBytes));
  for (std::size_t i = 0; i < info.name.size(); ++i) {
    const auto c = static_cast<unsigned char>(info.name[i]);
    if (c < 0x20 || c == 0x7F) {
      return fail(error(ErrorCode::kInvalidModel,
                        "tensor name contains control byte 0x" + detail::hex_byte(c) +
                            " at position " + std::to_string(i),
                        info.info_offset + 8, detail::printable(info.name)));
    }
  }
  if (out_->tensor_index_.count(info.name) != 0) {
    return fail(
        error(ErrorCode::kInvalidModel, "duplicate tensor name", info.info_offset + 8, info.name));
  }
  const std::uint64_t rank_at = pos_;
  EREDU_TRY(const std::uint32_t rank, read<std::uint32_t>("tensor rank", info.name));
  const std::uint32_t max_rank = std::min<std::uint32_t>(limits_.max_rank, 8);
  if (rank == 0 || rank > max_rank) {
    return fail(
        error(ErrorCode::kInvalidModel,
              "tensor rank " + std::to_string(rank) + " is outside 1.." + std::to_string(max_rank),
              rank_at, info.name));
  }
  info.ne.reserve(rank);
  bool has_zero = false;
  for (std::uint32_t d = 0; d < rank; ++d) {
    const std::uint64_t dim_at = pos_;
    EREDU_TRY(const std::uint64_t dim, read<std::uint64_t>("tensor dimension", info.name));
    if (dim > static_cast<std::uint64_t>(INT64_MAX)) {
      return fail(error(ErrorCode::kInvalidModel,
                        "dimension ne[" + std::to_string(d) + "] is negative (" +
                            std::to_string(static_cast<std::int64_t>(dim)) + ")",
                        dim_at, info.name));
    }
    has_zero = has_zero || dim == 0;
    info.ne.push_back(dim);
  }
  const std::uint64_t type_at = pos_;
  EREDU_TRY(info.ggml_type, read<std::uint32_t>("tensor type", info.name));
  const auto dtype = dtype_from_ggml_type(info.ggml_type);
  if (!dtype) {
    const std::uint32_t id = info.ggml_type;
    const bool removed = id == 4 || id == 5 || (id >= 31 && id <= 33) || (id >= 36 && id <= 38);
    return fail(error(ErrorCode::kUnsupported,
                      "ggml type id " + std::to_string(static_cast<std::int32_t>(id)) +
                          (removed ? " was removed from ggml and is not supported"
                                   : " is unknown (this build knows ids up to 39)"),
                      type_at, info.name));
  }
  info.dtype = *dtype;
  const DTypeInfo& dinfo = dtype_info(info.dtype);
  if (info.ne[0] % dinfo.block_elements != 0) {
    return fail(error(ErrorCode::kInvalidModel,
                      "ne[0] = " + std::to_string(info.ne[0]) + " is not a multiple of the " +
                          std::string(dinfo.name) + " block size " +
                          std::to_string(dinfo.block_elements),
                      info.info_offset + 8 + name_length + 4, info.name));
  }
  // Element count: zero when any dimension is zero (no product is formed then), otherwise a
  // checked product that must stay within int64 (ggml's element type).
  std::uint64_t elements = has_zero ? 0 : 1;
  if (!has_zero) {
    for (std::uint64_t dim : info.ne) {
      if (elements > static_cast<std::uint64_t>(INT64_MAX) / dim) {
        return fail(error(ErrorCode::kOverflow, "element count of the dimensions overflows int64",
                          info.info_offset + 8 + name_length + 4, info.name));
      }
      elements *= dim;
    }
  }
  info.element_count = elements;
  const std::uint64_t blocks = elements / dinfo.block_elements;  // exact: ne[0] divisible
  if (blocks != 0 && dinfo.block_bytes > UINT64_MAX / blocks) {
    return fail(error(ErrorCode::kOverflow, "byte size of the tensor overflows 64 bits",
                      info.info_offset + 8 + name_length + 4, info.name));
  }
  info.byte_size = blocks * dinfo.block_bytes;
  const std::uint64_t offset_at = pos_;
  EREDU_TRY(info.relative_offset, read<std::uint64_t>("tensor offset", info.name));
  info.data_offset = offset_at;  // field offset, kept until the data section is known
  info.shape.assign(info.ne.rbegin(), info.ne.rend());
  // tensors_ was reserved for every declared tensor: names never move (see metadata_index_).
  out_->tensors_.push_back(std::move(info));
  out_->tensor_index_.emplace(out_->tensors_.back().name, out_->tensors_.size() - 1);
  return ok();
}

Result<void> GgufParser::check_tensor_ranges() {
  GgufHeaderInfo& header = out_->header_;
  const std::uint64_t size = bytes_.size();
  for (GgufTensorInfo& info : out_->tensors_) {
    const std::uint64_t offset_field = info.data_offset;
    if (info.relative_offset % header.alignment != 0) {
      return fail(error(ErrorCode::kInvalidModel,
                        "tensor offset " + std::to_string(info.relative_offset) +
                            " is not a multiple of the alignment " +
                            std::to_string(header.alignment),
                        offset_field, info.name));
    }
    if (info.relative_offset > UINT64_MAX - header.data_section_offset) {
      return fail(error(ErrorCode::kOverflow,
                        "data section start " + std::to_string(header.data_section_offset) +
                            " + tensor offset " + std::to_string(info.relative_offset) +
                            " overflows 64 bits",
                        offset_field, info.name));
    }
    const std::uint64_t start = header.data_section_offset + info.relative_offset;
    if (info.byte_size > UINT64_MAX - start) {
      return fail(error(ErrorCode::kOverflow,
                        "tensor data start " + std::to_string(start) + " + size " +
                            std::to_string(info.byte_size) + " overflows 64 bits",
                        offset_field, info.name));
    }
    const std::uint64_t end = start + info.byte_size;
    if (end > size || start > size) {
      return fail(error(ErrorCode::kInvalidModel,
                        "tensor data ends at " + std::to_string(end) + " > file size " +
                            std::to_string(size) + " — file truncated or corrupted",
                        offset_field, info.name));
    }
    info.data_offset = start;
  }
  // Overlap: sort by start (O(n log n)) and compare neighbours; empty tensors overlap nothing.
  std::vector<std::size_t> order;
  order.reserve(out_->tensors_.size());
  for (std::size_t i = 0; i < out_->tensors_.size(); ++i) {
    if (out_->tensors_[i].byte_size != 0) order.push_back(i);
  }
  const auto& tensors = out_->tensors_;
  std::sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
    return tensors[a].data_offset != tensors[b].data_offset
               ? tensors[a].data_offset < tensors[b].data_offset
               : a < b;
  });
  std::uint64_t last_end = 0;
  for (std::size_t k = 0; k < order.size(); ++k) {
    const GgufTensorInfo& info = tensors[order[k]];
    if (k > 0 && info.data_offset < last_end) {
      const GgufTensorInfo& prev = tensors[order[k - 1]];
      return fail(error(ErrorCode::kInvalidModel,
                        "tensor data [" + std::to_string(info.data_offset) + ", " +
                            std::to_string(info.data_offset + info.byte_size) +
                            ") overlaps tensor '" + detail::printable(prev.name) + "' [" +
                            std::to_string(prev.data_offset) + ", " + std::to_string(last_end) +
                            ")",
                        info.info_offset, info.name));
    }
    last_end = info.data_offset + info.byte_size;
  }
  // The writer pads the last tensor to the alignment too; only bytes beyond that are trailing.
  if (!order.empty() && last_end < size && size - last_end >= header.alignment) {
    log::warn("{}: {} trailing bytes after the last tensor's data are ignored", path_,
              size - last_end);
  }
  return ok();
}

Result<std::shared_ptr<const GgufContents>> GgufParser::run() {
  out_->path_ = path_;
  EREDU_TRY_VOID(parse_header());
  GgufHeaderInfo& header = out_->header_;
  EREDU_TRY_VOID(charge(header.metadata_count * sizeof(GgufMetadataEntry), 16, {}));
  out_->metadata_.reserve(static_cast<std::size_t>(header.metadata_count));
  for (std::uint64_t i = 0; i < header.metadata_count; ++i) {
    EREDU_TRY_VOID(parse_metadata_entry(i));
  }
  // Enough bytes must remain for the declared tensor infos (re-checked now that the metadata
  // size is known).
  if (header.tensor_count > remaining() / kGgufMinTensorInfoBytes) {
    return fail(error(ErrorCode::kInvalidModel,
                      "tensor count " + std::to_string(header.tensor_count) +
                          " cannot fit in the " + std::to_string(remaining()) +
                          " bytes left after the metadata",
                      8));
  }
  EREDU_TRY_VOID(charge(header.tensor_count * sizeof(GgufTensorInfo), 8, {}));
  out_->tensors_.reserve(static_cast<std::size_t>(header.tensor_count));
  for (std::uint64_t i = 0; i < header.tensor_count; ++i) {
    EREDU_TRY_VOID(parse_tensor_info(i));
  }
  // The data section starts at the next multiple of the alignment (checked: alignment <= cap).
  const std::uint64_t misalign = pos_ % header.alignment;
  header.data_section_offset = misalign == 0 ? pos_ : pos_ + (header.alignment - misalign);
  if (header.tensor_count > 0 && header.data_section_offset > bytes_.size()) {
    return fail(error(ErrorCode::kInvalidModel,
                      "data section would start at " + std::to_string(header.data_section_offset) +
                          ", past the end of the file (" + std::to_string(bytes_.size()) +
                          " bytes)",
                      pos_));
  }
  EREDU_TRY_VOID(check_tensor_ranges());
  return std::shared_ptr<const GgufContents>(std::move(out_));
}

Result<std::shared_ptr<const GgufContents>> parse_gguf_contents(const MappedFile& file,
                                                                const GgufLimits& limits) {
  try {
    GgufParser parser(file, limits);
    return parser.run();
  } catch (const std::bad_alloc&) {
    return fail(Error(ErrorCode::kLimitExceeded, "out of memory while parsing GGUF metadata")
                    .with_path(file.path()));
  } catch (const std::length_error&) {
    return fail(Error(ErrorCode::kLimitExceeded, "a GGUF container declares too large a size")
                    .with_path(file.path()));
  }
}

}  // namespace eredu::checkpoint
