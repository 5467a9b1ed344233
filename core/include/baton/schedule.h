// The schedule interface: a schedule plugin turns a pipeline shape into a compute-only plan
// (per rank: 0F0 0F1 1B0 ...). The core validates, lowers (inserts SEND/RECV), simulates
// and runs it; a schedule never deals with communication or tensors.
#pragma once

#include <string>

#include "baton/export.h"
#include "baton/plan/plan.h"
#include "baton/plugin.h"

namespace baton {

struct ScheduleShape {
  int ranks = 1;
  int stages_per_rank = 1;
  int microbatches = 1;

  int num_stages() const { return ranks * stages_per_rank; }
};

class BATON_API Schedule : public PluginObject {
 public:
  ~Schedule() override;

  // Throws ConfigError naming the rule and the values given when the schedule cannot
  // produce a plan for `shape` (e.g. "1f1b needs microbatches >= stages: got 2 < 4").
  virtual void check(const ScheduleShape& shape) const = 0;

  // The compute-only plan (comms are inserted by the core) — or, for schedules that read a
  // complete plan (csv), possibly one that already holds SEND/RECV actions.
  // Called only after check() passed.
  virtual Plan build(const ScheduleShape& shape) const = 0;
};

}  // namespace baton
