// Parsing and validation of a SafeTensors header (see include/eredu/checkpoint/safetensors.hpp).
//
// The JSON is read with nlohmann's SAX interface into a small state machine, which rejects
// anything but the expected structure as soon as it appears, detects duplicate keys (the DOM
// would keep the last one silently), and knows the position of every event through an input
// iterator that records the last byte the lexer read. nlohmann only sees text whose nesting the
// linear pre-scan has already bounded.

#include <algorithm>
#include <array>
#include <new>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <unordered_set>
#include <utility>
#include <vector>

#include "eredu/checkpoint/safetensors.hpp"
#include "eredu/core/log.hpp"
#include "safetensors_detail.hpp"

namespace eredu::checkpoint {

struct SafetensorsHeaderAccess {
  static SafetensorsHeader make(std::string path, std::uint64_t header_length,
                                std::uint64_t file_size, std::uint64_t hash,
                                std::vector<SafetensorsTensor> tensors,
                                std::map<std::string, std::string> metadata) {
    SafetensorsHeader header;
    header.path_ = std::move(path);
    header.header_length_ = header_length;
    header.file_size_ = file_size;
    header.header_hash_ = hash;
    header.tensors_ = std::move(tensors);
    header.metadata_ = std::move(metadata);
    header.rebuild_index();
    return header;
  }
};

namespace {

constexpr std::string_view kMetadataKey = "__metadata__";

// Valid SafeTensors dtypes that eredu cannot hold (no DType), with their bit widths, so that the
// reference's MisalignedSlice check (S20) still applies before they are refused as unsupported.
struct UnsupportedDtype {
  std::string_view name;
  std::uint64_t bits;
};
constexpr std::array<UnsupportedDtype, 5> kKnownUnsupportedDtypes{{
    {"F4", 4},
    {"F6_E2M3", 6},
    {"F6_E3M2", 6},
    {"F8_E8M0", 8},
    {"C64", 64},
}};

// An input iterator over the header text that records the address of the last byte read, so
// that SAX events can be given a byte position.
class TrackingIterator {
 public:
  using iterator_category = std::input_iterator_tag;
  using value_type = char;
  using difference_type = std::ptrdiff_t;
  using pointer = const char*;
  using reference = const char&;

  TrackingIterator(const char* position, const char** last_read)
      : position_(position), last_read_(last_read) {}
  reference operator*() const {
    *last_read_ = position_;
    return *position_;
  }
  TrackingIterator& operator++() {
    ++position_;
    return *this;
  }
  TrackingIterator operator++(int) {
    TrackingIterator before = *this;
    ++position_;
    return before;
  }
  friend bool operator==(const TrackingIterator& a, const TrackingIterator& b) {
    return a.position_ == b.position_;
  }

 private:
  const char* position_;
  const char** last_read_;
};

// One entry as read from JSON, before validation against dtype and file.
struct RawEntry {
  std::string name;
  std::uint64_t key_offset = 0;  // absolute offset of the entry's key, for errors
  std::optional<std::string> dtype;
  std::optional<std::vector<std::uint64_t>> shape;
  std::optional<std::vector<std::uint64_t>> data_offsets;
};

// A validated entry: offsets still relative to the data buffer.
struct Entry {
  SafetensorsTensor tensor;  // offset = begin (relative) until the end
  std::uint64_t end = 0;
  std::uint64_t key_offset = 0;
};

class HeaderSax {
 public:
  using json = nlohmann::json;

  HeaderSax(std::string_view path, const char* text, const SafetensorsLimits& limits)
      : path_(path), text_(text), last_read_(text), limits_(limits) {}

  const char** last_read() { return &last_read_; }
  std::optional<Error>& error() { return error_; }
  std::vector<Entry>& entries() { return entries_; }
  std::map<std::string, std::string>& metadata() { return metadata_; }

  // --- nlohmann SAX interface ---
  bool null() { return scalar("null"); }
  bool boolean(bool) { return scalar("a boolean"); }
  bool number_integer(json::number_integer_t) { return scalar("a negative integer"); }
  bool number_float(json::number_float_t, const json::string_t&) {
    return scalar("a fractional number or an integer above 2^64-1");
  }
  bool binary(json::binary_t&) { return scalar("binary data"); }

