// BATON_INJECT_FAILURE="rank=R,step=S,action=A[,by=kill|stop|inf|nan]": make rank R fail when it
// reaches action A in training step S — to see (and test) how a failure is reported and
// stops the run. A is a compute action ("1B0", it raises an error) or a receive ("1RECV_F0",
// it raises when the action that needs it waits for it); by=kill SIGKILLs the rank there
// instead (a crash, not an error), by=stop SIGSTOPs it (a hung rank: alive, silent, holding
// its sockets); by=inf / by=nan fail nothing but overwrite the gradients the backward (or W)
// A computes for its stage with that value (an fp16 overflow: precision.loss_scale skips the
// step). action=kill / action=stop do that at the start of step S;
// action=kill_in_checkpoint SIGKILLs the rank while it writes step S's checkpoint.
#pragma once

#include "baton/runtime/executor.h"

namespace baton_app {

// What the trainer itself does: a signal at a step's start, or while a checkpoint is written.
struct InjectedSignal {
  int step = -1;
  int signal = 0;
  int kill_in_checkpoint_step = -1;
};

// Reads BATON_INJECT_FAILURE for this rank: a fault inside a step goes to the executor
// (`fault`), a signal at a step's start or during a checkpoint to `signal_at_step`. Throws
// ConfigError, with the expected form, when the variable is malformed (on every rank).
void inject_failure_from_environment(int rank, baton::InjectedFault* fault,
                                     InjectedSignal* signal_at_step);

}  // namespace baton_app
