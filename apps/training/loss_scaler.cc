#include "loss_scaler.h"

#include <algorithm>
#include <cmath>
#include <sstream>
#include <string>

#include "baton/error.h"

namespace baton_app {

LossScaler::LossScaler(const LossScaleSettings& settings) : settings_(settings) {
  state_.scale = settings.init;
}

bool LossScaler::update(bool nonfinite, int step) {
  if (!settings_.enabled) return false;
  if (nonfinite) {
    if (state_.scale <= settings_.min) {
      std::ostringstream text;
      text << "step " << step << ": a gradient is an inf or a nan at the lowest loss scale ("
           << state_.scale << ", precision.loss_scale_min), after " << state_.skipped_steps
           << " skipped step" << (state_.skipped_steps == 1 ? "" : "s")
           << " in the run: scaling down cannot help, training diverged (try a smaller "
              "optimizer.lr, or optimizer.clip_grad_norm) or the model overflows fp16 even "
              "unscaled (try precision.compute: bf16); the run stops instead of skipping "
              "every step";
      throw baton::Error(text.str());
    }
    state_.scale = std::max(state_.scale * LossScaleSettings::kBackoffFactor, settings_.min);
    state_.growth_tracker = 0;
    ++state_.skipped_steps;
    return true;
  }
  // GradScaler's _amp_update_scale_: the growth waits for a full interval of finite steps,
  // and a scale that would overflow stays where it is.
  if (++state_.growth_tracker == settings_.growth_interval) {
    const double grown = state_.scale * LossScaleSettings::kGrowthFactor;
    if (std::isfinite(static_cast<float>(grown))) state_.scale = grown;
    state_.growth_tracker = 0;
  }
  return false;
}

}  // namespace baton_app