  bool number_unsigned(json::number_unsigned_t value) {
    switch (state_) {
      case State::kShapeItems:
        if (entry_.shape->size() >= limits_.max_rank) {
          return fail_entry(ErrorCode::kLimitExceeded, "shape has more than " +
                                                           std::to_string(limits_.max_rank) +
                                                           " dimensions (the rank limit)");
        }
        entry_.shape->push_back(value);
        return true;
      case State::kOffsetItems:
        if (entry_.data_offsets->size() >= 2) {
          return fail_entry(ErrorCode::kInvalidModel,
                            "data_offsets must be exactly two unsigned integers [begin, end]; "
                            "it has more");
        }
        entry_.data_offsets->push_back(value);
        return true;
      default:
        return scalar("an unsigned integer");
    }
  }

  bool string(json::string_t& value) {
    switch (state_) {
      case State::kMetaWantValue:
        metadata_.emplace(std::move(metadata_key_), std::move(value));
        state_ = State::kMetaWantKey;
        return true;
      case State::kEntryWantValue:
        if (field_ == Field::kDtype) {
          entry_.dtype = std::move(value);
          state_ = State::kEntryWantKey;
          return true;
        }
        return scalar("a string");
      default:
        return scalar("a string");
    }
  }

  bool start_object(std::size_t) {
    switch (state_) {
      case State::kStart:
        state_ = State::kTopWantKey;
        return true;
      case State::kTopWantValue:
        if (top_key_is_metadata_) {
          state_ = State::kMetaWantKey;
        } else {
          state_ = State::kEntryWantKey;
          seen_fields_ = 0;
          if (!unknown_fields_.empty()) unknown_fields_.clear();
        }
        return true;
      case State::kSkipping:
        ++skip_depth_;
        return true;
      case State::kEntryWantValue:
        if (field_ == Field::kUnknown) return begin_skip();
        return type_error("an object");
      default:
        return type_error("an object");
    }
  }

  bool end_object() {
    switch (state_) {
      case State::kTopWantKey:
        state_ = State::kFinished;
        return true;
      case State::kMetaWantKey:
        state_ = State::kTopWantKey;
        return true;
      case State::kEntryWantKey:
        state_ = State::kTopWantKey;
        return finish_entry();
      case State::kSkipping:
        return end_skip();
      default:
        return type_error("the end of an object");
    }
  }

  bool start_array(std::size_t) {
    switch (state_) {
      case State::kEntryWantValue:
        if (field_ == Field::kShape) {
          entry_.shape.emplace();
          state_ = State::kShapeItems;
          return true;
        }
        if (field_ == Field::kDataOffsets) {
          entry_.data_offsets.emplace();
          state_ = State::kOffsetItems;
          return true;
        }
        if (field_ == Field::kUnknown) return begin_skip();
        return type_error("an array");
      case State::kSkipping:
        ++skip_depth_;
        return true;
      default:
        return type_error("an array");
    }
  }

  bool end_array() {
    switch (state_) {
      case State::kShapeItems:
        state_ = State::kEntryWantKey;
        return true;
      case State::kOffsetItems:
        if (entry_.data_offsets->size() != 2) {
          return fail_entry(ErrorCode::kInvalidModel,
                            "data_offsets must be exactly two unsigned integers [begin, end]; it "
                            "has " +
                                std::to_string(entry_.data_offsets->size()));
        }
        state_ = State::kEntryWantKey;
        return true;
      case State::kSkipping:
        return end_skip();
      default:
        return type_error("the end of an array");
    }
  }

  bool key(json::string_t& key) {
    switch (state_) {
      case State::kTopWantKey:
        return top_key(std::move(key));
      case State::kMetaWantKey:
        if (metadata_.count(key) != 0) {
          return fail_at(
              Error(ErrorCode::kDuplicate, "__metadata__ key '" + key + "' appears more than once")
                  .with_subject(std::string(kMetadataKey)));
        }
        metadata_key_ = std::move(key);
        state_ = State::kMetaWantValue;
        return true;
      case State::kEntryWantKey:
        return entry_key(key);
      case State::kSkipping:
        return true;
      default:
        return type_error("an object key");
    }
  }

