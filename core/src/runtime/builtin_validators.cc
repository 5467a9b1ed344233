// The validators that ship in the core.
//   shape_dtype — first-stage inputs, every stage's outputs, arriving gradients: shape and
//                 dtype equal to what setup established.
//   strict      — shape_dtype on every crossing, plus strides/contiguity and device.
//   finite      — no NaN or Inf in activations or gradients; names the first stage and
//                 microbatch where one appears (ranks check in plan order).
//   off         — nothing.
#include <ATen/ATen.h>

#include "baton/validator.h"

namespace baton {
namespace {

void check_shape_dtype(const at::Tensor& tensor, const TensorCheck& where) {
  if (!tensor.defined()) {
    throw ValidationError(describe_tensor_check(where) + ": missing tensor: expected " +
                          where.expected->str());
  }
  const TensorMeta got = TensorMeta::of(tensor);
  if (got.shape != where.expected->shape) {
    throw ValidationError(describe_tensor_check(where) + ": shape mismatch: expected " +
                          where.expected->str() + ", got " + got.str());
  }
  if (got.dtype != where.expected->dtype) {
    throw ValidationError(describe_tensor_check(where) + ": dtype mismatch: expected " +
                          where.expected->str() + ", got " + got.str());
  }
}

class ShapeDtypeValidator : public Validator {
 public:
  std::string name() const override { return "shape_dtype"; }
  bool wants(TensorRole role) const override {
    return role != TensorRole::kGradientOutput;  // the receiver checks what arrives
  }
  void check(const at::Tensor& tensor, const TensorCheck& where) const override {
    // Later stages' inputs are the previous stage's checked outputs (or a preallocated
    // buffer of the agreed shape): only the first stage's inputs come from outside.
    if (where.role == TensorRole::kForwardInput && where.stage != 0) return;
    check_shape_dtype(tensor, where);
  }
};

class StrictValidator : public Validator {
 public:
  std::string name() const override { return "strict"; }
  bool wants(TensorRole) const override { return true; }
  void check(const at::Tensor& tensor, const TensorCheck& where) const override {
    check_shape_dtype(tensor, where);
    if (!tensor.is_contiguous()) {
      throw ValidationError(describe_tensor_check(where) + ": not contiguous: got " +
                            TensorMeta::of(tensor).detailed_str() + "; expected " +
                            where.expected->detailed_str());
    }
    if (tensor.device() != where.expected->device) {
      throw ValidationError(describe_tensor_check(where) + ": device mismatch: expected " +
                            where.expected->device.str() + ", got " + tensor.device().str());
    }
  }
};

class FiniteValidator : public Validator {
 public:
  std::string name() const override { return "finite"; }
  bool wants(TensorRole role) const override {
    return role == TensorRole::kForwardOutput || role == TensorRole::kGradientOutput ||
           (role == TensorRole::kForwardInput);
  }
  void check(const at::Tensor& tensor, const TensorCheck& where) const override {
    if (!tensor.defined() || !at::isFloatingType(tensor.scalar_type())) return;
    if (where.role == TensorRole::kForwardInput && where.stage != 0) return;
    const at::Tensor finite = at::isfinite(tensor);
    if (finite.all().item<bool>()) return;
    const std::int64_t nan = at::isnan(tensor).sum().item<std::int64_t>();
    const std::int64_t bad = tensor.numel() - finite.sum().item<std::int64_t>();
    throw ValidationError(describe_tensor_check(where) + ": " + std::to_string(bad) + " of " +
                          std::to_string(tensor.numel()) + " values are not finite (" +
                          std::to_string(nan) + " NaN, " + std::to_string(bad - nan) +
                          " Inf); this is the first place they appear on this rank — check "
                          "the learning rate, the inputs, or the loss scale");
  }
};

}  // namespace

const char* tensor_role_name(TensorRole role) {
  switch (role) {
    case TensorRole::kForwardInput:
      return "forward input";
    case TensorRole::kForwardOutput:
      return "forward output";
    case TensorRole::kGradientInput:
      return "gradient of output";
    case TensorRole::kGradientOutput:
      return "gradient of input";
  }
  return "tensor";
}

std::string describe_tensor_check(const TensorCheck& check) {
  return "stage " + std::to_string(check.stage) + " " + tensor_role_name(check.role) + " " +
         std::to_string(check.index) + " (microbatch " + std::to_string(check.microbatch) + ")";
}

Validator::~Validator() = default;

std::vector<std::string> builtin_validator_names() {
  return {"shape_dtype", "strict", "finite", "off"};
}

std::unique_ptr<Validator> make_builtin_validator(const std::string& name) {
  if (name == "shape_dtype") return std::make_unique<ShapeDtypeValidator>();
  if (name == "strict") return std::make_unique<StrictValidator>();
  if (name == "finite") return std::make_unique<FiniteValidator>();
  return nullptr;  // "off" is handled by the chain: it is the empty chain
}

}  // namespace baton
