// The Vulkan backend in the op-parity suite (every op against the scalar CPU reference), run under
// the Khronos validation layer: any validation message during an op fails the test.
#include "op_parity_suite.hpp"

#ifdef EREDU_HAVE_VULKAN_BACKEND
#include "vulkan_test_context.hpp"

namespace {

using eredu::testing::VulkanTestContext;
using namespace eredu::testing::op_parity;

// Translates a backend Result: kUnsupported becomes a harness "unsupported", any other error fails
// the test (and is reported as unsupported so the harness stops comparing).
OpResult translate(const eredu::Result<void>& r) {
  eredu::testing::expect_no_validation_messages();
  if (r.has_value()) return eredu::testing::op_parity::ok();
  if (r.error().code() != eredu::ErrorCode::kUnsupported) {
    ADD_FAILURE() << "vulkan op failed: " << r.error().what();
  }
  return unsupported(r.error().what());
}

struct VulkanOps {
  static OpTable make() {
    OpTable t;
    t.name = "vulkan";
    VulkanTestContext& ctx = VulkanTestContext::get();
    if (!ctx.unavailable().empty()) {
      t.unavailable = ctx.unavailable();
      return t;
    }
    eredu::vulkan::Kernels* k = &ctx.kernels();
    t.name = "vulkan(" + ctx.device()->info().name + ")";
    t.matmul = [k](const MatrixView& w, const float* x, std::size_t n, float* y) {
      return translate(k->matmul(w, x, n, y));
    };
    t.get_row = [k](const MatrixView& m, std::size_t row, float* out) {
      return translate(k->get_row(m, row, out));
    };
    t.rms_norm = [k](const float* x, const float* w, std::size_t r, std::size_t n, float eps,
                     float* y) { return translate(k->rms_norm(x, w, r, n, eps, y)); };
    t.rope = [k](float* x, std::size_t nt, std::size_t nh, std::size_t hd, const std::int32_t* p,
                 const RopeParams& params) { return translate(k->rope(x, nt, nh, hd, p, params)); };
    t.attention = [k](const AttentionArgs& a) { return translate(k->attention(a)); };
    t.swiglu = [k](const float* g, const float* u, std::size_t n, float* o) {
      return translate(k->swiglu(g, u, n, o));
    };
    t.add = [k](const float* a, const float* b, std::size_t n, float* o) {
      return translate(k->add(a, b, n, o));
    };
    t.softmax = [k](float* x, std::size_t n) { return translate(k->softmax(x, n)); };
    return t;
  }
};

}  // namespace

#else

namespace {
struct VulkanOps {
  static eredu::testing::op_parity::OpTable make() {
    eredu::testing::op_parity::OpTable t;
    t.name = "vulkan";
    t.unavailable = "this build has no Vulkan backend (EREDU_WITH_VULKAN=OFF or SDK missing)";
    return t;
  }
};
}  // namespace

#endif

EREDU_OP_PARITY_BACKEND(Vulkan, VulkanOps);
