#include "eredu/checkpoint/recipe.hpp"

#include <algorithm>
#include <type_traits>

namespace eredu::checkpoint {
namespace {

using Recipe = DerivedWeightRecipe;
using InferResult = Result<RecipeMetadata, RecipeError>;

ErrorCode code_for(RecipeErrorKind kind) {
  switch (kind) {
    case RecipeErrorKind::kUnknownSource:
      return ErrorCode::kNotFound;
    case RecipeErrorKind::kOverflow:
      return ErrorCode::kOverflow;
    case RecipeErrorKind::kUnsupportedDtype:
      return ErrorCode::kUnsupported;
    default:
      return ErrorCode::kInvalidArgument;
  }
}

bool is_packed(DType dtype) {
  return dtype_info(dtype).block_elements != 1;
}

// Why `selection` would split blocks of a packed input, or "" (bounds are checked elsewhere).
std::string block_misalignment(const RecipeMetadata& input, const TensorSelection& selection) {
  const DTypeInfo& info = dtype_info(input.dtype);
  const std::uint64_t block = info.block_elements;
  if (block == 1) return {};
  const std::string suffix =
      " is not aligned to the " + std::string(info.name) + " block of " + std::to_string(block);
  if (const auto* range = std::get_if<RangeSelection>(&selection)) {
    if (range->axis + 1 == input.shape.size() &&
        (range->start % block != 0 || range->end % block != 0)) {
      return "innermost range " + std::to_string(range->start) + ".." + std::to_string(range->end) +
             suffix;
    }
  } else if (const auto* run = std::get_if<ContiguousSelection>(&selection)) {
    if (run->offset_elements % block != 0) {
      return "contiguous run start " + std::to_string(run->offset_elements) + suffix;
    }
    if (!run->shape.empty() && run->shape.back() % block != 0) {
      return "contiguous run innermost dimension " + std::to_string(run->shape.back()) + suffix;
    }
  }
  return {};
}

std::string dtype_name(DType dtype) {
  return std::string(to_string(dtype));
}

// Validates one recipe tree against a catalog, carrying the path of the node being checked.
class Inferrer {
 public:
  explicit Inferrer(const TensorCatalog& catalog) : catalog_(catalog) {}

  InferResult run(const Recipe& recipe, const std::string& path) {
    InferResult out =
        std::visit([&](const auto& node) { return infer_node(recipe, node, path); }, recipe.node());
    if (!out) return out;
    if (out->byte_length == 0 ||
        out->shape.end() != std::find(out->shape.begin(), out->shape.end(), 0U)) {
      return failure(RecipeErrorKind::kZeroSizedOutput, recipe, path,
                     "output shape " + shape_to_string(out->shape) + " has no elements");
    }
    return out;
  }

 private:
  // An error for node `recipe` at `path`, naming the key (a Source's, else the first key the node
  // reads) and listing the keys the node reads.
  Unexpected<RecipeError> failure(RecipeErrorKind kind, const Recipe& recipe,
                                  const std::string& path, const std::string& detail) {
    const std::vector<std::string> keys = recipe.source_keys();
    std::string message = "recipe node " + path;
    if (!keys.empty()) {
      message += keys.size() == 1 ? " (key '" : " (keys '";
      const std::size_t shown = std::min<std::size_t>(keys.size(), 4);
      for (std::size_t i = 0; i < shown; ++i) {
        if (i != 0) message += "', '";
        message += keys[i];
      }
      message += keys.size() > shown ? "', ...)" : "')";
    }
    message += ": ";
    message += to_string(kind);
    message += ": ";
    message += detail;
    const std::string key = keys.empty() ? std::string() : keys.front();
    Error error(code_for(kind), std::move(message));
    // with_subject keeps an empty subject when there is no key.
    return Unexpected<RecipeError>(
        RecipeError(kind, path, key, Error(std::move(error).with_subject(key))));
  }

