// Builds the configured model: its parameters checked against model_specs.h, then its
// builder (MLP, GPT, identity) or the TorchScript file.
#pragma once

#include <cstdint>

#include "baton/config.h"
#include "model_specs.h"
#include "models.h"

namespace baton_models {

// Checks model.params (recording the result in `config`) and builds the model: the one
// path `baton run` and the tests share.
BuiltModel build_configured_model(baton::Config& config, std::uint64_t seed);

}  // namespace baton_models
