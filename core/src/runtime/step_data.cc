#include "step_data.h"

#include <ATen/ATen.h>

#include <memory>
#include <utility>
#include <vector>

#include "baton/runtime/microbatch.h"

namespace baton {

StepData on_device(StepData data, c10::Device device) {
  if (device.is_cpu()) return data;
  if (data.inputs) {
    data.inputs = [inputs = std::move(data.inputs), device](int mb) {
      std::vector<at::Tensor> moved;
      for (const auto& tensor : inputs(mb)) moved.push_back(tensor.to(device));
      return moved;
    };
  }
  if (data.targets) {
    data.targets = [targets = std::move(data.targets), device](int mb) {
      return targets(mb).to(device);
    };
  }
  return data;
}

StepData whole_batch(const std::vector<at::Tensor>& inputs, const at::Tensor& targets,
                     int microbatches, int split_dim) {
  StepData data;
  if (!inputs.empty()) {
    auto chunks = std::make_shared<std::vector<std::vector<at::Tensor>>>(
        split_microbatches(inputs, microbatches, split_dim));
    data.inputs = [chunks](int microbatch) {
      return chunks->at(static_cast<std::size_t>(microbatch));
    };
  }
  if (targets.defined()) {
    auto chunks = std::make_shared<std::vector<std::vector<at::Tensor>>>(
        split_microbatches({targets}, microbatches, split_dim));
    data.targets = [chunks](int microbatch) {
      return chunks->at(static_cast<std::size_t>(microbatch)).at(0);
    };
  }
  return data;
}

}  // namespace baton
