#pragma once
// BackendError: the neutral error a backend may use as its `error` type (a backend is free to use
// its own type, or eredu::Error). Four cases, each naming what failed and where:
//   Unsupported{backend, capability} | Preparation{operation, message}
//   | Execution{session, operation, message} | Completion{message}.

#include <string>
#include <utility>
#include <variant>

#include "eredu/core/error.hpp"

namespace eredu {

class BackendError {
 public:
  struct Unsupported {
    std::string backend;
    std::string capability;
    friend bool operator==(const Unsupported&, const Unsupported&) = default;
  };
  struct Preparation {
    std::string operation;
    std::string message;
    friend bool operator==(const Preparation&, const Preparation&) = default;
  };
  struct Execution {
    std::string session;
    std::string operation;
    std::string message;
    friend bool operator==(const Execution&, const Execution&) = default;
  };
  struct Completion {
    std::string message;
    friend bool operator==(const Completion&, const Completion&) = default;
  };
  using Variant = std::variant<Unsupported, Preparation, Execution, Completion>;

  // Implicit from each case, so `return BackendError::Preparation{"load", "..."};` reads well.
  BackendError(Unsupported e) : value_(std::move(e)) {}  // NOLINT(google-explicit-constructor)
  BackendError(Preparation e) : value_(std::move(e)) {}  // NOLINT(google-explicit-constructor)
  BackendError(Execution e) : value_(std::move(e)) {}    // NOLINT(google-explicit-constructor)
  BackendError(Completion e) : value_(std::move(e)) {}   // NOLINT(google-explicit-constructor)

  [[nodiscard]] const Variant& value() const noexcept { return value_; }
  template <typename Case>
  [[nodiscard]] const Case* get_if() const noexcept {
    return std::get_if<Case>(&value_);
  }

  // The matching eredu::ErrorCode: Unsupported -> kUnsupported, everything else -> kBackend.
  [[nodiscard]] ErrorCode code() const noexcept {
    return std::holds_alternative<Unsupported>(value_) ? ErrorCode::kUnsupported
                                                       : ErrorCode::kBackend;
  }

  // One line for people, e.g. "backend 'cuda' does not support capability 'collectives'".
  [[nodiscard]] std::string what() const {
    struct Describe {
      std::string operator()(const Unsupported& e) const {
        return "backend '" + e.backend + "' does not support capability '" + e.capability + "'";
      }
      std::string operator()(const Preparation& e) const {
        return "preparation failed during " + e.operation + ": " + e.message;
      }
      std::string operator()(const Execution& e) const {
        return "execution failed in session '" + e.session + "' during " + e.operation + ": " +
               e.message;
      }
      std::string operator()(const Completion& e) const {
        return "completion failed: " + e.message;
      }
    };
    return std::visit(Describe{}, value_);
  }

  // The same failure as a core Error (for layers that speak only eredu::Error).
  [[nodiscard]] Error to_error() const { return Error(code(), what()); }

  friend bool operator==(const BackendError&, const BackendError&) = default;

 private:
  Variant value_;
};

}  // namespace eredu
