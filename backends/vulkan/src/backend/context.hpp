#pragma once
// VulkanContext: what a VulkanBackend shares between its (const) operators and its sessions --
// the device, its resolved pipelines and the one open recording the operators append to -- plus
// per-recording tables (token positions, rotary cos/sin) that every layer of one forward pass
// reuses.

#include <cstdint>
#include <map>
#include <memory>
#include <tuple>

#include "eredu/backends/vulkan/device.hpp"
#include "eredu/core/neural_specs.hpp"
#include "pipelines.hpp"

namespace eredu::vulkan {

class VulkanContext {
 public:
  // Resolves the operators' pipelines on `device` (see pipelines.hpp).
  [[nodiscard]] static Result<std::shared_ptr<VulkanContext>> create(
      std::shared_ptr<Device> device);
  VulkanContext(std::shared_ptr<Device> device, VulkanPipelines pipelines)
      : device_(std::move(device)), pipelines_(pipelines) {}

  [[nodiscard]] Device& device() const noexcept { return *device_; }
  [[nodiscard]] VulkanPipelines& pipelines() noexcept { return pipelines_; }
  [[nodiscard]] const std::shared_ptr<Device>& device_ptr() const noexcept { return device_; }

  // The open recording, opened on first use.
  Result<Recorder*> recorder();
  // Submits the open recording (an empty Completion when none is open).
  Result<Completion> flush();
  // Drops the open recording unsubmitted.
  void abandon() noexcept;
  [[nodiscard]] std::size_t recorded_dispatches() const noexcept {
    return open_ ? open_->dispatches() : 0;
  }

  // Int32 positions first..first+n-1, uploaded once per recording.
  Result<BufferPtr> positions(std::uint32_t first, std::uint32_t n);
  // The [n][rotated_dims/2] cos/sin table of those positions (angles in float64 on the host, as
  // the CPU reference computes them), each pair's angle divided by factors[i] when `factors` is
  // given (rotated_dims / 2 values: a checkpoint's rotary frequency factors); uploaded once per
  // recording.
  Result<BufferPtr> rotary_table(std::uint32_t first, std::uint32_t n, const RotarySpec& spec,
                                 const float* factors = nullptr);

 private:
  void clear_tables() noexcept;
  std::shared_ptr<Device> device_;
  VulkanPipelines pipelines_;
  std::unique_ptr<Recorder> open_;
  std::map<std::pair<std::uint32_t, std::uint32_t>, BufferPtr> positions_;
  std::map<std::tuple<std::uint32_t, std::uint32_t, std::uint32_t, float, float, const float*>,
           BufferPtr>
      rotary_;
};

}  // namespace eredu::vulkan
