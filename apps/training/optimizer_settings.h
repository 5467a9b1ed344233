// What a run's optimizer is, read once from the configuration (sections `optimizer` and
// `lr_schedule`), typed: the optimizer factory (optimizer_factory.h), the learning-rate
// schedule and the gradient clipping take it from here, and none of them reads the
// configuration. LibTorch-free, so `baton config` checks it too.
#pragma once

#include <string>

#include "baton/config.h"

namespace baton_app {

// optimizer.decay: which parameters weight_decay applies to.
enum class DecayTarget {
  kAll,       // every parameter (torch.optim with one group)
  kMatrices,  // parameters of 2 or more dimensions; biases, norms and other 1-dim ones none
};

// lr_schedule: the learning rate at each step, from optimizer.lr.
struct LrSchedule {
  enum class Kind { kConstant, kLinear, kCosine };
  Kind kind = Kind::kConstant;
  int warmup_steps = 0;  // the first W steps rise linearly to lr: lr * s / W
  double min_lr = 0.0;   // where the decay ends
  int decay_steps = 0;   // the step the decay reaches min_lr (0: run.steps)

  // The learning rate of training step `step` (from 1), for base rate `lr` and a run of
  // `run_steps` steps:
  //   s <= W        lr * s / W
  //   W < s <= D    cosine: M + (lr - M)(1 + cos(pi (s - W) / (D - W))) / 2;
  //                 linear: lr + (M - lr)(s - W) / (D - W); constant: lr
  //   s > D         M (constant: lr)
  double lr_at(int step, double lr, int run_steps) const;
};

struct OptimizerSettings {
  std::string name = "adam";  // sgd, adam or adamw
  double lr = 1e-3;
  double momentum = 0.0;  // sgd
  bool nesterov = false;  // sgd
  double weight_decay = 0.0;
  DecayTarget decay = DecayTarget::kAll;
  double beta1 = 0.9;  // adam, adamw
  double beta2 = 0.999;
  double eps = 1e-8;
  double clip_grad_norm = 0.0;  // 0: off
  LrSchedule schedule;
};

// Reads and checks both sections; throws ConfigError naming the value's file:line and the
// rule it breaks (betas in [0, 1), nesterov without momentum, warm-up past the decay's end …).
// decay_steps 0 means run.steps.
OptimizerSettings read_optimizer_settings(const baton::Config& config);

// "adamw (lr 0.0006, betas 0.9 0.95, eps 1e-08, weight decay 0.1 on matrices), cosine
// schedule (warm-up 10, to 6e-05 at step 100), clip 1": what the run was set up with.
std::string describe(const OptimizerSettings& settings, int run_steps);

}  // namespace baton_app