  // Maps an eredu Error from shared helpers (selection planning, byte sizes) to a recipe error.
  Unexpected<RecipeError> from_error(RecipeErrorKind kind, const Error& error, const Recipe& recipe,
                                     const std::string& path) {
    const RecipeErrorKind chosen =
        error.code() == ErrorCode::kOverflow ? RecipeErrorKind::kOverflow : kind;
    return failure(chosen, recipe, path, error.message());
  }

  InferResult infer_child(const Recipe::Ptr& child, const Recipe& parent, const std::string& path,
                          const std::string& child_path_prefix) {
    if (!child) return failure(RecipeErrorKind::kEmptyInputs, parent, path, "missing input");
    return run(*child, child_path_prefix + std::string(child->kind_name()));
  }

  InferResult with_selection(const Recipe& recipe, const std::string& path,
                             const RecipeMetadata& input, const TensorSelection& selection) {
    if (const std::string why = block_misalignment(input, selection); !why.empty()) {
      return failure(RecipeErrorKind::kBlockMisaligned, recipe, path, why);
    }
    auto layout = plan_selection(input.shape, input.dtype, selection);
    if (!layout)
      return from_error(RecipeErrorKind::kInvalidSelection, layout.error(), recipe, path);
    return RecipeMetadata{std::move(layout->output_shape), input.dtype, layout->output_bytes};
  }

  InferResult infer_node(const Recipe& recipe, const Recipe::Source& node,
                         const std::string& path) {
    if (node.key.empty()) {
      return failure(RecipeErrorKind::kEmptySourceKey, recipe, path, "the source key is empty");
    }
    const TensorMetadata* entry = catalog_.find(node.key);
    if (entry == nullptr) {
      return failure(RecipeErrorKind::kUnknownSource, recipe, path,
                     "no tensor '" + node.key + "' in the checkpoint catalog");
    }
    const RecipeMetadata whole{entry->shape, entry->dtype, entry->byte_length};
    return with_selection(recipe, path, whole, node.selection);
  }

  InferResult infer_node(const Recipe& recipe, const Recipe::Select& node,
                         const std::string& path) {
    InferResult input = infer_child(node.input, recipe, path, path + "/");
    if (!input) return input;
    return with_selection(recipe, path, *input, node.selection);
  }

  // Infers every input of a join, checking they agree on dtype.
  Result<std::vector<RecipeMetadata>, RecipeError> infer_inputs(const Recipe& recipe,
                                                                const std::vector<Recipe>& inputs,
                                                                const std::string& path) {
    if (inputs.empty()) {
      return failure(RecipeErrorKind::kEmptyInputs, recipe, path, "no inputs to join");
    }
    std::vector<RecipeMetadata> out;
    for (std::size_t i = 0; i < inputs.size(); ++i) {
      InferResult input =
          run(inputs[i], path + "/" + std::to_string(i) + "/" + std::string(inputs[i].kind_name()));
      if (!input) return Unexpected<RecipeError>(std::move(input).error());
      if (!out.empty() && input->dtype != out.front().dtype) {
        return failure(RecipeErrorKind::kDtypeMismatch, recipe, path,
                       "input " + std::to_string(i) + " is " + dtype_name(input->dtype) +
                           " but input 0 is " + dtype_name(out.front().dtype));
      }
      out.push_back(std::move(input).value());
    }
    return out;
  }

