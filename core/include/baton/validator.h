// Validators check tensors where they cross a stage boundary, so that a wrong input is a
// clear error instead of an obscure failure inside the model, a silently wrong result, or a
// hang at the next stage. A chain is configured in YAML (validation.validators); the
// built-ins are shape_dtype (default), strict, finite and off, and any other name is loaded
// as a validator plugin (libbaton-validator-<name>.so).
#pragma once

#include <ATen/core/Tensor.h>

#include <memory>
#include <string>
#include <vector>

#include "baton/error.h"
#include "baton/export.h"
#include "baton/plugin.h"
#include "baton/plugin_torch_version.h"
#include "baton/tensor_meta.h"

namespace baton {

// Where a tensor is checked.
enum class TensorRole {
  kForwardInput,    // a stage's input, as the forward is about to use it
  kForwardOutput,   // a stage's output, before it is sent or passed on
  kGradientInput,   // a gradient arriving for a stage's outputs, before its backward
  kGradientOutput,  // a gradient of a stage's inputs, before it is sent back
};

// "forward input", "forward output", "gradient of output", "gradient of input"
BATON_API const char* tensor_role_name(TensorRole role);

struct TensorCheck {
  int stage = 0;
  int microbatch = 0;
  TensorRole role = TensorRole::kForwardInput;
  int index = 0;               // which tensor of the stage's inputs/outputs
  const TensorMeta* expected;  // established at setup
};

// A tensor failed a check. The message reads like
// "stage 0 forward input 0 (microbatch 3): shape mismatch: expected [8, 512] float32, got
// [9, 512] float32".
class BATON_API ValidationError : public Error {
 public:
  using Error::Error;
  ~ValidationError() override;
};

// "stage 0 forward input 0 (microbatch 3)"
BATON_API std::string describe_tensor_check(const TensorCheck& check);

class BATON_API Validator : public PluginObject {
 public:
  ~Validator() override;
  virtual std::string name() const = 0;
  // Whether this validator looks at tensors in `role` (so the executor can skip the call).
  virtual bool wants(TensorRole role) const = 0;
  // Throws ValidationError.
  virtual void check(const at::Tensor& tensor, const TensorCheck& where) const = 0;
};

// The built-in validators by name, or nullptr when `name` is not built in.
BATON_API std::unique_ptr<Validator> make_builtin_validator(const std::string& name);
BATON_API std::vector<std::string> builtin_validator_names();

}  // namespace baton
