// Discrete-event replay of a lowered plan; see simulate.h for the execution model.
//
// Each action's start time depends only on its rank's previous action and on the finish times of
// the actions it needs, so the replay sweeps the ranks repeatedly, running every action whose
// needs are known, until all ranks are done or a sweep makes no progress (a deadlock). The
// resulting times do not depend on the sweep order.
#include "baton/plan/simulate.h"

#include <algorithm>
#include <map>
#include <string>
#include <tuple>
#include <vector>

#include "baton/error.h"
#include "baton/plan/format.h"
#include "baton/plan/validate.h"
#include "passes_internal.h"

namespace baton {
namespace {

// Event kinds beyond ActionType: "the input gradient of this stage exists", produced by B or I.
constexpr int kGradientReady = 1000;

int kind(ActionType type) {
  return static_cast<int>(type);
}

// Something an action waits for: that `rank` has finished (kind, stage, microbatch).
struct Need {
  int rank = -1;
  int kind = 0;
  int stage = 0;
  int microbatch = 0;
  double delay = 0.0;  // added to the finish time (transfer time for a RECV)
};

using EventKey = std::tuple<int, int, int, int>;  // rank, kind, stage, microbatch

Action make_action(int stage, ActionType type, int microbatch) {
  Action action;
  action.stage = stage;
  action.type = type;
  action.microbatch = microbatch;
  return action;
}

std::string need_text(const Need& need) {
  if (need.kind == kGradientReady) {
    return to_string(make_action(need.stage, ActionType::kBackward, need.microbatch)) + " (or " +
           to_string(make_action(need.stage, ActionType::kBackwardInput, need.microbatch)) + ")";
  }
  return to_string(make_action(need.stage, static_cast<ActionType>(need.kind), need.microbatch));
}

bool matches(const Action& action, const Need& need) {
  const bool kind_matches =
      need.kind == kGradientReady
          ? action.type == ActionType::kBackward || action.type == ActionType::kBackwardInput
          : kind(action.type) == need.kind;
  return kind_matches && action.stage == need.stage && action.microbatch == need.microbatch;
}

std::vector<Action> parts_of(const Action& action) {
  if (action.type == ActionType::kOverlapForwardBackward) return action.sub_actions;
  return {action};
}

class Replayer {
 public:
  Replayer(const Plan& plan, const SimulationCosts& costs)
      : plan_(plan),
        costs_(costs),
        next_step_(plan.rank_steps.size(), 0),
        rank_time_(plan.rank_steps.size(), 0.0),
        live_activations_(plan.rank_steps.size(), 0) {
    result_.schedule_name = plan.schedule_name;
    result_.num_ranks = static_cast<int>(plan.rank_steps.size());
    result_.ranks.resize(plan.rank_steps.size());
  }

  SimulationResult run() {
    bool progressed = true;
    while (progressed) {
      progressed = false;
      for (int rank = 0; rank < result_.num_ranks; ++rank) {
        while (!finished(rank) && try_run_next(rank)) progressed = true;
      }
    }
    for (int rank = 0; rank < result_.num_ranks; ++rank) {
      if (!finished(rank)) throw PlanError(deadlock_message());
    }
    summarize();
    return std::move(result_);
  }

 private:
  int rank_of(int stage) const {
    if (stage < 0 || stage >= static_cast<int>(plan_.stage_to_rank.size())) return -1;
    return plan_.stage_to_rank[stage];
  }

  bool finished(int rank) const {
    return next_step_[rank] >= static_cast<int>(plan_.rank_steps[rank].size());
  }

