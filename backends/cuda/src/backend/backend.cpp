// CudaBackend: construction on a selected device, flush / read, and device reports.
#include <string>

#include "eredu/backends/cuda/cuda_backend.hpp"
#include "eredu/backends/cuda/device.hpp"
#include "stream.hpp"

namespace eredu::cuda {
namespace {

bool all_digits(const std::string& s) {
  if (s.empty() || s.size() > 6) return false;
  for (char c : s) {
    if (c < '0' || c > '9') return false;
  }
  return true;
}

// options.device -> a device ordinal (see CudaBackendOptions).
Result<int> select_device(const std::vector<DeviceInfo>& devices, const std::string& wanted) {
  if (wanted.empty()) return devices.front().index;
  std::string names;
  for (const DeviceInfo& d : devices) {
    if (all_digits(wanted) ? std::to_string(d.index) == wanted
                           : d.name.find(wanted) != std::string::npos) {
      return d.index;
    }
    names += (names.empty() ? "" : ", ") + std::to_string(d.index) + ": " + d.name;
  }
  return fail(Error(ErrorCode::kNotFound,
                    "no CUDA device matches '" + wanted + "' (devices: " + names + ")")
                  .with_subject("device"));
}

}  // namespace

Result<int> select_device(const CudaBackendOptions& options) {
  // Names and ordinals only: querying free memory would open a context on every GPU.
  EREDU_TRY(std::vector<DeviceInfo> devices, list_devices(false));
  return select_device(devices, options.device);
}

Result<CudaBackend> CudaBackend::create(const CudaBackendOptions& options) {
  EREDU_TRY(int index, select_device(options));
  EREDU_TRY(std::shared_ptr<CudaStream> stream, CudaStream::create(index, options.decode_graphs));
  return CudaBackend(std::move(stream));
}

int CudaBackend::device_index() const noexcept {
  return stream_->device();
}

DecodeGraphStats CudaBackend::decode_graph_stats() const noexcept {
  return stream_->graph_stats();
}

Result<CudaCompletion> CudaBackend::flush() const {
  EREDU_TRY(StreamEventPtr event, stream_->record());
  return CudaCompletion(std::move(event));
}

Result<std::vector<float>> CudaBackend::read(const tensor& t) const {
  std::vector<float> out;
  try {
    out.resize(t.rows * t.cols);
  } catch (const std::bad_alloc&) {
    return fail(ErrorCode::kCapacityExhausted, "cuda read: out of host memory");
  }
  if (out.empty()) {
    EREDU_TRY_VOID(stream_->synchronize());
    return out;
  }
  if (t.buffer == nullptr || t.buffer->size() < out.size() * sizeof(float)) {
    return fail(ErrorCode::kInvalidArgument, "cuda read: tensor has no device buffer of its size");
  }
  EREDU_TRY_VOID(stream_->download(std::as_writable_bytes(std::span<float>(out)), t.data()));
  return out;
}

BackendDescriptor CudaBackend::descriptor() const {
  return BackendDescriptor{"cuda", "1"};
}

Result<std::vector<DeviceReport>> CudaBackend::devices() const {
  return discover_device_reports();
}

Result<std::vector<DeviceReport>> discover_device_reports() {
  EREDU_TRY(std::vector<DeviceInfo> devices, list_devices());
  std::vector<DeviceReport> reports;
  for (const DeviceInfo& d : devices) {
    DeviceReport report;
    report.descriptor.id = "cuda:" + std::to_string(d.index);
    report.descriptor.name = d.name + " (compute " + std::to_string(d.compute_capability_major) +
                             "." + std::to_string(d.compute_capability_minor) + "; " +
                             std::to_string(d.multiprocessors) + " SMs)";
    report.descriptor.family = "gpu";
    report.descriptor.memory_bytes = d.total_memory_bytes;
    if (d.free_memory_bytes) report.descriptor.free_memory_bytes = *d.free_memory_bytes;
    // Events complete exactly; the kernels need dp4a (compute capability 6.1 and up).
    report.capabilities.exact_completion =
        d.compute_capability_major > 6 ||
        (d.compute_capability_major == 6 && d.compute_capability_minor >= 1);
    reports.push_back(std::move(report));
  }
  return reports;
}

}  // namespace eredu::cuda
