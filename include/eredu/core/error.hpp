#pragma once
// The error taxonomy of eredu: one value type that says what went wrong (a typed code) and where
// (file, key or tensor, byte offset). Every contract returns it (or a backend error that wraps it)
// through Result; no exception escapes the library.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>

namespace eredu {

// What kind of failure. Callers branch on this; the message is for people.
enum class ErrorCode : std::uint8_t {
  kInvalidArgument,    // a caller-supplied value is out of range or malformed
  kInvalidModel,       // a model file or directory is malformed (truncated, inconsistent, hostile)
  kUnsupported,        // well-formed, but this build or backend cannot handle it
  kIo,                 // the operating system refused (open, stat, mmap, read)
  kNotFound,           // a named file, key, tensor or device does not exist
  kDuplicate,          // a name that must be unique appears twice
  kLimitExceeded,      // a configured bound (size, count, depth) was exceeded
  kOverflow,           // arithmetic on untrusted sizes would overflow
  kCapabilityMissing,  // a required device/session/operator capability is absent
  kCapacityExhausted,  // a bounded pool (e.g. open shards) is full and everything in it is in use
  kBackend,            // a native backend failure, translated at the backend boundary
  kCancelled,          // the caller asked to stop
  kInternal,           // a broken invariant inside eredu (a bug)
};

// A short lower-case name for the code ("invalid model", "unsupported", ...).
constexpr std::string_view to_string(ErrorCode code) noexcept {
  switch (code) {
    case ErrorCode::kInvalidArgument:
      return "invalid argument";
    case ErrorCode::kInvalidModel:
      return "invalid model";
    case ErrorCode::kUnsupported:
      return "unsupported";
    case ErrorCode::kIo:
      return "i/o error";
    case ErrorCode::kNotFound:
      return "not found";
    case ErrorCode::kDuplicate:
      return "duplicate";
    case ErrorCode::kLimitExceeded:
      return "limit exceeded";
    case ErrorCode::kOverflow:
      return "overflow";
    case ErrorCode::kCapabilityMissing:
      return "capability missing";
    case ErrorCode::kCapacityExhausted:
      return "capacity exhausted";
    case ErrorCode::kBackend:
      return "backend error";
    case ErrorCode::kCancelled:
      return "cancelled";
    case ErrorCode::kInternal:
      return "internal error";
  }
  return "error";
}

// An error: code, message, and where it happened. The location parts are optional and are added
// by each layer as the error travels outwards (the reader knows the offset, the loader the path).
class Error {
 public:
  Error(ErrorCode code, std::string message) : code_(code), message_(std::move(message)) {}

  [[nodiscard]] ErrorCode code() const noexcept { return code_; }
  [[nodiscard]] const std::string& message() const noexcept { return message_; }
  // The file (or directory) the error is about, if known.
  [[nodiscard]] const std::string& path() const noexcept { return path_; }
  // The metadata key, tensor name, JSON field or parameter the error is about, if known.
  [[nodiscard]] const std::string& subject() const noexcept { return subject_; }
  // The absolute byte offset in `path()` where the problem was found, if known.
  [[nodiscard]] std::optional<std::uint64_t> offset() const noexcept { return offset_; }

  // Location setters; each keeps an existing, more specific value.
  Error&& with_path(std::string path) && {
    if (path_.empty()) path_ = std::move(path);
    return std::move(*this);
  }
  Error&& with_subject(std::string subject) && {
    if (subject_.empty()) subject_ = std::move(subject);
    return std::move(*this);
  }
  Error&& with_offset(std::uint64_t offset) && {
    if (!offset_) offset_ = offset;
    return std::move(*this);
  }
  Error& set_path(std::string path) & {
    if (path_.empty()) path_ = std::move(path);
    return *this;
  }

  // One line for people: "invalid model: model.gguf: tensor 'x' at byte 1234: <message>".
  [[nodiscard]] std::string what() const {
    std::string out(to_string(code_));
    out += ": ";
    if (!path_.empty()) {
      out += path_;
      out += ": ";
    }
    if (!subject_.empty()) {
      out += '\'';
      out += subject_;
      out += '\'';
      out += offset_ ? " " : ": ";
    }
    if (offset_) {
      out += "at byte ";
      out += std::to_string(*offset_);
      out += ": ";
    }
    out += message_;
    return out;
  }

  friend bool operator==(const Error&, const Error&) = default;

 private:
  ErrorCode code_;
  std::string message_;
  std::string path_;
  std::string subject_;
  std::optional<std::uint64_t> offset_;
};

}  // namespace eredu