  bool parse_error(std::size_t position, const std::string&,
                   const nlohmann::detail::exception& ex) {
    const std::uint64_t at = position == 0 ? 0 : position - 1;
    error_ = Error(ErrorCode::kInvalidModel, std::string("header JSON is malformed: ") + ex.what())
                 .with_path(std::string(path_))
                 .with_offset(8 + at);
    return false;
  }

 private:
  enum class State : std::uint8_t {
    kStart,
    kTopWantKey,
    kTopWantValue,
    kMetaWantKey,
    kMetaWantValue,
    kEntryWantKey,
    kEntryWantValue,
    kShapeItems,
    kOffsetItems,
    kSkipping,
    kFinished,
  };
  enum class Field : std::uint8_t { kDtype = 1, kShape = 2, kDataOffsets = 4, kUnknown = 8 };

  // Absolute offset of the last byte the lexer read.
  std::uint64_t here() const { return 8 + static_cast<std::uint64_t>(last_read_ - text_); }

  bool fail_at(Error error) {
    error_ = std::move(error).with_path(std::string(path_)).with_offset(here());
    return false;
  }
  bool fail_entry(ErrorCode code, std::string message) {
    return fail_at(Error(code, std::move(message)).with_subject(entry_.name));
  }

  // Duplicate tensor names are found after parsing (check_unique_names), with one hash pass
  // over names that are not copied; a repeated "__metadata__" is found here.
  bool top_key(std::string key) {
    top_key_is_metadata_ = key == kMetadataKey;
    if (top_key_is_metadata_) {
      if (seen_metadata_) {
        return fail_at(
            Error(ErrorCode::kDuplicate, "__metadata__ appears more than once in the header")
                .with_subject(std::move(key)));
      }
      seen_metadata_ = true;
    } else {
      if (key.empty()) {
        return fail_at(Error(ErrorCode::kInvalidModel, "a tensor has an empty name"));
      }
      if (entries_.size() >= limits_.max_tensors) {
        return fail_at(Error(ErrorCode::kLimitExceeded, "the header declares more than " +
                                                            std::to_string(limits_.max_tensors) +
                                                            " tensors (the limit)")
                           .with_subject(std::move(key)));
      }
      entry_ = RawEntry{};
      entry_.name = std::move(key);
      entry_.key_offset = here();
    }
    state_ = State::kTopWantValue;
    return true;
  }

  bool entry_key(const std::string& key) {
    Field field = Field::kUnknown;
    if (key == "dtype") field = Field::kDtype;
    if (key == "shape") field = Field::kShape;
    if (key == "data_offsets") field = Field::kDataOffsets;
    if (field == Field::kUnknown) {
      if (limits_.unknown_fields == UnknownFieldPolicy::kReject) {
        return fail_entry(ErrorCode::kInvalidModel,
                          "unknown field '" + key +
                              "' in the tensor entry (only dtype, shape and data_offsets are "
                              "allowed)");
      }
      if (!unknown_fields_.insert(key).second) {
        return fail_entry(ErrorCode::kDuplicate, "field '" + key + "' appears more than once");
      }
    } else {
      const auto bit = static_cast<unsigned>(field);
      if ((seen_fields_ & bit) != 0) {
        return fail_entry(ErrorCode::kDuplicate, "field '" + key + "' appears more than once");
      }
      seen_fields_ |= bit;
    }
    field_ = field;
    state_ = State::kEntryWantValue;
    return true;
  }

  bool begin_skip() {
    skip_depth_ = 1;
    state_ = State::kSkipping;
    return true;
  }
  bool end_skip() {
    if (--skip_depth_ == 0) state_ = State::kEntryWantKey;
    return true;
  }

  // A scalar arrived: fine when skipping or as an ignored field's value, an error otherwise.
  bool scalar(const char* what) {
    if (state_ == State::kSkipping) return true;
    if (state_ == State::kEntryWantValue && field_ == Field::kUnknown) {
      state_ = State::kEntryWantKey;
      return true;
    }
    return type_error(what);
  }

