// A stage's forward under autocast (precision.compute: bf16 or fp16), as PyTorch's
// `with torch.autocast(device_type, dtype):` around a model's forward and its loss: the ops on
// autocast's lists run in `dtype`, the parameters stay float32. Autocast is thread-local
// state, so every place a stage computes opens one (the forward, recomputation's replay, the
// set-up's probe), on whatever thread it runs; leaving the outermost one clears the cast
// weights' cache, as PyTorch's context manager does. The bench's unpipelined reference opens
// the same one around its forward and loss.
#pragma once

#include <c10/core/Device.h>
#include <c10/core/ScalarType.h>

#include <optional>

#include "baton/export.h"

namespace baton {

class BATON_API AutocastScope {
 public:
  // Nothing changes when `dtype` is empty (float32).
  AutocastScope(c10::Device device, std::optional<c10::ScalarType> dtype);
  ~AutocastScope();
  AutocastScope(const AutocastScope&) = delete;
  AutocastScope& operator=(const AutocastScope&) = delete;

 private:
  bool active_ = false;
  bool cuda_ = false;
  bool was_enabled_ = false;
  c10::ScalarType previous_dtype_ = c10::kFloat;
};

}  // namespace baton
