#pragma once
// ModelRuntime<B>: the canonical owner of one backend and the one session it created from a
// PreparedModel.
//
// `from_prepared` reads the capabilities admitted before materialization, consumes the prepared
// model into a session, and compares them with the capabilities the session actually realized;
// any difference is reported through the customization point eredu::session_capability_mismatch
// (the backend's member when it has one, an internal eredu::Error otherwise), and no runtime is
// created. After that, prefill/decode/observe_output forward to the session with the owned backend.

#include <utility>

#include "eredu/core/capabilities.hpp"
#include "eredu/core/concepts/backend_provider.hpp"
#include "eredu/core/planning_fwd.hpp"
#include "eredu/core/prepared_model.hpp"
#include "eredu/core/result.hpp"
#include "eredu/core/session_capability_mismatch.hpp"

namespace eredu::runtime {

template <typename B>
class ModelRuntime {
  // Reports the first unmet BackendProvider requirement by name.
  static_assert(diagnose::backend_provider<B>());

 public:
  using backend_type = B;
  using session_type = typename B::session;
  using error = typename B::error;

  // Creates the session from `prepared` and checks realized == admitted capabilities.
  [[nodiscard]] static Result<ModelRuntime, error> from_prepared(
      B backend, PreparedModel<typename B::model>&& prepared) {
    const SessionCapabilities admitted = prepared.admitted_capabilities();
    Result<session_type, error> session = backend.create_session(std::move(prepared));
    if (!session.has_value()) return Unexpected<error>(std::move(session).error());
    const SessionCapabilities realized = session->capabilities();
    if (realized != admitted) {
      return Unexpected<error>(eredu::session_capability_mismatch(backend, admitted, realized));
    }
    return ModelRuntime(std::move(backend), std::move(session).value(), admitted);
  }

  // prepare_model, then from_prepared.
  [[nodiscard]] static Result<ModelRuntime, error> prepare(B backend,
                                                           typename B::model_config&& config) {
    Result<PreparedModel<typename B::model>, error> prepared =
        backend.prepare_model(std::move(config));
    if (!prepared.has_value()) return Unexpected<error>(std::move(prepared).error());
    return from_prepared(std::move(backend), std::move(prepared).value());
  }

  [[nodiscard]] const B& backend() const noexcept { return backend_; }
  [[nodiscard]] const session_type& session() const noexcept { return session_; }
  [[nodiscard]] session_type& session_mut() noexcept { return session_; }
  [[nodiscard]] const SessionCapabilities& admitted_capabilities() const noexcept {
    return admitted_;
  }

  [[nodiscard]] auto prefill(typename session_type::prefill_input&& input) {
    return session_.prefill(backend_, std::move(input));
  }
  [[nodiscard]] auto decode(typename session_type::decode_input&& input) {
    return session_.decode(backend_, std::move(input));
  }
  [[nodiscard]] auto observe_output(const typename session_type::output& output) const {
    return session_.observe_output(backend_, output);
  }

 private:
  ModelRuntime(B backend, session_type session, const SessionCapabilities& admitted)
      : backend_(std::move(backend)), session_(std::move(session)), admitted_(admitted) {}

  B backend_;
  session_type session_;
  SessionCapabilities admitted_;
};

}  // namespace eredu::runtime
