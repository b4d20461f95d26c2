#include "products.hpp"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <utility>
#include <variant>

#include "bandwidth.hpp"
#include "eredu/backends/cpu/cpu_backend.hpp"
#include "eredu/backends/cpu/kernels.hpp"
#include "eredu/backends/cpu/thread_pool.hpp"
#include "eredu/model/decoder/schema.hpp"
#include "eredu/runtime/load_model.hpp"

namespace eredu::bench {
namespace {

// The median of figure(round) over the rounds.
template <typename Figure>
double median_over(const std::vector<ProductsRound>& rounds, Figure figure) {
  std::vector<double> v;
  for (const ProductsRound& r : rounds)
    v.push_back(figure(r));
  return median_of(std::move(v));
}

// The weights a token multiplies: every bound matrix of the loaded model but the token embedding
// (a token reads one row of it), with the output projection also where it is tied to the
// embedding.
Result<std::vector<cpu::MatrixView>> token_matrices(
    const runtime::ModelRuntime<cpu::CpuBackend>& rt, const ArtifactInspection& inspection) {
  std::vector<std::string> names;
  for (const auto& t : inspection.tensors->entries()) {
    if (t.shape.size() == 2 && t.name != model::decoder::kTokenEmbd) names.push_back(t.name);
  }
  if (std::find(names.begin(), names.end(), model::decoder::kOutput) == names.end())
    names.emplace_back(model::decoder::kOutput);
  std::vector<cpu::MatrixView> views;
  for (const std::string& name : names) {
    const cpu::CpuWeight* w = std::visit(
        [&](const auto& m) -> const cpu::CpuWeight* {
          const auto* p = m.find_parameter(name);
          return p != nullptr ? &cpu::CpuBackend::parameter_weight(*p) : nullptr;
        },
        rt.session().model());
    if (w == nullptr || !w->bound() || w->shape.size() != 2) continue;  // e.g. a family's extra
    views.push_back(cpu::matrix_view(*w));
  }
  if (views.empty()) return fail(ErrorCode::kInvalidArgument, "the model has no matrices to time");
  return views;
}

}  // namespace

double ProductsResult::median_read() const {
  return median_over(rounds, [](const ProductsRound& r) { return r.read_gb_per_s; });
}

double ProductsResult::median_products() const {
  return median_over(rounds, [](const ProductsRound& r) { return r.products_gb_per_s; });
}

double ProductsResult::median_ratio() const {
  return median_over(rounds, [](const ProductsRound& r) {
    return r.read_gb_per_s > 0 ? r.products_gb_per_s / r.read_gb_per_s : 0.0;
  });
}

Result<ProductsResult> measure_decode_products(const ProductsOptions& options) {
  if (options.threads == 0) return fail(ErrorCode::kInvalidArgument, "--threads must be >= 1");
  if (options.rounds == 0 || options.min_passes == 0) {
    return fail(ErrorCode::kInvalidArgument, "--products needs at least one round and pass");
  }
  EREDU_TRY(ArtifactInspection inspection, runtime::inspect_artifact(options.model));
  EREDU_TRY(auto rt, runtime::load_model(cpu::CpuBackend(cpu::CpuBackendOptions{options.threads}),
                                         options.model, cpu::CpuLoadOptions{}));
  EREDU_TRY(std::vector<cpu::MatrixView> views, token_matrices(rt, inspection));

  ProductsResult result;
  result.file = options.model;
  result.threads = options.threads;
  result.matrices = views.size();
  std::size_t widest = 0;
  std::vector<std::vector<float>> outputs;
  for (const cpu::MatrixView& v : views) {
    result.matrix_bytes += v.rows * cpu::packed_row_bytes(v.dtype, v.cols);
    widest = std::max(widest, v.cols);
    outputs.emplace_back(v.rows);
  }
  result.passes_per_round = std::max<std::size_t>(
      options.min_passes,
      static_cast<std::size_t>((options.min_round_bytes + result.matrix_bytes - 1) /
                               result.matrix_bytes));
  std::vector<float> x(widest);
  for (std::size_t i = 0; i < x.size(); ++i)  // a fixed activation row of small values
    x[i] = static_cast<float>(static_cast<int>(i * 7919 % 201) - 100) * 1e-3F;

  cpu::ThreadPool pool(options.threads);
  EREDU_TRY(ReadTest read, ReadTest::create(options.read_bytes, pool));
  const cpu::KernelTable& kernels = cpu::kernels();
  auto pass = [&] {
    for (std::size_t i = 0; i < views.size(); ++i)
      kernels.matmul(views[i], x.data(), 1, outputs[i].data(), &pool);
  };
  pass();  // warm-up: first touch of the kernels' scratch
  for (std::size_t r = 0; r < options.rounds; ++r) {
    ProductsRound round;
    round.read_gb_per_s = read.pass(pool);
    const auto start = std::chrono::steady_clock::now();
    for (std::size_t p = 0; p < result.passes_per_round; ++p)
      pass();
    const double seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    round.products_gb_per_s = static_cast<double>(result.matrix_bytes) *
                              static_cast<double>(result.passes_per_round) / seconds / 1e9;
    if (!options.quiet) {
      std::fprintf(stderr, "eredu-bench: round %zu: read %.1f GB/s, products %.1f GB/s\n", r + 1,
                   round.read_gb_per_s, round.products_gb_per_s);
    }
    result.rounds.push_back(round);
  }
  return result;
}

}  // namespace eredu::bench
