// Totals per encoding and the validation verdict (see report.hpp).

#include <fmt/format.h>

#include <algorithm>
#include <map>

#include "format.hpp"
#include "report.hpp"

namespace eredu::inspect {
namespace {

// The readers have already proved that every range lies inside its file; this repeats the check
// on the summary itself so that the verdict states only what was verified here as well.
Result<void> check_ranges(const Report& report) {
  const auto& shards = report.container.shards;
  for (const TensorRow& tensor : report.tensors) {
    const auto where = [&](std::string message) {
      return Error(ErrorCode::kInvalidModel, std::move(message))
          .with_path(tensor.shard < shards.size() ? shards[tensor.shard].path
                                                  : report.container.path)
          .with_subject(tensor.name)
          .with_offset(tensor.offset);
    };
    if (tensor.shard >= shards.size()) {
      return fail(where("tensor refers to shard " + std::to_string(tensor.shard) + " of " +
                        std::to_string(shards.size())));
    }
    const ShardSummary& shard = shards[tensor.shard];
    if (tensor.offset < shard.data_offset || tensor.offset > shard.file_size ||
        tensor.bytes > shard.file_size - tensor.offset) {
      return fail(where(
          fmt::format("tensor data [{}, +{}) is outside the data section [{}, {}) of the file",
                      tensor.offset, tensor.bytes, shard.data_offset, shard.file_size)));
    }
  }
  return ok();
}

}  // namespace

Result<void> finish_report(Report& report) {
  EREDU_TRY_VOID(check_ranges(report));

  std::map<std::string, EncodingTotal> by_encoding;
  std::uint64_t total_bytes = 0;
  for (const TensorRow& tensor : report.tensors) {
    EncodingTotal& total = by_encoding[tensor.encoding];
    total.encoding = tensor.encoding;
    ++total.tensors;
    // Each tensor lies inside its file and tensors do not overlap, so sums of bytes are bounded
    // by the total size of the files and cannot overflow.
    total.bytes += tensor.bytes;
    total_bytes += tensor.bytes;
  }
  report.totals.clear();
  for (auto& [name, total] : by_encoding) {
    total.share = total_bytes == 0
                      ? 0.0
                      : static_cast<double>(total.bytes) / static_cast<double>(total_bytes);
    report.totals.push_back(total);
  }
  std::stable_sort(
      report.totals.begin(), report.totals.end(),
      [](const EncodingTotal& a, const EncodingTotal& b) { return a.bytes > b.bytes; });

  Verdict& verdict = report.verdict;
  verdict.tensor_count = report.tensors.size();
  verdict.tensor_bytes = total_bytes;
  const std::size_t files = report.container.shards.size();
  const std::string where = files == 1
                                ? "all ranges inside the file"
                                : fmt::format("all ranges inside their shards ({} files)", files);
  verdict.summary =
      report.tensors.empty()
          ? std::string("valid: 0 tensors, metadata only")
          : fmt::format("valid: {} tensor{}, {} of tensor data, {}", verdict.tensor_count,
                        verdict.tensor_count == 1 ? "" : "s", human_bytes(total_bytes), where);
  return ok();
}

}  // namespace eredu::inspect
