// Internal: a step's data where the rank's stages are.
#pragma once

#include <c10/core/Device.h>

#include "baton/runtime/executor.h"

namespace baton {

// `data` with each microbatch's inputs and targets moved to `device` when they are asked for;
// on the CPU, as it is.
StepData on_device(StepData data, c10::Device device);

}  // namespace baton