  // Names what was expected where `found` arrived.
  bool type_error(const std::string& found) {
    switch (state_) {
      case State::kStart:
        return fail_at(Error(ErrorCode::kInvalidModel, "the header must be a JSON object"));
      case State::kTopWantValue:
        if (top_key_is_metadata_) {
          return fail_at(Error(ErrorCode::kInvalidModel,
                               "__metadata__ must be an object of strings, found " + found)
                             .with_subject(std::string(kMetadataKey)));
        }
        return fail_entry(ErrorCode::kInvalidModel,
                          "a tensor entry must be an object, found " + found);
      case State::kMetaWantValue:
        return fail_at(Error(ErrorCode::kInvalidModel, "__metadata__ value for key '" +
                                                           metadata_key_ +
                                                           "' must be a string, found " + found)
                           .with_subject(std::string(kMetadataKey)));
      case State::kEntryWantValue:
        switch (field_) {
          case Field::kDtype:
            return fail_entry(ErrorCode::kInvalidModel, "dtype must be a string, found " + found);
          case Field::kShape:
            return fail_entry(ErrorCode::kInvalidModel,
                              "shape must be an array of unsigned integers, found " + found);
          default:
            return fail_entry(
                ErrorCode::kInvalidModel,
                "data_offsets must be an array of two unsigned integers, found " + found);
        }
      case State::kShapeItems:
        return fail_entry(ErrorCode::kInvalidModel,
                          "shape element " + std::to_string(entry_.shape->size()) +
                              " must be an unsigned integer, found " + found);
      case State::kOffsetItems:
        return fail_entry(ErrorCode::kInvalidModel,
                          "data_offsets element " + std::to_string(entry_.data_offsets->size()) +
                              " must be an unsigned integer, found " + found);
      default:
        return fail_at(Error(ErrorCode::kInvalidModel, "unexpected " + found + " in the header"));
    }
  }

  // Validates a complete entry against its dtype and shape (S11–S16, S19, S20).
  bool finish_entry() {
    const char* missing = !entry_.dtype          ? "dtype"
                          : !entry_.shape        ? "shape"
                          : !entry_.data_offsets ? "data_offsets"
                                                 : nullptr;
    if (missing != nullptr) {
      return fail_entry(ErrorCode::kInvalidModel,
                        std::string("the tensor entry has no '") + missing + "' field");
    }
    const std::string& dtype_name = *entry_.dtype;
    const std::vector<std::uint64_t>& shape = *entry_.shape;
    const std::optional<DType> dtype = dtype_from_safetensors(dtype_name);
    if (!dtype) return unsupported_dtype(dtype_name, shape);

    auto byte_size = checked_byte_size(*dtype, shape);
    if (!byte_size) {
      return fail_entry(byte_size.error().code(), byte_size.error().message() + " (shape of " +
                                                      std::to_string(shape.size()) +
                                                      " dimensions, dtype " + dtype_name + ")");
    }
    const std::uint64_t begin = (*entry_.data_offsets)[0];
    const std::uint64_t end = (*entry_.data_offsets)[1];
    if (begin > end) {
      return fail_entry(ErrorCode::kInvalidModel, "data_offsets begin " + std::to_string(begin) +
                                                      " is after end " + std::to_string(end));
    }
    if (end - begin != *byte_size) {
      return fail_entry(ErrorCode::kInvalidModel,
                        "data_offsets span " + std::to_string(end - begin) + " bytes but dtype " +
                            dtype_name + " and the shape need " + std::to_string(*byte_size));
    }
    if (*byte_size == 0 && limits_.zero_size_tensors == ZeroSizeTensorPolicy::kReject) {
      return fail_entry(ErrorCode::kInvalidModel,
                        "zero-size tensor rejected (strict zero-size policy)");
    }
    Entry entry;
    entry.tensor.name = std::move(entry_.name);
    entry.tensor.dtype = *dtype;
    entry.tensor.shape = std::move(*entry_.shape);
    entry.tensor.offset = begin;
    entry.tensor.byte_size = *byte_size;
    entry.end = end;
    entry.key_offset = entry_.key_offset;
    entries_.push_back(std::move(entry));
    return true;
  }