  InferResult infer_node(const Recipe& recipe, const Recipe::Concatenate& node,
                         const std::string& path) {
    auto inputs = infer_inputs(recipe, node.inputs, path);
    if (!inputs) return Unexpected<RecipeError>(std::move(inputs).error());
    const RecipeMetadata& first = inputs->front();
    const std::size_t rank = first.shape.size();
    if (node.axis >= rank) {
      return failure(RecipeErrorKind::kInvalidJoinAxis, recipe, path,
                     "axis " + std::to_string(node.axis) + " is out of range for rank " +
                         std::to_string(rank));
    }
    std::vector<std::uint64_t> shape = first.shape;
    shape[node.axis] = 0;
    for (std::size_t i = 0; i < inputs->size(); ++i) {
      const RecipeMetadata& input = (*inputs)[i];
      bool same = input.shape.size() == rank;
      for (std::size_t d = 0; same && d < rank; ++d) {
        same = d == node.axis || input.shape[d] == first.shape[d];
      }
      if (!same) {
        return failure(RecipeErrorKind::kShapeMismatch, recipe, path,
                       "input " + std::to_string(i) + " has shape " + shape_to_string(input.shape) +
                           ", which differs from input 0's " + shape_to_string(first.shape) +
                           " outside axis " + std::to_string(node.axis));
      }
      if (input.shape[node.axis] > UINT64_MAX - shape[node.axis]) {
        return failure(RecipeErrorKind::kOverflow, recipe, path,
                       "the joined dimension overflows 64 bits");
      }
      shape[node.axis] += input.shape[node.axis];
    }
    return finish(recipe, path, std::move(shape), first.dtype);
  }

  InferResult infer_node(const Recipe& recipe, const Recipe::Stack& node, const std::string& path) {
    auto inputs = infer_inputs(recipe, node.inputs, path);
    if (!inputs) return Unexpected<RecipeError>(std::move(inputs).error());
    const RecipeMetadata& first = inputs->front();
    const std::size_t rank = first.shape.size();
    if (node.axis > rank) {
      return failure(RecipeErrorKind::kInvalidJoinAxis, recipe, path,
                     "new axis " + std::to_string(node.axis) +
                         " is out of range for inputs of rank " + std::to_string(rank) +
                         " (at most " + std::to_string(rank) + ")");
    }
    for (std::size_t i = 1; i < inputs->size(); ++i) {
      if ((*inputs)[i].shape != first.shape) {
        return failure(RecipeErrorKind::kShapeMismatch, recipe, path,
                       "input " + std::to_string(i) + " has shape " +
                           shape_to_string((*inputs)[i].shape) + " but input 0 has " +
                           shape_to_string(first.shape) + " (stacked inputs must be equal)");
      }
    }
    if (node.axis == rank && is_packed(first.dtype)) {
      return failure(RecipeErrorKind::kBlockMisaligned, recipe, path,
                     "stacking " + dtype_name(first.dtype) +
                         " inputs on a new innermost axis would interleave elements of different "
                         "blocks");
    }
    std::vector<std::uint64_t> shape = first.shape;
    shape.insert(shape.begin() + static_cast<std::ptrdiff_t>(node.axis), inputs->size());
    return finish(recipe, path, std::move(shape), first.dtype);
  }

  InferResult infer_node(const Recipe& recipe, const Recipe::Reshape& node,
                         const std::string& path) {
    InferResult input = infer_child(node.input, recipe, path, path + "/");
    if (!input) return input;
    auto from = checked_element_count(input->shape);
    auto to = checked_element_count(node.shape);
    if (!from) return from_error(RecipeErrorKind::kOverflow, from.error(), recipe, path);
    if (!to) return from_error(RecipeErrorKind::kOverflow, to.error(), recipe, path);
    if (*from != *to) {
      return failure(RecipeErrorKind::kElementCountMismatch, recipe, path,
                     "cannot reshape " + shape_to_string(input->shape) + " (" +
                         std::to_string(*from) + " elements) to " + shape_to_string(node.shape) +
                         " (" + std::to_string(*to) + " elements)");
    }
    return finish(recipe, path, node.shape, input->dtype);
  }

