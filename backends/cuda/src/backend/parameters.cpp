// CudaBackend's ParameterBackend: a lease's packed bytes are copied once into device memory from
// the checkpoint's mapping (blocks stay packed; the kernels decode them). Vectors (norm gains,
// biases, rotary factors) are decoded to F32 on the host first: they are tiny and the kernels read
// F32. finish_materialization waits for the upload.
#include <string>
#include <variant>
#include <vector>

#include "../kernels/kernels.hpp"
#include "eredu/backends/cuda/cuda_backend.hpp"
#include "eredu/checkpoint/encoding/codec.hpp"
#include "eredu/runtime/weight_checks.hpp"
#include "stream.hpp"

namespace eredu::cuda {
namespace {

Result<void> check_encoding(const std::string& name, DType dtype, std::size_t rank) {
  return runtime::check_tensor_encoding("cuda", name, dtype, rank,
                                        [](DType d) { return kernels::supports_weight_dtype(d); });
}

}  // namespace

Result<void> CudaBackend::preflight_recipe(const checkpoint::DerivedWeightRecipe& recipe,
                                           const checkpoint::CheckpointSource& source) {
  EREDU_TRY(auto src, runtime::whole_tensor_source(recipe, "cuda"));
  auto meta = recipe.infer(source.catalog());
  if (!meta) return fail(Error(meta.error()));
  return check_encoding(src->key, meta->dtype, meta->shape.size());
}

Result<CudaMaterialization> CudaBackend::materialize(checkpoint::CheckpointLease&& lease,
                                                     const materialization_context& context) {
  checkpoint::CheckpointLease held = std::move(lease);  // released when this function returns
  if (context.stream == nullptr) {
    return fail(ErrorCode::kInvalidArgument, "cuda: materialization without a stream");
  }
  const std::vector<std::uint64_t> shape(held.output_shape().begin(), held.output_shape().end());
  EREDU_TRY_VOID(check_encoding(held.name(), held.dtype(), shape.size()));
  std::span<const std::byte> bytes = held.bytes();
  const auto expected = checked_byte_size(held.dtype(), shape);
  if (!expected || *expected != bytes.size()) {
    return fail(Error(ErrorCode::kInvalidModel, "tensor " + held.name() + " has the wrong size")
                    .with_subject(held.name()));
  }
  CudaWeight w;
  w.name = held.name();
  w.dtype = held.dtype();
  w.shape = shape;
  if (shape.size() == 1) {
    // Vectors are held as F32 on the device and on the host (CudaWeight::host_values), decoded
    // with the core's codec (the same decoders every reader uses).
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
  CudaStream& stream = *context.stream;
  EREDU_TRY(w.buffer, stream.allocate(bytes.size()));
  // A pageable source (the checkpoint's mapping): the runtime stages it before returning, so the
  // lease may be released when this function returns.
  EREDU_TRY_VOID(stream.upload(w.buffer->data(), bytes));
  EREDU_TRY(StreamEventPtr uploaded, stream.record());
  return CudaMaterialization{std::move(w), CudaCompletion(std::move(uploaded))};
}

Result<CudaMaterialization> CudaBackend::materialize_recipe(
    const checkpoint::DerivedWeightRecipe& recipe, const checkpoint::CheckpointSource& source,
    const materialization_context& context) {
  EREDU_TRY(auto src, runtime::whole_tensor_source(recipe, "cuda"));
  EREDU_TRY(auto lease, source.acquire_lease(checkpoint::TensorReadRequest{src->key}));
  return materialize(std::move(lease), context);
}

Result<CudaWeight> CudaBackend::finish_materialization(materialization&& in_flight) {
  EREDU_TRY_VOID(in_flight.upload.wait());
  return std::move(in_flight.weight);
}

Result<void> CudaBackend::validate_bind(const parameter& slot, const materialized_weight& w) {
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

}  // namespace eredu::cuda