  // What `part` (running on `rank`) waits for, per the model in simulate.h.
  std::vector<Need> needs_of(int rank, const Action& part) const {
    const int stage = part.stage;
    const int microbatch = part.microbatch;
    const int last_stage = plan_.num_stages - 1;
    std::vector<Need> needs;
    switch (part.type) {
      case ActionType::kForward:
        if (stage > 0) {
          needs.push_back(rank_of(stage - 1) == rank
                              ? Need{rank, kind(ActionType::kForward), stage - 1, microbatch}
                              : Need{rank, kind(ActionType::kRecvForward), stage, microbatch});
        }
        break;
      case ActionType::kBackward:
      case ActionType::kBackwardInput:
        needs.push_back({rank, kind(ActionType::kForward), stage, microbatch});
        if (stage < last_stage) {
          needs.push_back(rank_of(stage + 1) == rank
                              ? Need{rank, kGradientReady, stage + 1, microbatch}
                              : Need{rank, kind(ActionType::kRecvBackward), stage, microbatch});
        }
        break;
      case ActionType::kBackwardWeight:
        needs.push_back({rank, kind(ActionType::kBackwardInput), stage, microbatch});
        break;
      case ActionType::kSendForward:
        needs.push_back({rank, kind(ActionType::kForward), stage, microbatch});
        break;
      case ActionType::kSendBackward:
        needs.push_back({rank, kGradientReady, stage, microbatch});
        break;
      case ActionType::kRecvForward:
        needs.push_back({rank_of(stage - 1), kind(ActionType::kSendForward), stage - 1, microbatch,
                         costs_.transfer_time});
        break;
      case ActionType::kRecvBackward:
        needs.push_back({rank_of(stage + 1), kind(ActionType::kSendBackward), stage + 1, microbatch,
                         costs_.transfer_time});
        break;
      default:
        break;  // UNSHARD, RESHARD, REDUCE_GRAD: no data dependencies in this model
    }
    return needs;
  }

  double duration_of(const Action& part) const {
    const bool own = part.stage >= 0 && part.stage < static_cast<int>(costs_.stages.size());
    const StageCosts uniform{costs_.forward, costs_.backward, costs_.backward_input,
                             costs_.backward_weight};
    const StageCosts& stage = own ? costs_.stages[static_cast<std::size_t>(part.stage)] : uniform;
    switch (part.type) {
      case ActionType::kForward:
        return stage.forward;
      case ActionType::kBackward:
        return stage.backward;
      case ActionType::kBackwardInput:
        return stage.backward_input;
      case ActionType::kBackwardWeight:
        return stage.backward_weight;
      case ActionType::kSendForward:
      case ActionType::kSendBackward:
        return costs_.send_overhead;
      default:
        return 0.0;
    }
  }

  // Runs the rank's next action (or skips an idle slot) if its needs are met.
  bool try_run_next(int rank) {
    const int step = next_step_[rank];
    const PlanSlot& slot = plan_.rank_steps[rank][step];
    if (!slot) {
      ++next_step_[rank];
      return true;
    }
    const std::vector<Action> parts = parts_of(*slot);
    double ready = 0.0;
    for (const Action& part : parts) {
      for (const Need& need : needs_of(rank, part)) {
        const auto found = finished_at_.find({need.rank, need.kind, need.stage, need.microbatch});
        if (found == finished_at_.end()) return false;
        ready = std::max(ready, found->second + need.delay);
      }
    }

    const bool is_recv =
        slot->type == ActionType::kRecvForward || slot->type == ActionType::kRecvBackward;
    double duration = 0.0;
    for (const Action& part : parts) duration += duration_of(part);
    // A RECV occupies its rank from the moment it is reached until its data arrives.
    const double start = is_recv ? rank_time_[rank] : std::max(rank_time_[rank], ready);
    const double end = is_recv ? std::max(rank_time_[rank], ready) : start + duration;

    for (const Action& part : parts) record_finish(rank, part, end);
    if (is_compute(slot->type)) result_.ranks[rank].busy_time += end - start;
    result_.timeline.push_back({rank, step, *slot, start, end});
    rank_time_[rank] = end;
    ++next_step_[rank];
    return true;
  }

  void record_finish(int rank, const Action& part, double end) {
    finished_at_[{rank, kind(part.type), part.stage, part.microbatch}] = end;
    RankStatistics& stats = result_.ranks[rank];
    switch (part.type) {
      case ActionType::kForward:
        stats.peak_activations = std::max(stats.peak_activations, ++live_activations_[rank]);
        break;
      case ActionType::kBackward:
        finished_at_[{rank, kGradientReady, part.stage, part.microbatch}] = end;
        --live_activations_[rank];
        break;
      case ActionType::kBackwardInput:
        finished_at_[{rank, kGradientReady, part.stage, part.microbatch}] = end;
        break;
      case ActionType::kBackwardWeight:
        --live_activations_[rank];  // W still reads the stage inputs, so they live until here
        break;
      default:
        break;
    }
  }

