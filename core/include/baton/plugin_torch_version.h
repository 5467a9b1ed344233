// Included by the SDK headers that pass tensors (stage.h, transport.h, validator.h): a plugin
// that uses them records the LibTorch version it was built against in its descriptor, and
// the loader refuses it under another one (at::Tensor's layout crosses the boundary).
#pragma once

#include <torch/version.h>  // macros only

#undef BATON_PLUGIN_TORCH_VERSION
#define BATON_PLUGIN_TORCH_VERSION TORCH_VERSION
