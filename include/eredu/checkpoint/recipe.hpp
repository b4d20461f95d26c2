#pragma once
// DerivedWeightRecipe: how one runtime weight is built from checkpoint tensors — a closed,
// recursive, immutable value (copies share their children).
//
//   Source{key, selection}        read a (sub)tensor of the checkpoint
//   Select{input, selection}      slice a derived value (tensor-parallel shard, one expert)
//   Concatenate{axis, inputs}     fuse projections along an existing axis (QKV, gate/up)
//   Stack{axis, inputs}           join equal-shaped inputs along a new axis (expert banks)
//   Reshape{input, shape}         same elements, new row-major shape
//   Transpose{input, axes}        permute axes (output axis i is input axis axes[i])
//   Cast{input, dtype}            numeric conversion between plain (non-block) dtypes
//   View{input, dtype, shape}     reinterpret the bytes; byte length must match
//
// `infer` validates every node against a TensorCatalog — shapes, dtypes, byte lengths, axes,
// permutations, block alignment of packed encodings, checked arithmetic — before anything is read.
// Packed (block-quantized) values may only be rearranged in whole blocks: their innermost axis may
// not be transposed away or stacked onto, and selections on it must be block aligned. Every node's
// output must be non-empty (a zero-sized weight is rejected).

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "eredu/checkpoint/fwd.hpp"
#include "eredu/checkpoint/selection.hpp"
#include "eredu/checkpoint/tensor_catalog.hpp"
#include "eredu/core/dtype.hpp"
#include "eredu/core/error.hpp"
#include "eredu/core/result.hpp"

namespace eredu::checkpoint {

struct RecipeMetadata {
  std::vector<std::uint64_t> shape;  // row-major, outermost first
  DType dtype = DType::kF32;
  std::uint64_t byte_length = 0;
  friend bool operator==(const RecipeMetadata&, const RecipeMetadata&) = default;
};

// Why a recipe was rejected.
enum class RecipeErrorKind : std::uint8_t {
  kEmptySourceKey,        // Source with an empty key
  kUnknownSource,         // Source key not in the catalog
  kInvalidSelection,      // selection axis/range/run out of bounds, or not block aligned
  kEmptyInputs,           // Concatenate/Stack without inputs
  kInvalidJoinAxis,       // Concatenate/Stack axis out of range
  kDtypeMismatch,         // joined inputs disagree on dtype
  kShapeMismatch,         // joined inputs disagree on rank or on a non-joined dimension
  kElementCountMismatch,  // Reshape to a different element count
  kByteCountMismatch,     // View to a different byte length
  kInvalidPermutation,    // Transpose axes not a permutation of the input's axes
  kBlockMisaligned,       // would split blocks of a packed dtype (incl. a target shape whose
                          // innermost dimension is not whole blocks)
  kUnsupportedDtype,      // Cast to or from a block-quantized dtype
  kZeroSizedOutput,       // a node's output has no elements
  kOverflow,              // checked arithmetic failed
};

[[nodiscard]] std::string_view to_string(RecipeErrorKind kind) noexcept;

// A typed recipe error: the kind, the path of the failing node from the root (e.g.
// "concatenate/1/reshape/source"), the checkpoint key involved (when one is), and an eredu Error
// (code, message naming node and key) into which it converts, so EREDU_TRY works in Error contexts.
class RecipeError {
 public:
  RecipeError(RecipeErrorKind kind, std::string node_path, std::string key, Error error)
      : kind_(kind),
        node_path_(std::move(node_path)),
        key_(std::move(key)),
        error_(std::move(error)) {}

  [[nodiscard]] RecipeErrorKind kind() const noexcept { return kind_; }
  [[nodiscard]] const std::string& node_path() const noexcept { return node_path_; }
  [[nodiscard]] const std::string& key() const noexcept { return key_; }
  [[nodiscard]] const Error& error() const noexcept { return error_; }
  [[nodiscard]] ErrorCode code() const noexcept { return error_.code(); }
  [[nodiscard]] std::string what() const { return error_.what(); }
  operator Error() const { return error_; }  // NOLINT: implicit so errors propagate as Error

 private:
  RecipeErrorKind kind_;
  std::string node_path_;
  std::string key_;
  Error error_;
};

class DerivedWeightRecipe {
 public:
  using Ptr = std::shared_ptr<const DerivedWeightRecipe>;

  struct Source {
    std::string key;
    TensorSelection selection;
  };
  struct Select {
    Ptr input;
    TensorSelection selection;
  };
  struct Concatenate {
    std::size_t axis = 0;
    std::vector<DerivedWeightRecipe> inputs;
  };
  struct Stack {
    std::size_t axis = 0;
    std::vector<DerivedWeightRecipe> inputs;
  };
  struct Reshape {
    Ptr input;
    std::vector<std::uint64_t> shape;
  };
  struct Transpose {
    Ptr input;
    std::vector<std::size_t> axes;
  };
  struct Cast {
    Ptr input;
    DType dtype = DType::kF32;
  };
  struct View {
    Ptr input;
    DType dtype = DType::kF32;
    std::vector<std::uint64_t> shape;
  };
  using Node = std::variant<Source, Select, Concatenate, Stack, Reshape, Transpose, Cast, View>;

  // Builders (the only way to make a recipe; children are shared, never mutated).
  [[nodiscard]] static DerivedWeightRecipe source(std::string key,
                                                  TensorSelection selection = FullSelection{});
  [[nodiscard]] static DerivedWeightRecipe select(DerivedWeightRecipe input,
                                                  TensorSelection selection);
  [[nodiscard]] static DerivedWeightRecipe concatenate(std::size_t axis,
                                                       std::vector<DerivedWeightRecipe> inputs);
  [[nodiscard]] static DerivedWeightRecipe stack(std::size_t axis,
                                                 std::vector<DerivedWeightRecipe> inputs);
  [[nodiscard]] static DerivedWeightRecipe reshape(DerivedWeightRecipe input,
                                                   std::vector<std::uint64_t> shape);
  [[nodiscard]] static DerivedWeightRecipe transpose(DerivedWeightRecipe input,
                                                     std::vector<std::size_t> axes);
  [[nodiscard]] static DerivedWeightRecipe cast(DerivedWeightRecipe input, DType dtype);
  [[nodiscard]] static DerivedWeightRecipe view(DerivedWeightRecipe input, DType dtype,
                                                std::vector<std::uint64_t> shape);

  [[nodiscard]] const Node& node() const noexcept { return node_; }
  // "source", "select", "concatenate", "stack", "reshape", "transpose", "cast", "view".
  [[nodiscard]] std::string_view kind_name() const noexcept;

  // Shape, dtype and byte length of the result, validating every node against `catalog` (metadata
  // only; no payload is read). Errors name the node path and, where one is involved, the key.
  [[nodiscard]] Result<RecipeMetadata, RecipeError> infer(const TensorCatalog& catalog) const;
  // Checkpoint keys the recipe reads, in first-use order, each once.
  [[nodiscard]] std::vector<std::string> source_keys() const;

 private:
  explicit DerivedWeightRecipe(Node node) : node_(std::move(node)) {}
  Node node_;
};

}  // namespace eredu::checkpoint
