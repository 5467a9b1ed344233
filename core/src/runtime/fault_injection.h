// Internal: fault injection for testing failure handling end to end (ExecutorOptions::fault,
// set by the trainer from BATON_INJECT_FAILURE). Kept out of the executor's loop but for
// one call before each action it runs and each receive it waits for.
#pragma once

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
    if (!fault_.action.empty() && fault_.step == training_step) fail_if_named(action);
  }

 private:
  void fail_if_named(const Action& action) const;

  InjectedFault fault_;
};

}  // namespace baton
