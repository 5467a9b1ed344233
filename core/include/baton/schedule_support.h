// Helpers for writing schedule plugins, header-only so third-party plugins get them by including
// one file: constraint errors worded the same way by every schedule ("1f1b needs microbatches >=
// ranks (stages): got 2 microbatches for 4 ranks"), an empty plan for a shape, and RankProgram,
// which numbers microbatches so a schedule only states its order.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "baton/error.h"
#include "baton/plan/action.h"
#include "baton/plan/plan.h"
#include "baton/schedule.h"

namespace baton {

// Throws the ConfigError every schedule uses for a shape it cannot plan:
//   "<schedule> needs <rule>: got <given>"
// `rule` states the requirement, `given` the values that break it, so the message says what to
// change without reading the schedule's code.
[[noreturn]] inline void throw_schedule_constraint(const std::string& schedule,
                                                   const std::string& rule,
                                                   const std::string& given) {
  throw ConfigError(schedule + " needs " + rule + ": got " + given);
}

// Shorthand for the common "if (!ok) throw_schedule_constraint(...)".
inline void require_schedule_constraint(bool satisfied, const std::string& schedule,
                                        const std::string& rule, const std::string& given) {
  if (!satisfied) throw_schedule_constraint(schedule, rule, given);
}

// "1 microbatch", "4 microbatches": counts in messages read as English.
inline std::string format_count(int count, const std::string& singular, const std::string& plural) {
  return std::to_string(count) + " " + (count == 1 ? singular : plural);
}

// The checks every schedule shares: a shape with at least one rank, one stage per rank and one
// microbatch. Call first in check().
inline void check_schedule_shape_positive(const std::string& schedule, const ScheduleShape& shape) {
  require_schedule_constraint(shape.ranks >= 1, schedule, "ranks >= 1",
                              std::to_string(shape.ranks) + " ranks");
  require_schedule_constraint(shape.stages_per_rank >= 1, schedule, "stages_per_rank >= 1",
                              std::to_string(shape.stages_per_rank) + " stages per rank");
  require_schedule_constraint(shape.microbatches >= 1, schedule, "microbatches >= 1",
                              std::to_string(shape.microbatches) + " microbatches");
}

// For schedules written for a fixed number of stages per rank (1 for GPipe and 1F1B, 2 for the
// "v" schedules). `hint` says why, or what to use instead.
inline void require_stages_per_rank(const std::string& schedule, const ScheduleShape& shape,
                                    int required, const std::string& hint = {}) {
  std::string rule = "stages_per_rank == " + std::to_string(required);
  if (!hint.empty()) rule += " (" + hint + ")";
  require_schedule_constraint(shape.stages_per_rank == required, schedule, rule,
                              format_count(shape.stages_per_rank, "stage", "stages") + " per rank");
}

// A plan for `shape` with every rank's action list empty, stages placed by `placement`, and
// `schedule` as its name. Schedules append to `rank_steps[rank]`.
inline Plan make_empty_plan(const ScheduleShape& shape, Placement placement,
                            const std::string& schedule) {
  Plan plan;
  plan.num_ranks = shape.ranks;
  plan.num_stages = shape.num_stages();
  plan.num_microbatches = shape.microbatches;
  plan.placement = placement;
  plan.stage_to_rank = place_stages(placement, shape.ranks, plan.num_stages);
  plan.rank_steps.resize(shape.ranks);
  plan.schedule_name = schedule;
  return plan;
}

// The stages `rank` holds, in pipeline order (for loop placement: rank, rank + ranks, ...; for
// "v": rank, 2 * ranks - 1 - rank, ...).
inline std::vector<int> stages_of_rank(const Plan& plan, int rank) {
  std::vector<int> stages;
  for (int stage = 0; stage < plan.num_stages; ++stage) {
    if (plan.stage_to_rank[stage] == rank) stages.push_back(stage);
  }
  return stages;
}

// "(<forward>;<backward>)OVERLAP_F_B": a forward and a backward of two stages on one rank that
// the runtime may run concurrently, so one's communication hides behind the other's compute.
inline Action make_overlap(Action forward, Action backward) {
  Action action;
  action.stage = -1;  // the pair has no single stage; parse_action reads it back the same way
  action.type = ActionType::kOverlapForwardBackward;
  action.microbatch = -1;
  action.sub_actions.push_back(std::move(forward));
  action.sub_actions.push_back(std::move(backward));
  return action;
}

// Appends one rank's actions and numbers microbatches per stage in the order they are issued:
// the n-th forward of a stage computes microbatch n, and so does its n-th backward (B or I,
// which share the count). A W names the microbatch of the I it completes. Every schedule here
// runs a stage's microbatches in order, so a schedule says "next forward of stage s" and never
// tracks indices itself.
class RankProgram {
 public:
  RankProgram(std::vector<PlanSlot>* steps, int num_stages)
      : steps_(steps), next_forward_(num_stages, 0), next_backward_(num_stages, 0) {}

