#pragma once
// Forward declarations of the checkpoint layer's cold-path types, for headers (such as the backend
// concepts in core/) that name them without needing their definitions.

namespace eredu::checkpoint {
class CheckpointSource;
class CheckpointLease;
class DerivedWeightRecipe;
class TensorCatalog;
struct TensorMetadata;
}  // namespace eredu::checkpoint
