// Builds the configured model: its builder (MLP, GPT, identity) or the TorchScript file, with
// its loss.
#pragma once

#include <cstdint>

#include "model_settings.h"
#include "models.h"

namespace baton_models {

// `settings` from read_model_settings() (parameters already checked): the one path
// `baton run`, the profiler, the bench and the tests share.
BuiltModel build_model(const ModelSettings& settings, std::uint64_t seed);

}  // namespace baton_models
