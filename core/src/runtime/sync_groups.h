// Internal: the collectives of the gradient synchronisation (GradientSync's parts), in one
// place — joining a group (and the one error when the transport cannot all-reduce), summing
// tensors over it, and the step's scalars, made on the rank's device (NCCL refuses CPU
// tensors) and read back once each.
#pragma once

#include <ATen/core/Tensor.h>

#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "baton/transport.h"

namespace baton {

class AllReduceTransport;

class SyncGroups {
 public:
  SyncGroups(AllReduceTransport* all_reduce, c10::Device device, std::chrono::milliseconds timeout);

  // Joins the group of `ranks` (every member calls it, in the same order as its other
  // groups); `purpose` says what it is for ("the gradients of stage 1 across the replicas"),
  // in the wait notice and in the error when the transport has no all-reduce.
  int join(const std::vector<int>& ranks, const std::string& purpose);

  // Starts summing `tensors` in place over `group`; every tensor on device().
  std::unique_ptr<Work> start(int group, const std::vector<at::Tensor>& tensors);
  // The same, waited for (the timeout given at construction).
  void sum(int group, const std::vector<at::Tensor>& tensors);
  // One number summed over `group`, read back once.
  double sum(int group, double value);
  std::int64_t sum(int group, std::int64_t value);

  c10::Device device() const { return device_; }
  std::chrono::milliseconds timeout() const { return timeout_; }
  at::TensorOptions options(c10::ScalarType dtype) const {
    return at::TensorOptions().dtype(dtype).device(device_);
  }

 private:
  AllReduceTransport* all_reduce_;
  c10::Device device_;
  std::chrono::milliseconds timeout_;
};

}  // namespace baton
