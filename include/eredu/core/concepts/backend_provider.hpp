#pragma once
// BackendProvider<B> (seed 000): the one backend selected for a whole prepared model and all its
// sessions. The backend instance owns its devices and queues; nothing is passed to loaders
// separately.
//
// Associated types: model_config (portable preparation request), model (opaque executable),
// session (satisfies BackendSession<session, B>), error (move-constructible, with what()).
// Operations (const members):
//   b.descriptor()                                -> BackendDescriptor
//   b.devices()                                   -> Result<std::vector<DeviceReport>, error>
//   b.prepare_model(model_config&&)               -> Result<PreparedModel<model>, error>
//   b.create_session(PreparedModel<model>&&)      -> Result<session, error>   (consumes the model)
//   eredu::session_capability_mismatch(b, admitted, realized) -> error
//                                                 (customization point; see its header)

#include <concepts>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "eredu/core/capabilities.hpp"
#include "eredu/core/concepts/backend_error_type.hpp"
#include "eredu/core/concepts/backend_session.hpp"
#include "eredu/core/concepts/diagnose.hpp"
#include "eredu/core/descriptors.hpp"
#include "eredu/core/prepared_model.hpp"
#include "eredu/core/result.hpp"
#include "eredu/core/session_capability_mismatch.hpp"

namespace eredu::backend_provider_requirements {

template <typename B>
concept has_model_config = requires {
  typename B::model_config;
};
template <typename B>
concept has_model = requires {
  typename B::model;
};
template <typename B>
concept has_session = requires {
  typename B::session;
};
template <typename B>
concept has_error = requires {
  typename B::error;
};
template <typename B>
concept error_is_backend_error = has_error<B> && BackendErrorType<typename B::error>;
template <typename B>
concept model_is_movable_object =
    has_model<B> && std::is_object_v<typename B::model> && !std::is_const_v<typename B::model> &&
    std::move_constructible<typename B::model>;
template <typename B>
concept has_descriptor = requires(const B& b) {
  { b.descriptor() } -> std::same_as<BackendDescriptor>;
};
template <typename B>
concept has_devices = has_error<B> && requires(const B& b) {
  { b.devices() } -> std::same_as<Result<std::vector<DeviceReport>, typename B::error>>;
};
template <typename B>
concept has_prepare_model = has_model_config<B> && model_is_movable_object<B> && has_error<B> &&
    requires(const B& b, typename B::model_config&& config) {
  {
    b.prepare_model(std::move(config))
    } -> std::same_as<Result<PreparedModel<typename B::model>, typename B::error>>;
};
template <typename B>
concept has_create_session = model_is_movable_object<B> && has_session<B> && has_error<B> &&
    requires(const B& b, PreparedModel<typename B::model>&& prepared) {
  {
    b.create_session(std::move(prepared))
    } -> std::same_as<Result<typename B::session, typename B::error>>;
};
// create_session must consume its PreparedModel: a parameter that also accepts an lvalue (e.g.
// `const PreparedModel&`) would let one prepared model back two sessions.
template <typename B>
concept create_session_consumes_model =
    has_create_session<B> && !requires(const B& b, PreparedModel<typename B::model>& prepared) {
  b.create_session(prepared);
};
template <typename B>
concept session_is_backend_session = has_session<B> && BackendSession<typename B::session, B>;
template <typename B>
concept has_session_capability_mismatch = has_error<B> &&
    requires(const B& b, const SessionCapabilities& caps) {
  { ::eredu::session_capability_mismatch(b, caps, caps) } -> std::same_as<typename B::error>;
};

}  // namespace eredu::backend_provider_requirements

// clang-format off
#define EREDU_BACKEND_PROVIDER_REQUIREMENTS(X)                                                  \
  X(::eredu::backend_provider_requirements::has_model_config<B>,                                 \
    "BackendProvider: missing associated type model_config")                                     \
  X(::eredu::backend_provider_requirements::has_model<B>,                                        \
    "BackendProvider: missing associated type model")                                            \
  X(::eredu::backend_provider_requirements::has_session<B>,                                      \
    "BackendProvider: missing associated type session")                                          \
  X(::eredu::backend_provider_requirements::has_error<B>,                                        \
    "BackendProvider: missing associated type error")                                            \
  X(::eredu::backend_provider_requirements::error_is_backend_error<B>,                           \
    "BackendProvider: error must be move-constructible and have what() -> std::string")          \
  X(::eredu::backend_provider_requirements::model_is_movable_object<B>,                          \
    "BackendProvider: model must be a non-const, move-constructible object type")                \
  X(::eredu::backend_provider_requirements::has_descriptor<B>,                                   \
    "BackendProvider: missing descriptor() const -> BackendDescriptor")                          \
  X(::eredu::backend_provider_requirements::has_devices<B>,                                      \
    "BackendProvider: missing devices() const -> Result<std::vector<DeviceReport>, error>")      \
  X(::eredu::backend_provider_requirements::has_prepare_model<B>,                                \
    "BackendProvider: missing prepare_model(model_config&&) const -> "                           \
    "Result<PreparedModel<model>, error>")                                                       \
  X(::eredu::backend_provider_requirements::has_create_session<B>,                               \
    "BackendProvider: missing create_session(PreparedModel<model>&&) const -> "                  \
    "Result<session, error>")                                                                    \
  X(::eredu::backend_provider_requirements::create_session_consumes_model<B>,                    \
    "BackendProvider: create_session must consume its PreparedModel (take it by value or by "    \
    "rvalue reference), not borrow it")                                                          \
  X(::eredu::backend_provider_requirements::session_is_backend_session<B>,                       \
    "BackendProvider: session must satisfy BackendSession<session, B>; see "                     \
    "eredu::diagnose::backend_session<typename B::session, B>()")                                \
  X(::eredu::backend_provider_requirements::has_session_capability_mismatch<B>,                  \
    "BackendProvider: session_capability_mismatch(backend, admitted, realized) is not "          \
    "available: define the member session_capability_mismatch(const SessionCapabilities&, "     \
    "const SessionCapabilities&) const -> error, or make error constructible from eredu::Error")
// clang-format on

namespace eredu {

template <typename B>
concept BackendProvider =
    true EREDU_BACKEND_PROVIDER_REQUIREMENTS(EREDU_DETAIL_REQUIREMENT_CONJUNCTION);

namespace diagnose {
template <typename B>
constexpr std::string_view backend_provider_unmet() noexcept {
  EREDU_BACKEND_PROVIDER_REQUIREMENTS(EREDU_DETAIL_REQUIREMENT_FIRST_UNMET)
  return {};
}
template <typename B>
consteval bool backend_provider() {
  using diagnosed_type [[maybe_unused]] = B;
  EREDU_BACKEND_PROVIDER_REQUIREMENTS(EREDU_DETAIL_REQUIREMENT_ASSERT)
  return true;
}
}  // namespace diagnose

}  // namespace eredu
