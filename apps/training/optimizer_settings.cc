#include "optimizer_settings.h"

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "baton/error.h"

namespace baton_app {
namespace {

constexpr double kPi = 3.14159265358979323846;

std::string number_text(double value) {
  char text[32];
  std::snprintf(text, sizeof(text), "%g", value);
  return text;
}

[[noreturn]] void refuse(const baton::ParamValue& value, const std::string& key_path,
                         const std::string& rule) {
  throw baton::ConfigError(value.origin().description + ": " + key_path + " " + value.text() +
                           ": " + rule);
}

// optimizer.betas: two numbers in [0, 1), as torch.optim.Adam checks them.
void read_betas(const baton::ParamValue& value, OptimizerSettings* settings) {
  const std::vector<std::string> items = value.as_string_list();
  if (items.size() != 2) {
    refuse(value, "optimizer.betas", "write two numbers, such as [0.9, 0.95]");
  }
  double betas[2];
  for (int i = 0; i < 2; ++i) {
    char* end = nullptr;
    betas[i] = std::strtod(items[i].c_str(), &end);
    if (items[i].empty() || *end != '\0' || !std::isfinite(betas[i])) {
      refuse(value, "optimizer.betas", "'" + items[i] + "' is not a number");
    }
    if (betas[i] < 0 || betas[i] >= 1) {
      refuse(value, "optimizer.betas", "each beta must be in [0, 1)");
    }
  }
  settings->beta1 = betas[0];
  settings->beta2 = betas[1];
}

LrSchedule read_schedule(const baton::Config& config, int run_steps) {
  const baton::ParamValues& section = config.section("lr_schedule");
  LrSchedule schedule;
  const std::string& name = section.get_string("name");
  schedule.kind = name == "cosine"   ? LrSchedule::Kind::kCosine
                  : name == "linear" ? LrSchedule::Kind::kLinear
                                     : LrSchedule::Kind::kConstant;
  const baton::ParamValue& warmup = section.at("warmup_steps");
  const baton::ParamValue& decay = section.at("decay_steps");
  if (warmup.as_int() < 0) refuse(warmup, "lr_schedule.warmup_steps", "must be 0 or more");
  if (decay.as_int() < 0) {
    refuse(decay, "lr_schedule.decay_steps", "must be 0 or more (0: run.steps)");
  }
  if (warmup.as_int() > (1 << 30) || decay.as_int() > (1 << 30)) {
    refuse(warmup.as_int() > (1 << 30) ? warmup : decay, "lr_schedule",
           "at most " + std::to_string(1 << 30) + " steps");
  }
  schedule.warmup_steps = static_cast<int>(warmup.as_int());
  schedule.decay_steps = static_cast<int>(decay.as_int());
  schedule.min_lr = section.get_float("min_lr");
  const int end = schedule.decay_steps == 0 ? run_steps : schedule.decay_steps;
  if (schedule.kind != LrSchedule::Kind::kConstant && end <= schedule.warmup_steps) {
    refuse(schedule.decay_steps == 0 ? warmup : decay, "lr_schedule",
           "the " + name + " decay runs from the end of the warm-up (step " +
               std::to_string(schedule.warmup_steps) + ") to step " + std::to_string(end) +
               (schedule.decay_steps == 0 ? " (run.steps)" : " (decay_steps)") +
               ", which leaves it no steps; shorten warmup_steps or lengthen the decay");
  }
  return schedule;
}

}  // namespace

double LrSchedule::lr_at(int step, double lr, int run_steps) const {
  if (warmup_steps > 0 && step <= warmup_steps) {
    return lr * static_cast<double>(step) / static_cast<double>(warmup_steps);
  }
  if (kind == Kind::kConstant) return lr;
  const int end = decay_steps == 0 ? run_steps : decay_steps;
  if (step > end) return min_lr;
  const double progress =
      static_cast<double>(step - warmup_steps) / static_cast<double>(end - warmup_steps);
  if (kind == Kind::kLinear) return lr + (min_lr - lr) * progress;
  return min_lr + 0.5 * (lr - min_lr) * (1.0 + std::cos(kPi * progress));
}

OptimizerSettings read_optimizer_settings(const baton::Config& config) {
  const baton::ParamValues& section = config.section("optimizer");
  OptimizerSettings settings;
  settings.name = section.get_string("name");
  settings.lr = section.get_float("lr");
  settings.momentum = section.get_float("momentum");
  settings.nesterov = section.get_bool("nesterov");
  settings.weight_decay = section.get_float("weight_decay");
  settings.decay =
      section.get_string("decay") == "matrices" ? DecayTarget::kMatrices : DecayTarget::kAll;
  read_betas(section.at("betas"), &settings);
  settings.eps = section.get_float("eps");
  settings.clip_grad_norm = section.get_float("clip_grad_norm");
  const bool adam_like = settings.name == "adam" || settings.name == "adamw";
  if (settings.nesterov && (settings.name != "sgd" || settings.momentum <= 0)) {
    refuse(section.at("nesterov"), "optimizer.nesterov",
           "Nesterov momentum is SGD's and needs optimizer.momentum above 0 (as torch.optim.SGD)");
  }
  // A key of another optimizer is refused when it would change something there (a resolved
  // configuration, which writes every default, still loads).
  if (!adam_like) {
    if (settings.beta1 != 0.9 || settings.beta2 != 0.999) {
      refuse(section.at("betas"), "optimizer.betas",
             "only adam and adamw have it; optimizer.name is " + settings.name);
    }
    if (settings.eps != 1e-8) {
      refuse(section.at("eps"), "optimizer.eps",
             "only adam and adamw have it; optimizer.name is " + settings.name);
    }
  }
  if (settings.name != "sgd" && settings.momentum != 0) {
    refuse(section.at("momentum"), "optimizer.momentum",
           "only sgd has it; adam and adamw take optimizer.betas");
  }
  const double min_lr = config.section("lr_schedule").get_float("min_lr");
  if (min_lr > settings.lr) {
    refuse(config.section("lr_schedule").at("min_lr"), "lr_schedule.min_lr",
           "the decay ends above optimizer.lr (" + number_text(settings.lr) +
               "); min_lr is where the rate decays to");
  }
  settings.schedule =
      read_schedule(config, static_cast<int>(config.section("run").get_int("steps")));
  return settings;
}

std::string describe(const OptimizerSettings& settings, int run_steps) {
  std::string text = settings.name + " (lr " + number_text(settings.lr);
  if (settings.name == "sgd") {
    if (settings.momentum > 0) {
      text += std::string(settings.nesterov ? ", nesterov" : "") + " momentum " +
              number_text(settings.momentum);
    }
  } else {
    text += ", betas " + number_text(settings.beta1) + " " + number_text(settings.beta2) +
            ", eps " + number_text(settings.eps);
  }
  if (settings.weight_decay > 0) {
    text += ", weight decay " + number_text(settings.weight_decay) +
            (settings.decay == DecayTarget::kMatrices ? " on matrices" : " on all");
  }
  text += ")";
  const LrSchedule& schedule = settings.schedule;
  if (schedule.kind != LrSchedule::Kind::kConstant || schedule.warmup_steps > 0) {
    const char* kind = schedule.kind == LrSchedule::Kind::kCosine   ? "cosine"
                       : schedule.kind == LrSchedule::Kind::kLinear ? "linear"
                                                                    : "constant";
    text +=
        std::string(", ") + kind + " schedule (warm-up " + std::to_string(schedule.warmup_steps);
    if (schedule.kind != LrSchedule::Kind::kConstant) {
      text += ", to " + number_text(schedule.min_lr) + " at step " +
              std::to_string(schedule.decay_steps == 0 ? run_steps : schedule.decay_steps);
    }
    text += ")";
  }
  if (settings.clip_grad_norm > 0) text += ", clip " + number_text(settings.clip_grad_norm);
  return text;
}

}  // namespace baton_app
