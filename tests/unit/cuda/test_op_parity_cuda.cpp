// The CUDA backend in the op-parity suite: CudaBackend's NeuralBackend operators (the path the
// model runs, through neural_op_table.hpp) against the scalar CPU reference, plus the optional
// operators the decoder families use. Host floats reach the device through CudaBackend::upload and
// come back through read() (which waits for the stream). Without a usable GPU every test skips
// with CudaBackend::create's "no CUDA device: ..." reason.
#include "op_parity_suite.hpp"

#ifdef EREDU_HAVE_CUDA_BACKEND
#include <memory>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "eredu/backends/cuda/cuda_backend.hpp"
#include "neural_op_table.hpp"
#include "optional_operator_parity.hpp"

namespace {

using eredu::testing::op_parity::OpTable;
namespace cu = eredu::cuda;

// Why this process cannot run the CUDA backend, empty when it can: CudaBackend::create's
// kCapabilityMissing error (no driver, no device), whose message reads "no CUDA device: ...". The
// first call opens a backend on the default device and lets it go; only the outcome is kept (a
// backend living in a static would be destroyed after the CUDA runtime has unloaded). Any other
// failure is a device that exists and would not open: a bug, reported by the tests themselves.
const std::string& cuda_unavailable() {
  static const std::string reason = [] {
    auto backend = cu::CudaBackend::create(cu::CudaBackendOptions{});
    if (backend.has_value() || backend.error().code() != eredu::ErrorCode::kCapabilityMissing) {
      return std::string();
    }
    return backend.error().message();
  }();
  return reason;
}

// A CudaBackend on the default device; host floats travel through its own stream.
class CudaAdapter {
 public:
  using backend_type = cu::CudaBackend;
  explicit CudaAdapter(cu::CudaBackend backend) : backend_(std::move(backend)) {}
  const backend_type& backend() const { return backend_; }
  backend_type::materialization_context materialization_context() const {
    return {backend_.stream_ptr()};
  }
  eredu::Result<cu::CudaTensor> upload(std::span<const float> values, std::size_t rows,
                                       std::size_t cols) const {
    return backend_.upload(values, rows, cols);
  }
  eredu::Result<std::vector<float>> download(const cu::CudaTensor& t) const {
    return backend_.read(t);
  }
  // A kernel's failure surfaces in its operator's Result or in read(): nothing to collect here.
  void after_op() const {}

 private:
  cu::CudaBackend backend_;
};

struct CudaOps {
  static OpTable make() {
    OpTable t;
    t.name = "cuda";
    if (!cuda_unavailable().empty()) {
      t.unavailable = cuda_unavailable();
      return t;
    }
    auto backend = cu::CudaBackend::create(cu::CudaBackendOptions{});
    if (!backend.has_value()) {  // the device is there: a backend that cannot open is a bug
      ADD_FAILURE() << "CudaBackend::create failed: " << backend.error().what();
      t.unavailable = backend.error().what();
      return t;
    }
    return eredu::testing::neural_op_table(
        std::make_shared<const CudaAdapter>(std::move(backend).value()), "cuda");
  }
};

// The optional operators the decoder families use (add_bias, head_rms_norm, rotary_scaled).
struct CudaOptional {
  static std::string unavailable() {
    if (!cuda_unavailable().empty()) return cuda_unavailable();
    auto backend = cu::CudaBackend::create(cu::CudaBackendOptions{});
    if (backend.has_value()) return {};
    ADD_FAILURE() << "CudaBackend::create failed: " << backend.error().what();
    return backend.error().what();  // failed above; skipping keeps the bodies off a null adapter
  }
  static std::shared_ptr<const CudaAdapter> adapter() {
    auto backend = cu::CudaBackend::create(cu::CudaBackendOptions{});
    EXPECT_TRUE(backend.has_value());
    return std::make_shared<const CudaAdapter>(std::move(backend).value());
  }
};

}  // namespace

EREDU_OPTIONAL_OPERATOR_PARITY(Cuda, CudaOptional)

#else

namespace {
struct CudaOps {
  static eredu::testing::op_parity::OpTable make() {
    eredu::testing::op_parity::OpTable t;
    t.name = "cuda";
    t.unavailable = "this build has no CUDA backend (EREDU_WITH_CUDA=OFF or toolkit missing)";
    return t;
  }
};
}  // namespace

#endif

EREDU_OP_PARITY_BACKEND(Cuda, CudaOps);