  InferResult infer_node(const Recipe& recipe, const Recipe::Transpose& node,
                         const std::string& path) {
    InferResult input = infer_child(node.input, recipe, path, path + "/");
    if (!input) return input;
    const std::size_t rank = input->shape.size();
    std::vector<bool> seen(rank, false);
    bool valid = node.axes.size() == rank;
    for (std::size_t i = 0; valid && i < rank; ++i) {
      valid = node.axes[i] < rank && !seen[node.axes[i]];
      if (valid) seen[node.axes[i]] = true;
    }
    if (!valid) {
      std::string axes = "[";
      for (std::size_t i = 0; i < node.axes.size(); ++i) {
        axes += (i != 0 ? ", " : "") + std::to_string(node.axes[i]);
      }
      axes += "]";
      return failure(RecipeErrorKind::kInvalidPermutation, recipe, path,
                     "axes " + axes + " are not a permutation of the " + std::to_string(rank) +
                         " axes of shape " + shape_to_string(input->shape));
    }
    if (rank > 0 && is_packed(input->dtype) && node.axes.back() != rank - 1) {
      return failure(RecipeErrorKind::kBlockMisaligned, recipe, path,
                     "transposing the innermost axis of " + dtype_name(input->dtype) +
                         " data would split its blocks");
    }
    std::vector<std::uint64_t> shape(rank);
    for (std::size_t i = 0; i < rank; ++i)
      shape[i] = input->shape[node.axes[i]];
    return finish(recipe, path, std::move(shape), input->dtype);
  }

  InferResult infer_node(const Recipe& recipe, const Recipe::Cast& node, const std::string& path) {
    InferResult input = infer_child(node.input, recipe, path, path + "/");
    if (!input) return input;
    if (is_packed(input->dtype) || is_packed(node.dtype)) {
      return failure(RecipeErrorKind::kUnsupportedDtype, recipe, path,
                     "cannot cast " + dtype_name(input->dtype) + " to " + dtype_name(node.dtype) +
                         ": casts are between plain (non-block) dtypes only");
    }
    return finish(recipe, path, input->shape, node.dtype);
  }

  InferResult infer_node(const Recipe& recipe, const Recipe::View& node, const std::string& path) {
    InferResult input = infer_child(node.input, recipe, path, path + "/");
    if (!input) return input;
    InferResult out = finish(recipe, path, node.shape, node.dtype);
    if (!out) return out;
    if (out->byte_length != input->byte_length) {
      return failure(RecipeErrorKind::kByteCountMismatch, recipe, path,
                     "viewing " + std::to_string(input->byte_length) + " bytes (" +
                         dtype_name(input->dtype) + " " + shape_to_string(input->shape) + ") as " +
                         dtype_name(node.dtype) + " " + shape_to_string(node.shape) + " needs " +
                         std::to_string(out->byte_length) + " bytes");
    }
    return out;
  }

  // The metadata of an output of `shape` in `dtype`, with its byte length checked.
  InferResult finish(const Recipe& recipe, const std::string& path,
                     std::vector<std::uint64_t> shape, DType dtype) {
    auto bytes = checked_byte_size(dtype, shape);
    if (!bytes) {
      return from_error(RecipeErrorKind::kBlockMisaligned, bytes.error(), recipe, path);
    }
    return RecipeMetadata{std::move(shape), dtype, *bytes};
  }

