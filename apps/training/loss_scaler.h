// fp16 loss scaling (precision.loss_scale), the dynamic scale of torch.cuda.amp.GradScaler:
// each step's backward starts from the loss times the scale (StepData::loss_scale), the
// gradients are divided back and checked by the executor's sync (StepResult
// ::nonfinite_gradients, agreed by every rank), and then, as GradScaler.update() does, an
// overflowing step is skipped and the scale halved, and `growth_interval` finite steps in a
// row double it. Every rank holds the same scaler and sees the same outcome, so they stay
// in step without talking. The state goes into every checkpoint's manifest, so a resumed run
// continues the scale exactly. No LibTorch.
#pragma once

#include <cstdint>

#include "precision_settings.h"

namespace baton_app {

struct LossScaleState {
  double scale = 65536.0;
  std::int64_t growth_tracker = 0;  // finite steps in a row since the scale last changed
  std::int64_t skipped_steps = 0;   // of the whole run, resumed ones included
};

// A step's part for the progress line and metrics.jsonl.
struct LossScaleReport {
  bool enabled = false;
  double scale = 1.0;              // the factor the step's loss was multiplied by
  bool skipped = false;            // a gradient overflowed: no update
  std::int64_t skipped_steps = 0;  // in the run so far, this one included
};

class LossScaler {
 public:
  explicit LossScaler(const LossScaleSettings& settings);

  bool enabled() const { return settings_.enabled; }
  // The factor this step's loss is multiplied by (1 when loss scaling is off).
  double scale() const { return settings_.enabled ? state_.scale : 1.0; }

  // After step `step`'s backward: `nonfinite`, whether any gradient overflowed. Returns
  // whether the step is to be skipped (no update), and moves the scale on. Throws
  // baton::Error when the gradients overflow at the lowest scale (precision.loss_scale_min):
  // lowering it further would not help, the run has diverged.
  bool update(bool nonfinite, int step);

  const LossScaleState& state() const { return state_; }
  void restore(const LossScaleState& state) { state_ = state; }

 private:
  LossScaleSettings settings_;
  LossScaleState state_;
};

}  // namespace baton_app
