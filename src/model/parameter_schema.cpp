// Schema entries shared by every family (see parameter_schema.hpp).
#include "eredu/model/parameter_schema.hpp"

#include <string>

namespace eredu::model {

Result<ParameterSchema> stored_parameter(const checkpoint::TensorCatalog& catalog,
                                         const std::string& id, std::vector<std::uint64_t> shape,
                                         TensorClass tensor_class) {
  const checkpoint::TensorMetadata* meta = catalog.find(id);
  if (meta == nullptr) {
    return fail(Error(ErrorCode::kInvalidModel, "tensor " + id + " is missing").with_subject(id));
  }
  if (meta->shape != shape) {
    return fail(Error(ErrorCode::kInvalidModel, "tensor " + id + " has wrong shape; expected " +
                                                    format_shape(shape) + ", got " +
                                                    format_shape(meta->shape))
                    .with_subject(id)
                    .with_path(meta->shard_path));
  }
  if (tensor_class == TensorClass::kVector && meta->dtype != DType::kF32 &&
      meta->dtype != DType::kF16 && meta->dtype != DType::kBF16) {
    return fail(Error(ErrorCode::kUnsupported, "tensor " + id + " is a vector stored as " +
                                                   std::string(dtype_info(meta->dtype).name) +
                                                   "; expected F32, F16 or BF16")
                    .with_subject(id));
  }
  return ParameterSchema{id, std::move(shape), tensor_class,
                         checkpoint::DerivedWeightRecipe::source(id), std::nullopt};
}

ParameterSchema aliased_parameter(const std::string& id, std::vector<std::uint64_t> shape,
                                  const std::string& owner) {
  return ParameterSchema{id, std::move(shape), TensorClass::kMatrix,
                         checkpoint::DerivedWeightRecipe::source(owner), owner};
}

}  // namespace eredu::model
