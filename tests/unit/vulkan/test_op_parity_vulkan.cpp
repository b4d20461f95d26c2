// The Vulkan backend in the op-parity suite: VulkanBackend's NeuralBackend operators (the path the
// model runs, through neural_op_table.hpp) against the scalar CPU reference, under the Khronos
// validation layer: any validation message during an op fails the test.
#include "op_parity_suite.hpp"

#ifdef EREDU_HAVE_VULKAN_BACKEND
#include <memory>
#include <span>
#include <vector>

#include "eredu/backends/vulkan/vulkan_backend.hpp"
#include "neural_op_table.hpp"
#include "optional_operator_parity.hpp"
#include "vulkan_test_context.hpp"

namespace {

using eredu::testing::VulkanTestContext;
using eredu::testing::op_parity::OpTable;
namespace vk = eredu::vulkan;

// VulkanBackend on the shared validated device; host floats travel through their own submissions.
class VulkanAdapter {
 public:
  using backend_type = vk::VulkanBackend;
  explicit VulkanAdapter(vk::VulkanBackend backend) : backend_(std::move(backend)) {}
  const backend_type& backend() const { return backend_; }
  backend_type::materialization_context materialization_context() const {
    return {backend_.device_ptr()};
  }
  eredu::Result<vk::VulkanTensor> upload(std::span<const float> values, std::size_t rows,
                                         std::size_t cols) const {
    return eredu::testing::upload_tensor(backend_.device(), values, rows, cols);
  }
  eredu::Result<std::vector<float>> download(const vk::VulkanTensor& t) const {
    return backend_.read(t);
  }
  void after_op() const { eredu::testing::expect_no_validation_messages(); }

 private:
  vk::VulkanBackend backend_;
};

struct VulkanOps {
  static OpTable make() {
    OpTable t;
    t.name = "vulkan";
    VulkanTestContext& ctx = VulkanTestContext::get();
    if (!ctx.unavailable().empty()) {
      t.unavailable = ctx.unavailable();
      return t;
    }
    auto backend = vk::VulkanBackend::on_device(ctx.device());
    if (!backend.has_value()) {  // the device is there: a backend that cannot open is a bug
      ADD_FAILURE() << "VulkanBackend::on_device failed: " << backend.error().what();
      t.unavailable = backend.error().what();
      return t;
    }
    return eredu::testing::neural_op_table(
        std::make_shared<const VulkanAdapter>(std::move(backend).value()),
        "vulkan(" + ctx.device()->info().name + ")");
  }
};

// The optional operators the decoder families use.
struct VulkanOptional {
  static std::string unavailable() { return VulkanTestContext::get().unavailable(); }
  static std::shared_ptr<const VulkanAdapter> adapter() {
    auto backend = vk::VulkanBackend::on_device(VulkanTestContext::get().device());
    EXPECT_TRUE(backend.has_value());
    return std::make_shared<const VulkanAdapter>(std::move(backend).value());
  }
};

}  // namespace

EREDU_OPTIONAL_OPERATOR_PARITY(Vulkan, VulkanOptional)

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
