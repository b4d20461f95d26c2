// VulkanBackend's ParameterBackend: a lease's packed bytes are copied once into a staging buffer
// and uploaded to a device-local buffer in their own submission (blocks stay packed; the shaders
// decode them). Norm gains (vectors) are decoded to F32 on the host first: they are tiny and the
// rms_norm shader reads F32. finish_materialization waits for the upload.
#include <cstring>
#include <string>
#include <variant>
#include <vector>

#include "eredu/backends/vulkan/vulkan_backend.hpp"
#include "eredu/backends/vulkan/weight_shaders.hpp"
#include "eredu/checkpoint/encoding/codec.hpp"
#include "eredu/runtime/weight_checks.hpp"
#include "pipelines.hpp"

namespace eredu::vulkan {
namespace {

Result<void> check_encoding(const std::string& name, DType dtype, std::size_t rank) {
  return runtime::check_tensor_encoding("vulkan", name, dtype, rank,
                                        [](DType d) { return supports_weight_dtype(d); });
}

}  // namespace

Result<void> VulkanBackend::preflight_recipe(const checkpoint::DerivedWeightRecipe& recipe,
                                             const checkpoint::CheckpointSource& source) {
  EREDU_TRY(auto src, runtime::whole_tensor_source(recipe, "vulkan"));
  auto meta = recipe.infer(source.catalog());
  if (!meta) return fail(Error(meta.error()));
  return check_encoding(src->key, meta->dtype, meta->shape.size());
}

Result<VulkanMaterialization> VulkanBackend::materialize(checkpoint::CheckpointLease&& lease,
                                                         const materialization_context& context) {
  checkpoint::CheckpointLease held = std::move(lease);  // released when this function returns
  if (context.device == nullptr) {
    return fail(ErrorCode::kInvalidArgument, "vulkan: materialization without a device");
  }
  const std::vector<std::uint64_t> shape(held.output_shape().begin(), held.output_shape().end());
  EREDU_TRY_VOID(check_encoding(held.name(), held.dtype(), shape.size()));
  if (context.pipelines != nullptr && shape.size() == 2) {
    // Bind time is when a weight's shaders are resolved (pipelines.hpp), never a dispatch.
    EREDU_TRY(const Pipeline* matmul, context.pipelines->matmul(held.dtype()));
    EREDU_TRY(const Pipeline* embed, context.pipelines->embed(held.dtype()));
    (void)matmul;
    (void)embed;
  }
  std::span<const std::byte> bytes = held.bytes();
  const auto expected = checked_byte_size(held.dtype(), shape);
  if (!expected || *expected != bytes.size()) {
    return fail(Error(ErrorCode::kInvalidModel, "tensor " + held.name() + " has the wrong size")
                    .with_subject(held.name()));
  }
  VulkanWeight w;
  w.name = held.name();
  w.dtype = held.dtype();
  w.shape = shape;
  if (shape.size() == 1) {
    // Vectors are held as F32, on the device and on the host (see VulkanWeight::host_values).
    // Decoded with core's codec (the same decoders every reader uses).
    std::shared_ptr<std::vector<float>> values;
    try {
      values = std::make_shared<std::vector<float>>(static_cast<std::size_t>(shape[0]));
    } catch (const std::bad_alloc&) {
      return fail(ErrorCode::kCapacityExhausted, "cannot allocate tensor " + held.name());
    }
    EREDU_TRY_VOID(encoding::dequantize(w.dtype, bytes, *values));
    w.host_values = std::move(values);
    bytes = std::as_bytes(std::span<const float>(*w.host_values));
    w.dtype = DType::kF32;
  }
  w.bytes = bytes.size();
  Device& device = *context.device;
  EREDU_TRY(w.buffer, device.create_device_buffer(bytes.size()));
  // A one-off staging buffer (not the pool's power-of-two ones: weights are large and uploaded
  // once), copied on the device and released with the upload's completion.
  EREDU_TRY(BufferPtr staging, device.create_staging_buffer(bytes.size()));
  if (!bytes.empty()) std::memcpy(staging->mapped(), bytes.data(), bytes.size());
  EREDU_TRY(Completion upload, device.submit([&](Recorder& r) -> Result<void> {
    return r.copy(staging, 0, w.buffer, 0, bytes.size());
  }));
  return VulkanMaterialization{std::move(w), std::move(upload)};
}

Result<VulkanMaterialization> VulkanBackend::materialize_recipe(
    const checkpoint::DerivedWeightRecipe& recipe, const checkpoint::CheckpointSource& source,
    const materialization_context& context) {
  EREDU_TRY(auto src, runtime::whole_tensor_source(recipe, "vulkan"));
  EREDU_TRY(auto lease, source.acquire_lease(checkpoint::TensorReadRequest{src->key}));
  return materialize(std::move(lease), context);
}

Result<VulkanWeight> VulkanBackend::finish_materialization(materialization&& in_flight) {
  EREDU_TRY_VOID(in_flight.upload.wait());
  return std::move(in_flight.weight);
}

Result<void> VulkanBackend::validate_bind(const parameter& slot, const materialized_weight& w) {
  if (!w.bound()) {
    return fail(Error(ErrorCode::kInvalidArgument, "weight for '" + slot.name + "' holds no data")
                    .with_subject(slot.name));
  }
  EREDU_TRY_VOID(runtime::check_bind_shape(slot.name, slot.shape, w.name, w.shape));
  EREDU_TRY_VOID(check_encoding(w.name, w.dtype, w.shape.size()));
  if (w.buffer->size() < w.bytes) {
    return fail(Error(ErrorCode::kInvalidModel, "weight " + w.name + " has the wrong byte size")
                    .with_subject(slot.name));
  }
  return runtime::check_bind_bytes(slot.name, w.name, w.dtype, w.shape, w.bytes);
}

}  // namespace eredu::vulkan
