// What a TorchScript module's forward returned, as the tensors a stage passes on: one tensor,
// or a tuple of tensors. Anything else cannot cross ranks and is refused naming `where`.
#pragma once

#include <ATen/core/ivalue.h>

#include <string>
#include <vector>

namespace baton {

std::vector<at::Tensor> script_outputs_to_tensors(const c10::IValue& value,
                                                  const std::string& where);

}  // namespace baton
