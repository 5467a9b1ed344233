// Internal: fault injection for testing failure handling end to end (ExecutorOptions::fault,
// set by the trainer from BATON_INJECT_FAILURE). Kept out of the executor's loop but for
// one call before each action it runs and each receive it waits for.
#pragma once

#include <optional>

#include "baton/plan/action.h"
#include "baton/runtime/executor.h"

namespace baton {

class FaultInjection {
 public:
  explicit FaultInjection(InjectedFault fault) : fault_(std::move(fault)) {}

  // Fails here when `action` (a compute action or REDUCE_GRAD about to run, or a receive about
  // to be waited for) in `training_step` is the injected one: throws an error, or raises the
  // configured signal.
  void before(const Action& action, int training_step) const {
    if (!fault_.action.empty() && fault_.step == training_step && !fault_.nonfinite_gradients) {
      fail_if_named(action);
    }
  }

  // The value `action` (a compute action about to run in `training_step`) is to overwrite
  // its stage's gradients with, where it is the injected one and the fault is non-finite
  // gradients; empty otherwise.
  std::optional<double> nonfinite_gradients(const Action& action, int training_step) const {
    if (fault_.step != training_step || !fault_.nonfinite_gradients) return std::nullopt;
    if (to_string(action) != fault_.action) return std::nullopt;
    return fault_.nonfinite_gradients;
  }
  bool injects_nonfinite_gradients() const { return fault_.nonfinite_gradients.has_value(); }

 private:
  void fail_if_named(const Action& action) const;

  InjectedFault fault_;
};

}  // namespace baton
