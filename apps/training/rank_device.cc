#include "rank_device.h"

#include <torch/cuda.h>

#include "baton/error.h"
#include "local_stages.h"

namespace baton_app {

c10::Device rank_device(const WorldSettings& settings, const WorldInfo& world) {
  const baton::Setting<DeviceKind>& setting = settings.device;
  if (setting.value == DeviceKind::kCpu) return c10::Device(c10::kCPU);
  // config check refuses cuda for a LibTorch without it; a machine without a GPU, or with
  // fewer than its ranks, is found here.
  const std::size_t gpus = torch::cuda::device_count();
  if (static_cast<std::size_t>(world.local_rank) >= gpus) {
    throw baton::ConfigError(
        setting.where() + ": world.device: cuda puts rank " + std::to_string(world.rank) +
        " (local rank " + std::to_string(world.local_rank) + " of " +
        std::to_string(world.local_world_size) + " on its machine) on GPU " +
        std::to_string(world.local_rank) + ", but this machine has " + std::to_string(gpus) +
        (gpus == 1 ? " GPU" : " GPUs") + " visible (CUDA_VISIBLE_DEVICES); start at most " +
        std::to_string(gpus) + " ranks on it, or use world.device: cpu");
  }
  return c10::Device(c10::kCUDA, static_cast<c10::DeviceIndex>(world.local_rank));
}

void place_on_device(baton::UnitChain& chain, const LocalStages& local, c10::Device device) {
  if (device.is_cpu()) return;
  for (const auto& stage : local.stages) {
    const int s = stage->index();
    for (int unit = local.bounds.at(static_cast<std::size_t>(s));
         unit < local.bounds.at(static_cast<std::size_t>(s) + 1); ++unit) {
      chain.move_unit(unit, device);
    }
  }
}

}  // namespace baton_app
