// A Linear layer that computes what PyTorch's nn.Linear computes, under autocast too.
//
// LibTorch's C++ torch::nn::Linear forwards a 3-d input as matmul followed by an in-place
// `+= bias` (torch/nn/functional/linear.h), not as at::linear, which Python's F.linear calls.
// In float32 the two agree bit for bit; under autocast the matmul's output is bfloat16 and
// the float32 bias is then added into it, rounding twice where at::linear (bias cast, one
// fused addmm) rounds once. The built-in models would then differ from the same model in
// PyTorch by a bfloat16 ulp here and there, and so would their gradients.
#pragma once

#include <ATen/ATen.h>
#include <torch/nn/modules/linear.h>

#include <cstdint>

namespace baton_models {

struct LinearImpl : torch::nn::LinearImpl {
  LinearImpl(std::int64_t in, std::int64_t out) : torch::nn::LinearImpl(in, out) {}
  at::Tensor forward(const at::Tensor& input) { return at::linear(input, weight, bias); }
};
TORCH_MODULE(Linear);

}  // namespace baton_models
