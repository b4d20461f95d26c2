// CudaBackend's decode graphs (decode_graph.hpp): the dry run that plans a pass, the capture of a
// decode step and its replay.
#include "decode_graph.hpp"

#include <algorithm>
#include <string>

#include "../cuda_error.hpp"
#include "eredu/backends/cuda/cuda_backend.hpp"
#include "eredu/core/log.hpp"
#include "stream.hpp"

namespace eredu::cuda {

DecodeGraph::~DecodeGraph() {
  if (exec != nullptr && cudaGraphExecDestroy(exec) != cudaSuccess) (void)cudaGetLastError();
}

bool CudaBackend::decode_graphs_enabled(const kv_cache& cache) const noexcept {
  return stream_->graphs_enabled() && cache.storage != nullptr && !cache.storage->graph_failed;
}

void CudaBackend::begin_dry_run() const noexcept {
  stream_->forward().reset(ForwardMode::kDryRun);
}

Result<CudaBackend::DecodePlan> CudaBackend::end_dry_run(Result<tensor>&& dry,
                                                         const kv_cache& cache) const {
  ForwardState& pass = stream_->forward();
  const std::uint64_t signature = pass.signature;
  const bool one_token = pass.embeddings == 1 && pass.token_ids.size() == 1;
  const std::uint32_t token = one_token ? pass.token_ids.front() : 0;
  pass.reset(ForwardMode::kEager);
  if (!dry) return fail(std::move(dry).error());  // the eager pass would fail the same way
  if (!one_token || dry->rows != 1 || dry->cols == 0) return DecodePlan::kEager;
  pass.decode_token = token;
  pass.decode_vocab = dry->cols;
  const DecodeGraph* graph = cache.storage->graph.get();
  if (graph != nullptr && graph->signature == signature && graph->vocab == dry->cols) {
    return DecodePlan::kReplay;
  }
  return DecodePlan::kCapture;
}

Result<bool> CudaBackend::begin_capture(kv_cache& cache) const {
  ForwardState& pass = stream_->forward();
  const std::size_t vocab = pass.decode_vocab;
  std::shared_ptr<DecodeGraph> graph;
  try {
    graph = std::make_shared<DecodeGraph>();
  } catch (const std::bad_alloc&) {
    return fail(ErrorCode::kCapacityExhausted, "cuda: out of host memory for a decode graph");
  }
  graph->vocab = vocab;
  // Allocated outside the capture: they outlive every launch.
  EREDU_TRY(graph->step, stream_->allocate(2 * sizeof(std::uint32_t)));
  EREDU_TRY(graph->logits, stream_->allocate(vocab * sizeof(float)));
  cache.storage->graph = std::move(graph);  // replaces an older one (its pass changed)
  EREDU_TRY_VOID(stream_->enter());
  if (cudaError_t e = cudaStreamBeginCapture(stream_->handle(), cudaStreamCaptureModeThreadLocal);
      e != cudaSuccess) {
    const Error failure = cuda_error("cudaStreamBeginCapture", e);  // clears the pending error
    cache.storage->graph.reset();
    cache.storage->graph_failed = true;
    ++stream_->graph_stats().failed_captures;
    log::warn("cuda: decode steps of this session run without graphs: {}", failure.what());
    return false;
  }
  pass.reset(ForwardMode::kCapture);
  pass.device_step = static_cast<const std::uint32_t*>(cache.storage->graph->step->data());
  pass.length_before_capture = cache.storage->length;
  return true;
}

void CudaBackend::abort_pass(kv_cache& cache) const noexcept {
  ForwardState& pass = stream_->forward();
  if (pass.capturing()) {
    cudaGraph_t recorded = nullptr;
    (void)cudaStreamEndCapture(stream_->handle(), &recorded);
    if (recorded != nullptr) (void)cudaGraphDestroy(recorded);
    (void)cudaGetLastError();
    if (cache.storage != nullptr) {
      cache.storage->length = pass.length_before_capture;
      cache.storage->graph.reset();
      cache.storage->graph_failed = true;
    }
    ++stream_->graph_stats().failed_captures;
  }
  pass.reset(ForwardMode::kEager);
}

Result<bool> CudaBackend::end_capture(Result<tensor>&& captured, kv_cache& cache) const {
  ForwardState& pass = stream_->forward();
  if (!pass.capturing()) return false;  // begin_capture could not start one
  const std::uint64_t signature = pass.signature;
  cache.storage->length = pass.length_before_capture;  // nothing ran
  pass.reset(ForwardMode::kEager);
  DecodeGraph& graph = *cache.storage->graph;
  std::string failure;
  if (!captured) {
    failure = captured.error().what();
  } else if (captured->rows != 1 || captured->cols != graph.vocab || captured->buffer == nullptr) {
    failure = "the captured pass's logits are not one row of the vocabulary";
  } else if (cudaError_t e = cudaMemcpyAsync(graph.logits->data(), captured->data(),
                                             graph.vocab * sizeof(float), cudaMemcpyDeviceToDevice,
                                             stream_->handle());
             e != cudaSuccess) {
    failure = cuda_error("cudaMemcpyAsync(captured logits)", e).what();
  }
  // The pass's own logits buffer is freed inside the graph: nothing of it outlives a launch.
  if (captured) captured->buffer.reset();
  cudaGraph_t recorded = nullptr;
  if (cudaError_t e = cudaStreamEndCapture(stream_->handle(), &recorded);
      e != cudaSuccess && failure.empty()) {
    failure = cuda_error("cudaStreamEndCapture", e).what();
  }
  cudaGraphExec_t exec = nullptr;
  if (failure.empty() && recorded != nullptr) {
    if (cudaError_t e = cudaGraphInstantiate(&exec, recorded, 0); e != cudaSuccess) {
      failure = cuda_error("cudaGraphInstantiate", e).what();
      exec = nullptr;
    }
  }
  if (recorded != nullptr) (void)cudaGraphDestroy(recorded);
  if (!failure.empty() || exec == nullptr) {
    (void)cudaGetLastError();  // a capture error is not the next call's
    cache.storage->graph.reset();
    cache.storage->graph_failed = true;
    ++stream_->graph_stats().failed_captures;
    log::warn("cuda: decode steps of this session run without graphs: {}",
              failure.empty() ? std::string("no graph was captured") : failure);
    return false;
  }
  graph.exec = exec;
  graph.signature = signature;
  ++stream_->graph_stats().captures;
  return true;
}

Result<std::optional<Submission<CudaTensor, CudaCompletion>>> CudaBackend::replay_decode(
    kv_cache& cache, std::uint32_t first_position) const {
  if (first_position > cache.storage->length) {
    return fail(ErrorCode::kInvalidArgument,
                "cuda: decode at position " + std::to_string(first_position) +
                    " is past the KV cache's length " + std::to_string(cache.storage->length));
  }
  std::shared_ptr<DecodeGraph> graph = cache.storage->graph;
  const ForwardState& pass = stream_->forward();
  const std::uint32_t step[2] = {first_position, pass.decode_token};
  // Pageable source: staged by the runtime before the call returns, ordered before the launch.
  if (auto uploaded = stream_->upload(graph->step->data(), std::as_bytes(std::span(step)));
      !uploaded) {
    return fail(uploaded.error());
  }
  if (cudaError_t e = cudaGraphLaunch(graph->exec, stream_->handle()); e != cudaSuccess) {
    // E.g. out of memory mapping the graph's memory: nothing ran; drop the graph, run eagerly.
    const Error failure = cuda_error("cudaGraphLaunch(decode step)", e);
    cache.storage->graph.reset();
    cache.storage->graph_failed = true;
    ++stream_->graph_stats().failed_captures;
    log::warn("cuda: decode steps of this session run without graphs: {}", failure.what());
    return std::optional<Submission<CudaTensor, CudaCompletion>>();
  }
  auto copied = [&]() -> Result<Submission<CudaTensor, CudaCompletion>> {
    const std::size_t bytes = graph->vocab * sizeof(float);
    CudaTensor logits;
    logits.rows = 1;
    logits.cols = graph->vocab;
    EREDU_TRY(logits.host, stream_->pinned(bytes));
    if (cudaError_t e = cudaMemcpyAsync(logits.host->floats(), graph->logits->data(), bytes,
                                        cudaMemcpyDeviceToHost, stream_->handle());
        e != cudaSuccess) {
      return fail(cuda_error("cudaMemcpyAsync(logits to host)", e));
    }
    EREDU_TRY(logits.ready, stream_->record());
    StreamEventPtr done = logits.ready;
    return Submission<CudaTensor, CudaCompletion>{std::move(logits),
                                                  CudaCompletion(std::move(done))};
  }();
  if (!copied) {
    abandon_forward(cache, first_position);
    return fail(copied.error());
  }
  ++stream_->graph_stats().replays;
  // The step wrote this position's keys and values.
  cache.storage->length = std::max<std::size_t>(cache.storage->length, first_position + 1);
  return std::optional<Submission<CudaTensor, CudaCompletion>>(std::move(*copied));
}

}  // namespace eredu::cuda
