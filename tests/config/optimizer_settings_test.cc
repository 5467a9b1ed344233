// The recipe's settings (sections optimizer, lr_schedule and eval, and the loss's): the
// learning-rate schedule as docs/configuration.md writes it, and each rule between keys
// refused where it is written.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "baton/config.h"
#include "baton/error.h"
#include "training/config_sections.h"
#include "training/optimizer_settings.h"

namespace {

[[maybe_unused]] const bool kAppSections = (baton_app::add_app_config_sections(), true);

using baton_app::LrSchedule;
using testing::HasSubstr;

baton::Config load(const std::string& text, std::vector<std::string> set = {}) {
  baton::ConfigOverrides overrides;
  overrides.set = std::move(set);
  overrides.use_environment = false;
  return baton::load_config_text(text, "run.yaml", overrides);
}

std::string error_of(const std::string& text, std::vector<std::string> set = {}) {
  try {
    load(text, std::move(set));
  } catch (const baton::ConfigError& error) {
    return error.what();
  }
  ADD_FAILURE() << "expected a ConfigError for " << text;
  return {};
}

constexpr double kPi = 3.14159265358979323846;

TEST(LrSchedule, WarmUpThenCosineToTheFloorThenTheFloor) {
  LrSchedule schedule;
  schedule.kind = LrSchedule::Kind::kCosine;
  schedule.warmup_steps = 4;
  schedule.min_lr = 0.1;
  schedule.decay_steps = 12;
  EXPECT_DOUBLE_EQ(schedule.lr_at(1, 1.0, 20), 0.25);
  EXPECT_DOUBLE_EQ(schedule.lr_at(4, 1.0, 20), 1.0);
  for (int step = 5; step <= 12; ++step) {
    const double progress = (step - 4) / 8.0;
    EXPECT_DOUBLE_EQ(schedule.lr_at(step, 1.0, 20), 0.1 + 0.45 * (1 + std::cos(kPi * progress)))
        << step;
  }
  EXPECT_DOUBLE_EQ(schedule.lr_at(12, 1.0, 20), 0.1);
  EXPECT_DOUBLE_EQ(schedule.lr_at(13, 1.0, 20), 0.1);
  EXPECT_DOUBLE_EQ(schedule.lr_at(20, 1.0, 20), 0.1);
}

TEST(LrSchedule, LinearDecayEndsAtRunStepsWhenDecayStepsIsZero) {
  LrSchedule schedule;
  schedule.kind = LrSchedule::Kind::kLinear;
  schedule.min_lr = 0.0;
  EXPECT_DOUBLE_EQ(schedule.lr_at(1, 2.0, 10), 2.0 - 2.0 * 0.1);
  EXPECT_DOUBLE_EQ(schedule.lr_at(5, 2.0, 10), 1.0);
  EXPECT_DOUBLE_EQ(schedule.lr_at(10, 2.0, 10), 0.0);
}

TEST(LrSchedule, ConstantKeepsTheRateAfterItsWarmUp) {
  LrSchedule schedule;
  EXPECT_DOUBLE_EQ(schedule.lr_at(1, 0.5, 10), 0.5);
  schedule.warmup_steps = 2;
  EXPECT_DOUBLE_EQ(schedule.lr_at(1, 0.5, 10), 0.25);
  EXPECT_DOUBLE_EQ(schedule.lr_at(3, 0.5, 10), 0.5);
  EXPECT_DOUBLE_EQ(schedule.lr_at(1000, 0.5, 10), 0.5);
}

TEST(OptimizerSettings, TheRecipeIsReadTyped) {
  const baton_app::OptimizerSettings settings = baton_app::read_optimizer_settings(
      load("run: {steps: 100}\n"
           "optimizer: {name: adamw, lr: 6.0e-4, betas: [0.9, 0.95], eps: 1.0e-6,\n"
           "            weight_decay: 0.1, decay: matrices, clip_grad_norm: 1.0}\n"
           "lr_schedule: {name: cosine, warmup_steps: 10, min_lr: 6.0e-5}\n"));
  EXPECT_EQ(settings.name, "adamw");
  EXPECT_DOUBLE_EQ(settings.beta1, 0.9);
  EXPECT_DOUBLE_EQ(settings.beta2, 0.95);
  EXPECT_DOUBLE_EQ(settings.eps, 1e-6);
  EXPECT_EQ(settings.decay, baton_app::DecayTarget::kMatrices);
  EXPECT_DOUBLE_EQ(settings.clip_grad_norm, 1.0);
  EXPECT_EQ(settings.schedule.kind, LrSchedule::Kind::kCosine);
  EXPECT_EQ(settings.schedule.warmup_steps, 10);
  EXPECT_THAT(baton_app::describe(settings, 100),
              HasSubstr("adamw (lr 0.0006, betas 0.9 0.95, eps 1e-06, weight decay 0.1 on "
                        "matrices), cosine schedule (warm-up 10, to 6e-05 at step 100), clip 1"));
}

// Every rule between keys, refused with the value's origin and what to do.
TEST(OptimizerSettings, RulesBetweenKeysAreRefusedWhereWritten) {
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"optimizer.betas=[0.9]", "optimizer.betas [0.9]: write two numbers"},
      {"optimizer.betas=[0.9, 1.0]", "each beta must be in [0, 1)"},
      {"optimizer.betas=[0.9, x]", "'x' is not a number"},
      {"optimizer.eps=0", "optimizer.eps must be a finite number above 0"},
      {"optimizer.decay=biases", "optimizer.decay must be one of all, matrices"},
      {"optimizer.clip_grad_norm=-1", "optimizer.clip_grad_norm must be a finite number from 0"},
      {"optimizer.name=adamw_", "did you mean 'adamw'?"},
      {"lr_schedule.name=cosin", "did you mean 'cosine'?"},
      {"lr_schedule.warmup_steps=-2", "lr_schedule.warmup_steps -2: must be 0 or more"},
      {"lr_schedule.min_lr=0.5", "lr_schedule.min_lr 0.5: the decay ends above optimizer.lr"},
      {"model.label_smoothing=1.5", "model.label_smoothing must be a finite number from 0 to 1"},
      {"eval.every=-1", "eval.every must be at least 0"},
      {"eval.inputs=[/etc/passwd]", "eval.inputs and eval.targets are held-out files for"},
  };
  for (const auto& [assignment, expected] : cases) {
    const std::string message = error_of("optimizer: {lr: 0.01}\n", {assignment});
    EXPECT_THAT(message, HasSubstr(expected)) << assignment;
    EXPECT_THAT(message, HasSubstr("--set " + assignment)) << assignment << ": origin missing";
  }
  EXPECT_THAT(error_of("optimizer: {name: sgd, nesterov: true}\n"), HasSubstr("run.yaml:1:"));
  EXPECT_THAT(error_of("optimizer: {name: sgd, nesterov: true}\n"),
              HasSubstr("needs optimizer.momentum above 0"));
  EXPECT_THAT(error_of("optimizer: {name: sgd, betas: [0.9, 0.95]}\n"),
              HasSubstr("only adam and adamw have it; optimizer.name is sgd"));
  EXPECT_THAT(error_of("optimizer: {name: adamw, momentum: 0.9}\n"), HasSubstr("only sgd has it"));
  EXPECT_THAT(error_of("run: {steps: 10}\nlr_schedule: {name: cosine, warmup_steps: 10}\n"),
              HasSubstr("leaves it no steps"));
  EXPECT_THAT(error_of("model: {loss: mse, label_smoothing: 0.1}\n"),
              HasSubstr("model.label_smoothing 0.1 is cross entropy's; model.loss is 'mse'"));
}

}  // namespace