  void forward(int stage) { steps_->push_back(next_forward(stage)); }

  // Full backward B (input and weight gradients at once).
  void backward(int stage) { steps_->push_back(next_backward(stage, ActionType::kBackward)); }

  // Input gradient I; its W waits until weight() or weight_of() issues it.
  void backward_input(int stage) {
    Action input = next_backward(stage, ActionType::kBackwardInput);
    pending_weights_.push_back(make_action(stage, ActionType::kBackwardWeight, input.microbatch));
    steps_->push_back(std::move(input));
  }

  // W of the oldest I still without one, on any stage. False when there is none.
  bool weight() { return issue_weight(pending_weights_.begin()); }

  // W of the oldest I of `stage` still without one. False when there is none.
  bool weight_of(int stage) {
    auto it = pending_weights_.begin();
    while (it != pending_weights_.end() && it->stage != stage) ++it;
    return issue_weight(it);
  }

  // Forward of `forward_stage` overlapped with the full backward of `backward_stage`.
  void overlap(int forward_stage, int backward_stage) {
    Action forward = next_forward(forward_stage);
    Action backward = next_backward(backward_stage, ActionType::kBackward);
    steps_->push_back(make_overlap(std::move(forward), std::move(backward)));
  }

  int forwards_issued(int stage) const { return next_forward_[stage]; }
  int backwards_issued(int stage) const { return next_backward_[stage]; }
  int pending_weights() const { return static_cast<int>(pending_weights_.size()); }

 private:
  Action next_forward(int stage) {
    return make_action(stage, ActionType::kForward, next_forward_[stage]++);
  }
  Action next_backward(int stage, ActionType type) {
    return make_action(stage, type, next_backward_[stage]++);
  }
  bool issue_weight(std::vector<Action>::iterator it) {
    if (it == pending_weights_.end()) return false;
    steps_->push_back(std::move(*it));
    pending_weights_.erase(it);
    return true;
  }

  std::vector<PlanSlot>* steps_;
  std::vector<int> next_forward_;
  std::vector<int> next_backward_;
  std::vector<Action> pending_weights_;  // oldest first
};

// Removes every action on a microbatch >= `num_microbatches` (an overlapped pair keeps its other
// half; idle slots stay). Schedules whose steady state assumes a minimum microbatch count generate
// that many and trim: dropping whole microbatches keeps a deadlock-free order deadlock-free, since
// every dependency links actions of one microbatch.
inline void drop_microbatches_from(Plan* plan, int num_microbatches) {
  for (std::vector<PlanSlot>& steps : plan->rank_steps) {
    std::vector<PlanSlot> kept;
    for (PlanSlot& slot : steps) {
      if (!slot) {
        kept.push_back(std::nullopt);
      } else if (slot->type == ActionType::kOverlapForwardBackward) {
        std::vector<Action> parts;
        for (Action& part : slot->sub_actions) {
          if (part.microbatch < num_microbatches) parts.push_back(std::move(part));
        }
        if (parts.size() == 2) {
          kept.push_back(make_overlap(std::move(parts[0]), std::move(parts[1])));
        } else if (parts.size() == 1) {
          kept.push_back(std::move(parts[0]));
        }
      } else if (slot->microbatch < num_microbatches) {
        kept.push_back(std::move(slot));
      }
    }
    steps = std::move(kept);
  }
}

}  // namespace baton