  void summarize() {
    for (const TimelineEntry& entry : result_.timeline) {
      result_.makespan = std::max(result_.makespan, entry.end);
    }
    double total_idle = 0.0;
    for (RankStatistics& stats : result_.ranks) {
      stats.idle_time = result_.makespan - stats.busy_time;
      stats.bubble_fraction = result_.makespan > 0 ? stats.idle_time / result_.makespan : 0.0;
      total_idle += stats.idle_time;
    }
    const double capacity = result_.makespan * result_.num_ranks;
    result_.bubble_fraction = capacity > 0 ? total_idle / capacity : 0.0;
    std::stable_sort(result_.timeline.begin(), result_.timeline.end(),
                     [](const TimelineEntry& a, const TimelineEntry& b) {
                       return std::tie(a.start, a.rank, a.step) < std::tie(b.start, b.rank, b.step);
                     });
    result_.lowered_plan = plan_;
  }

  // Where `need` would be satisfied, for the deadlock message.
  std::string locate(const Need& need, int waiting_rank) const {
    if (need.rank < 0 || need.rank >= result_.num_ranks) return ", which no rank can run";
    const std::string rank_text = "rank " + std::to_string(need.rank);
    const std::vector<PlanSlot>& steps = plan_.rank_steps[need.rank];
    for (int step = 0; step < static_cast<int>(steps.size()); ++step) {
      if (!steps[step]) continue;
      for (const Action& part : parts_of(*steps[step])) {
        if (!matches(part, need)) continue;
        if (need.rank == waiting_rank) {
          return ", which this rank only runs later, at step " + std::to_string(step);
        }
        return " at " + rank_text + ", step " + std::to_string(step) + ", but " + rank_text +
               " is blocked at step " + std::to_string(next_step_[need.rank]);
      }
    }
    if (need.rank == waiting_rank) return ", which this rank never runs";
    return " on " + rank_text + ", which that rank never runs";
  }

  std::string deadlock_message() const {
    std::string message = "plan";
    if (!plan_.schedule_name.empty()) message += " \"" + plan_.schedule_name + "\"";
    message += " cannot finish: every unfinished rank waits on something that never happens\n";
    std::vector<TableMarker> markers;
    for (int rank = 0; rank < result_.num_ranks; ++rank) {
      if (finished(rank)) {
        message += "  rank " + std::to_string(rank) + ": finished\n";
        continue;
      }
      const int step = next_step_[rank];
      const Action& action = *plan_.rank_steps[rank][step];
      markers.push_back({rank, step});
      message += "  rank " + std::to_string(rank) + ", step " + std::to_string(step) + ", action " +
                 to_string(action) + ": waits for ";
      bool described = false;
      for (const Action& part : parts_of(action)) {
        for (const Need& need : needs_of(rank, part)) {
          if (finished_at_.count({need.rank, need.kind, need.stage, need.microbatch})) continue;
          message += need_text(need) + locate(need, rank) + "\n";
          described = true;
          break;
        }
        if (described) break;
      }
      if (!described) message += "an unknown dependency (a bug in the replay; please report it)\n";
    }
    return message + format_plan_table(plan_, markers);
  }

  const Plan& plan_;
  const SimulationCosts& costs_;
  std::vector<int> next_step_;
  std::vector<double> rank_time_;
  std::vector<int> live_activations_;
  std::map<EventKey, double> finished_at_;
  SimulationResult result_;
};

}  // namespace

namespace plan_internal {

SimulationResult replay(const Plan& plan, const SimulationCosts& costs) {
  return Replayer(plan, costs).run();
}

}  // namespace plan_internal

SimulationResult simulate(const Plan& plan, const SimulationCosts& costs) {
  validate_plan(plan);
  if (plan.has_comms()) return plan_internal::replay(plan, costs);
  return plan_internal::replay(plan_internal::insert_comms(plan), costs);
}

}  // namespace baton
