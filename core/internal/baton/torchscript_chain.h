// A UnitChain over a TorchScript module saved from Python (torch.jit.script + save): how a
// Python user brings a model. Its units are the module's children in order, with
// ModuleList and Sequential children expanded into their items; the model's forward must be
// the plain chain of those units (checked by verify_torchscript_chain).
#pragma once

#include <memory>
#include <string>

#include "baton/export.h"
#include "baton/unit_chain.h"

namespace baton {

// Loads `path` (throws ConfigError naming the path and TorchScript's message).
BATON_API std::shared_ptr<UnitChain> load_torchscript_chain(const std::string& path);

// Runs the module's own forward and the chain of units on `inputs` and throws ConfigError
// when they differ: the model does more than chain its children (a residual around
// children, say), so cutting it between children would change what it computes.
BATON_API void verify_torchscript_chain(UnitChain& chain, const std::vector<at::Tensor>& inputs);

}  // namespace baton