  bool unsupported_dtype(const std::string& name, const std::vector<std::uint64_t>& shape) {
    for (const UnsupportedDtype& known : kKnownUnsupportedDtypes) {
      if (known.name != name) continue;
      auto elements = checked_element_count(shape);
      if (!elements || (*elements != 0 && *elements > UINT64_MAX / known.bits)) {
        return fail_entry(ErrorCode::kOverflow,
                          "the bit size of the tensor overflows 64 bits (dtype " + name + ")");
      }
      if ((*elements * known.bits) % 8 != 0) {
        return fail_entry(ErrorCode::kInvalidModel,
                          "misaligned slice: " + std::to_string(*elements) + " elements of " +
                              std::to_string(known.bits) + "-bit dtype " + name +
                              " are not a whole number of bytes");
      }
      return fail_entry(ErrorCode::kUnsupported, "dtype " + name +
                                                     " is a valid SafeTensors dtype that eredu "
                                                     "does not support");
    }
    return fail_entry(ErrorCode::kUnsupported, "unknown dtype '" + name + "'");
  }

  std::string_view path_;
  const char* text_;
  const char* last_read_;
  const SafetensorsLimits& limits_;
  State state_ = State::kStart;
  Field field_ = Field::kUnknown;
  unsigned seen_fields_ = 0;
  std::unordered_set<std::string> unknown_fields_;
  std::uint32_t skip_depth_ = 0;
  bool top_key_is_metadata_ = false;
  bool seen_metadata_ = false;
  std::string metadata_key_;
  RawEntry entry_;
  std::vector<Entry> entries_;
  std::map<std::string, std::string> metadata_;
  std::optional<Error> error_;
};

std::string hex_byte(unsigned char c) {
  constexpr char kDigits[] = "0123456789abcdef";
  return std::string("0x") + kDigits[c >> 4] + kDigits[c & 15];
}

// The second occurrence (in header order) of a repeated tensor name is a kDuplicate error at its
// key. The views point into `entries`, which does not change while the set lives.
Result<void> check_unique_names(const std::vector<Entry>& entries, std::string_view path) {
  std::unordered_set<std::string_view> names;
  names.reserve(entries.size());
  for (const Entry& entry : entries) {
    if (!names.insert(entry.tensor.name).second) {
      return fail(Error(ErrorCode::kDuplicate, "duplicate tensor name in the header")
                      .with_path(std::string(path))
                      .with_subject(entry.tensor.name)
                      .with_offset(entry.key_offset));
    }
  }
  return ok();
}

// Sorted by offset, the tensors must tile [0, buffer_size) exactly (S17, S18, S19).
Result<void> check_tiling(std::vector<Entry>& entries, std::uint64_t data_start,
                          std::uint64_t buffer_size, std::string_view path) {
  std::sort(entries.begin(), entries.end(), [](const Entry& a, const Entry& b) {
    if (a.tensor.offset != b.tensor.offset) return a.tensor.offset < b.tensor.offset;
    if (a.end != b.end) return a.end < b.end;
    return a.tensor.name < b.tensor.name;
  });
  std::uint64_t cursor = 0;
  const Entry* previous = nullptr;
  for (const Entry& entry : entries) {
    const std::uint64_t begin = entry.tensor.offset;
    auto error = [&](std::string message) {
      return fail(Error(ErrorCode::kInvalidModel, std::move(message))
                      .with_path(std::string(path))
                      .with_subject(entry.tensor.name)
                      .with_offset(data_start + std::min(begin, buffer_size)));
    };
    if (entry.end > buffer_size) {
      return error("data_offsets [" + std::to_string(begin) + ", " + std::to_string(entry.end) +
                   ") reach past the end of the data buffer (" + std::to_string(buffer_size) +
                   " bytes)");
    }
    if (begin < cursor) {
      return error("data_offsets [" + std::to_string(begin) + ", " + std::to_string(entry.end) +
                   ") overlap tensor '" + previous->tensor.name + "', which ends at " +
                   std::to_string(cursor));
    }
    if (begin > cursor) {
      return error("a hole of " + std::to_string(begin - cursor) +
                   " unindexed bytes precedes this tensor (offsets must be contiguous)");
    }
    cursor = entry.end;
    previous = &entry;
  }
  if (cursor != buffer_size) {
    return fail(Error(ErrorCode::kInvalidModel,
                      "the tensors cover " + std::to_string(cursor) + " of the " +
                          std::to_string(buffer_size) +
                          " bytes of the data buffer; the rest is unindexed trailing data")
                    .with_path(std::string(path))
                    .with_offset(data_start + cursor));
  }
  return ok();
}

Result<SafetensorsHeader> parse_header_text(std::span<const std::byte> prefix,
                                            std::uint64_t header_length, std::uint64_t file_size,
                                            std::string_view path,
                                            const SafetensorsLimits& limits) {
  const std::string_view text(reinterpret_cast<const char*>(prefix.data()) + 8,
                              static_cast<std::size_t>(header_length));
  auto error_at = [&](ErrorCode code, std::string message, std::uint64_t position) {
    return fail(
        Error(code, std::move(message)).with_path(std::string(path)).with_offset(8 + position));
  };
  if (text.front() != '{') {
    return error_at(ErrorCode::kInvalidModel,
                    "the header must start with '{' but starts with byte " +
                        hex_byte(static_cast<unsigned char>(text.front())),
                    0);
  }
  if (const auto bad = detail::find_invalid_utf8(text)) {
    return error_at(ErrorCode::kInvalidModel, "the header is not valid UTF-8", *bad);
  }
  const detail::JsonScan scan = detail::scan_json_structure(text, limits.max_json_depth);
  if (scan.outcome == detail::JsonScan::Outcome::kTooDeep) {
    return error_at(
        ErrorCode::kLimitExceeded,
        "the header JSON nests deeper than " + std::to_string(limits.max_json_depth) + " levels",
        scan.position);
  }
  std::size_t json_end = text.size();
  if (scan.outcome == detail::JsonScan::Outcome::kComplete) {
    json_end = scan.value_end;
    if (const auto extra = detail::find_non_space(text, json_end)) {
      return error_at(ErrorCode::kInvalidModel,
                      "byte " + hex_byte(static_cast<unsigned char>(text[*extra])) +
                          " follows the header JSON; only spaces (0x20) may pad it",
                      *extra);
    }
  }

  HeaderSax sax(path, text.data(), limits);
  const TrackingIterator first(text.data(), sax.last_read());
  const TrackingIterator last(text.data() + json_end, sax.last_read());
  const bool parsed = nlohmann::json::sax_parse(first, last, &sax);
  if (sax.error()) return fail(std::move(*sax.error()));
  if (!parsed) {
    return error_at(ErrorCode::kInvalidModel, "header JSON is malformed", json_end);
  }

  std::vector<Entry>& entries = sax.entries();
  EREDU_TRY_VOID(check_unique_names(entries, path));
  const std::uint64_t data_start = header_length + 8;
  EREDU_TRY_VOID(check_tiling(entries, data_start, file_size - data_start, path));
  if (data_start % 8 != 0) {
    log::warn(
        "{}: the SafeTensors data buffer starts at byte {}, not a multiple of 8; tensor "
        "bytes are read without alignment assumptions",
        path, data_start);
  }
  std::vector<SafetensorsTensor> tensors;
  tensors.reserve(entries.size());
  for (Entry& entry : entries) {
    entry.tensor.offset += data_start;
    tensors.push_back(std::move(entry.tensor));
  }
  const std::uint64_t hash = detail::fnv1a64(prefix.first(static_cast<std::size_t>(data_start)));
  return SafetensorsHeaderAccess::make(std::string(path), header_length, file_size, hash,
                                       std::move(tensors), std::move(sax.metadata()));
}

}  // namespace

namespace detail {

Result<std::uint64_t> checked_safetensors_header_length(std::span<const std::byte> prefix,
                                                        std::uint64_t file_size,
                                                        std::string_view path,
                                                        const SafetensorsLimits& limits) {
  auto error = [&](ErrorCode code, std::string message) {
    return fail(Error(code, std::move(message)).with_path(std::string(path)).with_offset(0));
  };
  if (file_size < 8 || prefix.size() < 8) {
    return error(ErrorCode::kInvalidModel,
                 "the file is " +
                     std::to_string(std::min<std::uint64_t>(file_size, prefix.size())) +
                     " bytes; a SafeTensors file starts with an 8-byte header length");
  }
  std::uint64_t length = 0;
  for (int i = 7; i >= 0; --i) {
    length = (length << 8) | static_cast<std::uint64_t>(prefix[static_cast<std::size_t>(i)]);
  }
  if (length == 0) return error(ErrorCode::kInvalidModel, "the header length is 0");
  if (length > limits.max_header_bytes) {
    return error(ErrorCode::kLimitExceeded, "the header length " + std::to_string(length) +
                                                " exceeds the limit of " +
                                                std::to_string(limits.max_header_bytes) + " bytes");
  }
  if (length > UINT64_MAX - 8) {
    return error(ErrorCode::kOverflow,
                 "the header length " + std::to_string(length) + " plus 8 overflows 64 bits");
  }
  if (length + 8 > file_size) {
    return error(ErrorCode::kInvalidModel, "the header length " + std::to_string(length) +
                                               " reaches past the end of the file (" +
                                               std::to_string(file_size) + " bytes)");
  }
  return length;
}

}  // namespace detail

std::uint64_t SafetensorsTensor::element_count() const noexcept {
  auto count = checked_element_count(shape);
  return count ? *count : 0;  // validated headers never overflow
}

SafetensorsHeader::SafetensorsHeader(const SafetensorsHeader& other)
    : path_(other.path_),
      header_length_(other.header_length_),
      file_size_(other.file_size_),
      header_hash_(other.header_hash_),
      tensors_(other.tensors_),
      metadata_(other.metadata_) {
  rebuild_index();
}

SafetensorsHeader& SafetensorsHeader::operator=(const SafetensorsHeader& other) {
  if (this != &other) {
    SafetensorsHeader copy(other);
    *this = std::move(copy);
  }
  return *this;
}

void SafetensorsHeader::rebuild_index() {
  by_name_.clear();
  by_name_.reserve(tensors_.size());
  for (std::size_t i = 0; i < tensors_.size(); ++i)
    by_name_.emplace(tensors_[i].name, i);
}

const SafetensorsTensor* SafetensorsHeader::find(std::string_view name) const noexcept {
  const auto it = by_name_.find(name);
  return it == by_name_.end() ? nullptr : &tensors_[it->second];
}

Result<SafetensorsHeader> parse_safetensors_header(std::span<const std::byte> prefix,
                                                   std::uint64_t file_size, std::string_view path,
                                                   const SafetensorsLimits& limits) {
  try {
    EREDU_TRY(const std::uint64_t length,
              detail::checked_safetensors_header_length(prefix, file_size, path, limits));
    if (prefix.size() - 8 < length) {
      return fail(Error(ErrorCode::kInvalidArgument,
                        "the bytes given hold " + std::to_string(prefix.size()) +
                            " bytes, fewer than the 8 + " + std::to_string(length) +
                            " the header needs")
                      .with_path(std::string(path)));
    }
    if (length > SIZE_MAX) {
      return fail(Error(ErrorCode::kLimitExceeded, "the header does not fit in memory")
                      .with_path(std::string(path)));
    }
    return parse_header_text(prefix, length, file_size, path, limits);
  } catch (const std::bad_alloc&) {
    return fail(Error(ErrorCode::kLimitExceeded, "out of memory while parsing the header")
                    .with_path(std::string(path)));
  } catch (const std::exception& e) {
    return fail(Error(ErrorCode::kInvalidModel, std::string("header parsing failed: ") + e.what())
                    .with_path(std::string(path)));
  }
}

}  // namespace eredu::checkpoint