  const TensorCatalog& catalog_;
};

void collect_keys(const Recipe& recipe, std::vector<std::string>& out) {
  std::visit(
      [&](const auto& node) {
        using N = std::decay_t<decltype(node)>;
        if constexpr (std::is_same_v<N, Recipe::Source>) {
          if (std::find(out.begin(), out.end(), node.key) == out.end()) out.push_back(node.key);
        } else if constexpr (std::is_same_v<N, Recipe::Concatenate> ||
                             std::is_same_v<N, Recipe::Stack>) {
          for (const Recipe& input : node.inputs)
            collect_keys(input, out);
        } else {
          if (node.input) collect_keys(*node.input, out);
        }
      },
      recipe.node());
}

}  // namespace

std::string_view to_string(RecipeErrorKind kind) noexcept {
  switch (kind) {
    case RecipeErrorKind::kEmptySourceKey:
      return "empty source key";
    case RecipeErrorKind::kUnknownSource:
      return "unknown source tensor";
    case RecipeErrorKind::kInvalidSelection:
      return "invalid selection";
    case RecipeErrorKind::kEmptyInputs:
      return "empty inputs";
    case RecipeErrorKind::kInvalidJoinAxis:
      return "invalid join axis";
    case RecipeErrorKind::kDtypeMismatch:
      return "dtype mismatch";
    case RecipeErrorKind::kShapeMismatch:
      return "shape mismatch";
    case RecipeErrorKind::kElementCountMismatch:
      return "element count mismatch";
    case RecipeErrorKind::kByteCountMismatch:
      return "byte count mismatch";
    case RecipeErrorKind::kInvalidPermutation:
      return "invalid permutation";
    case RecipeErrorKind::kBlockMisaligned:
      return "block misaligned";
    case RecipeErrorKind::kUnsupportedDtype:
      return "unsupported dtype";
    case RecipeErrorKind::kZeroSizedOutput:
      return "zero-sized output";
    case RecipeErrorKind::kOverflow:
      return "arithmetic overflow";
  }
  return "recipe error";
}

DerivedWeightRecipe DerivedWeightRecipe::source(std::string key, TensorSelection selection) {
  return DerivedWeightRecipe(Source{std::move(key), std::move(selection)});
}
DerivedWeightRecipe DerivedWeightRecipe::select(DerivedWeightRecipe input,
                                                TensorSelection selection) {
  return DerivedWeightRecipe(
      Select{std::make_shared<const DerivedWeightRecipe>(std::move(input)), std::move(selection)});
}
DerivedWeightRecipe DerivedWeightRecipe::concatenate(std::size_t axis,
                                                     std::vector<DerivedWeightRecipe> inputs) {
  return DerivedWeightRecipe(Concatenate{axis, std::move(inputs)});
}
DerivedWeightRecipe DerivedWeightRecipe::stack(std::size_t axis,
                                               std::vector<DerivedWeightRecipe> inputs) {
  return DerivedWeightRecipe(Stack{axis, std::move(inputs)});
}
DerivedWeightRecipe DerivedWeightRecipe::reshape(DerivedWeightRecipe input,
                                                 std::vector<std::uint64_t> shape) {
  return DerivedWeightRecipe(
      Reshape{std::make_shared<const DerivedWeightRecipe>(std::move(input)), std::move(shape)});
}
DerivedWeightRecipe DerivedWeightRecipe::transpose(DerivedWeightRecipe input,
                                                   std::vector<std::size_t> axes) {
  return DerivedWeightRecipe(
      Transpose{std::make_shared<const DerivedWeightRecipe>(std::move(input)), std::move(axes)});
}
DerivedWeightRecipe DerivedWeightRecipe::cast(DerivedWeightRecipe input, DType dtype) {
  return DerivedWeightRecipe(
      Cast{std::make_shared<const DerivedWeightRecipe>(std::move(input)), dtype});
}
DerivedWeightRecipe DerivedWeightRecipe::view(DerivedWeightRecipe input, DType dtype,
                                              std::vector<std::uint64_t> shape) {
  return DerivedWeightRecipe(
      View{std::make_shared<const DerivedWeightRecipe>(std::move(input)), dtype, std::move(shape)});
}

std::string_view DerivedWeightRecipe::kind_name() const noexcept {
  static constexpr std::string_view kNames[] = {"source",  "select",    "concatenate", "stack",
                                                "reshape", "transpose", "cast",        "view"};
  return kNames[node_.index()];
}

Result<RecipeMetadata, RecipeError> DerivedWeightRecipe::infer(const TensorCatalog& catalog) const {
  try {
    return Inferrer(catalog).run(*this, std::string(kind_name()));
  } catch (const std::bad_alloc&) {
    return Unexpected<RecipeError>(
        RecipeError(RecipeErrorKind::kOverflow, std::string(kind_name()), "",
                    Error(ErrorCode::kLimitExceeded, "out of memory inferring the recipe")));
  }
}

std::vector<std::string> DerivedWeightRecipe::source_keys() const {
  std::vector<std::string> out;
  collect_keys(*this, out);
  return out;
}

}  // namespace eredu::checkpoint
