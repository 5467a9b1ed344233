// Discrete-event replay of a lowered plan; see simulate.h for the execution model.
//
// Each action's start time depends only on its rank's previous action and on the finish times of
// the actions it needs, so the replay runs each rank until it needs an event that has not
// happened, parks it on that event and wakes it when the event happens; when no rank can run
// and some are unfinished, the plan deadlocks. The resulting times do not depend on the order
// in which ranks run.
#include "baton/plan/simulate.h"

#include <algorithm>
#include <cmath>
#include <string>
#include <tuple>
#include <vector>

#include "baton/error.h"
#include "baton/plan/action_rules.h"
#include "baton/plan/format.h"
#include "baton/plan/measured_costs.h"
#include "baton/plan/validate.h"
#include "passes_internal.h"

namespace baton {
namespace {

// The parts of an action, without copying: OVERLAP_F_B's pair, or the action itself.
struct Parts {
  const Action* first;
  const Action* last;
  explicit Parts(const Action& action)
      : first(action.type == ActionType::kOverlapForwardBackward ? action.sub_actions.data()
                                                                 : &action),
        last(action.type == ActionType::kOverlapForwardBackward
                 ? action.sub_actions.data() + action.sub_actions.size()
                 : &action + 1) {}
  const Action* begin() const { return first; }
  const Action* end() const { return last; }
};

std::string need_text(const Need& need) {
  return event_text(need.event, need.stage, need.microbatch);
}

bool matches(const Action& action, const Need& need) {
  return makes(action.type, need.event) && action.stage == need.stage &&
         action.microbatch == need.microbatch;
}

void check_cost(double value, const std::string& name) {
  if (!std::isfinite(value) || value < 0) {
    throw PlanError("simulation cost " + name + " is " + std::to_string(value) +
                    "; costs are finite and not negative");
  }
}

void check_costs(const MeasuredCosts& costs) {
  check_cost(costs.forward, "forward");
  check_cost(costs.backward, "backward");
  check_cost(costs.backward_input, "backward_input");
  check_cost(costs.backward_weight, "backward_weight");
  check_cost(costs.send_overhead, "send_overhead");
  check_cost(costs.recv_overhead, "recv_overhead");
  check_cost(costs.transfer_time, "transfer_time");
  check_cost(costs.reduce_grad, "reduce_grad");
  for (std::size_t index = 0; index < costs.stages.size(); ++index) {
    const StageCosts& stage = costs.stages[index];
    const std::string prefix = "of stage " + std::to_string(index) + ": ";
    check_cost(stage.forward, prefix + "forward");
    check_cost(stage.backward, prefix + "backward");
    check_cost(stage.backward_input, prefix + "backward_input");
    check_cost(stage.backward_weight, prefix + "backward_weight");
    check_cost(stage.forward_transfer, prefix + "forward_transfer");
    check_cost(stage.backward_transfer, prefix + "backward_transfer");
    check_cost(stage.forward_send_overhead, prefix + "forward_send_overhead");
    check_cost(stage.backward_send_overhead, prefix + "backward_send_overhead");
    check_cost(stage.activation_bytes, prefix + "activation_bytes");
    check_cost(stage.static_bytes, prefix + "static_bytes");
    check_cost(stage.input_bytes, prefix + "input_bytes");
    check_cost(stage.reduce_grad, prefix + "reduce_grad");
  }
}

class Replayer {
 public:
  Replayer(const Plan& plan, const MeasuredCosts& costs, const SimulationOptions& options)
      : plan_(plan),
        costs_(costs),
        options_(options),
        next_step_(plan.rank_steps.size(), 0),
        rank_time_(plan.rank_steps.size(), 0.0),
        kept_by_rank_(plan.rank_steps.size()),
        live_bytes_(plan.rank_steps.size(), 0.0),
        reduce_free_(plan.rank_steps.size(), 0.0),
        receives_to_post_(plan.rank_steps.size(), 0),
        stage_costs_(static_cast<std::size_t>(std::max(plan.num_stages, 0))),
        events_(static_cast<std::size_t>(kNumEvents) * stage_costs_.size() *
                static_cast<std::size_t>(std::max(plan.num_microbatches, 0))),
        next_waiter_(plan.rank_steps.size(), -1),
        kept_(stage_costs_.size() * static_cast<std::size_t>(std::max(plan.num_microbatches, 0)),
              Kept::kNothing) {
    result_.schedule_name = plan.schedule_name;
    result_.num_ranks = static_cast<int>(plan.rank_steps.size());
    result_.ranks.resize(plan.rank_steps.size());
    const StageCosts uniform = costs.uniform_stage();
    for (std::size_t stage = 0; stage < stage_costs_.size(); ++stage) {
      stage_costs_[stage] = stage < costs.stages.size() ? costs.stages[stage] : uniform;
      const int rank = plan_.rank_of(static_cast<int>(stage));
      if (rank >= 0 && rank < result_.num_ranks) {
        result_.ranks[static_cast<std::size_t>(rank)].static_bytes +=
            stage_costs_[stage].static_bytes;
      }
    }
    for (std::size_t rank = 0; rank < plan.rank_steps.size(); ++rank) {
      for (const PlanSlot& slot : plan.rank_steps[rank]) {
        if (slot && is_receive(slot->type)) ++receives_to_post_[rank];
      }
    }
    if (options_.timeline) {
      std::size_t actions = 0;
      for (const auto& steps : plan.rank_steps) actions += steps.size();
      result_.timeline.reserve(actions);
    }
  }

  // Event-driven: a rank runs until an action's need is unmet, then waits on that event and
  // is woken when it finishes, so every action is tried about twice however the ranks
  // interleave (sweeping the ranks until nothing moves took one sweep per hop of a
  // backward going down the pipeline).
  SimulationResult run() {
    std::vector<int> ready;
    for (int rank = result_.num_ranks - 1; rank >= 0; --rank) ready.push_back(rank);
    while (!ready.empty()) {
      const int rank = ready.back();
      ready.pop_back();
      long blocked_on = -1;
      while (!finished(rank) && try_run_next(rank, &blocked_on, &ready)) {
      }
      if (blocked_on >= 0) {
        next_waiter_[rank] = events_[blocked_on].first_waiter;
        events_[blocked_on].first_waiter = rank;
      }
    }
    for (int rank = 0; rank < result_.num_ranks; ++rank) {
      if (!finished(rank)) throw PlanError(deadlock_message());
    }
    summarize();
    return std::move(result_);
  }

 private:
  static constexpr double kNotFinished = -1.0;  // times are never negative (check_costs)

  static bool is_receive(ActionType type) {
    return type == ActionType::kRecvForward || type == ActionType::kRecvBackward;
  }

  bool finished(int rank) const {
    return next_step_[rank] >= static_cast<int>(plan_.rank_steps[rank].size());
  }

  // Where a finished event is kept: a dense table per (stage, microbatch, event), since a valid
  // plan makes each of them exactly once (actions without a microbatch make none). The table
  // index of (event, stage, microbatch), or -1 when it has none.
  long index_of(Event event, int stage, int microbatch) const {
    if (stage < 0 || stage >= plan_.num_stages || microbatch < 0 ||
        microbatch >= plan_.num_microbatches) {
      return -1;
    }
    return (static_cast<long>(stage) * plan_.num_microbatches + microbatch) * kNumEvents +
           static_cast<int>(event);
  }

  // When `awaited` is available, or kNotFinished.
  double finish_time(const Need& need) const {
    const long index = index_of(need.event, need.stage, need.microbatch);
    if (index < 0 || events_[index].finished_on != need.rank) return kNotFinished;
    return events_[index].finished_at;
  }

  // Records the event and wakes the ranks waiting on it.
  void set_finished(int rank, Event made, int stage, int microbatch, double end,
                    std::vector<int>* ready) {
    const long index = index_of(made, stage, microbatch);
    if (index < 0) return;
    EventRecord& event = events_[index];
    event.finished_at = end;
    event.finished_on = rank;
    for (int waiter = event.first_waiter; waiter >= 0;) {
      const int next = next_waiter_[waiter];
      next_waiter_[waiter] = -1;
      ready->push_back(waiter);
      waiter = next;
    }
    event.first_waiter = -1;
  }

  // How long after `need` happened its data is there: a SEND's transfer time.
  double delay_of(const Need& need) const {
    if (need.event != Event::kSentForward && need.event != Event::kSentBackward) return 0.0;
    return costs_.transfer_time +
           transfer_of(need.stage, /*forward=*/need.event == Event::kSentForward);
  }

  // The size-dependent transfer time of what `sender_stage` sends.
  double transfer_of(int sender_stage, bool forward) const {
    if (sender_stage < 0 || sender_stage >= static_cast<int>(stage_costs_.size())) return 0.0;
    const StageCosts& stage = stage_costs_[static_cast<std::size_t>(sender_stage)];
    return forward ? stage.forward_transfer : stage.backward_transfer;
  }

  const StageCosts* costs_of(int stage) const {
    if (stage < 0 || stage >= static_cast<int>(stage_costs_.size())) return nullptr;
    return &stage_costs_[static_cast<std::size_t>(stage)];
  }

  // A recomputing stage's B or I runs its forward again first.
  static double replayed(const StageCosts& stage) { return stage.recompute ? stage.forward : 0.0; }

  double duration_of(const Action& part) const {
    const StageCosts* stage = costs_of(part.stage);
    switch (part.type) {
      case ActionType::kForward:
        return stage ? stage->forward : costs_.forward;
      case ActionType::kBackward:
        return stage ? stage->backward + replayed(*stage) : costs_.backward;
      case ActionType::kBackwardInput:
        return stage ? stage->backward_input + replayed(*stage) : costs_.backward_input;
      case ActionType::kBackwardWeight:
        return stage ? stage->backward_weight : costs_.backward_weight;
      case ActionType::kSendForward:
        return costs_.send_overhead + (stage ? stage->forward_send_overhead : 0.0);
      case ActionType::kSendBackward:
        return costs_.send_overhead + (stage ? stage->backward_send_overhead : 0.0);
      default:
        return 0.0;
    }
  }

  // Runs the rank's next action (or skips an idle slot) if its needs are met; else sets
  // `blocked_on` to the event it waits for (-1: one that can never happen).
  bool try_run_next(int rank, long* blocked_on, std::vector<int>* woken) {
    const int step = next_step_[rank];
    const PlanSlot& slot = plan_.rank_steps[rank][step];
    if (!slot) {
      ++next_step_[rank];
      return true;
    }
    const Parts parts(*slot);
    double ready = 0.0;
    for (const Action& part : parts) {
      for (const Need& need : needs_of(plan_, part)) {
        const double at = finish_time(need);
        if (at == kNotFinished) {
          *blocked_on = index_of(need.event, need.stage, need.microbatch);
          return false;
        }
        ready = std::max(ready, at + delay_of(need));
      }
    }

    if (slot->type == ActionType::kReduceGrad) {
      // Posted at the rank's current time; runs after the rank's earlier reductions.
      const StageCosts* stage = costs_of(slot->stage);
      const double start = std::max(rank_time_[rank], reduce_free_[rank]);
      const double end = start + (stage ? stage->reduce_grad : costs_.reduce_grad);
      reduce_free_[rank] = end;
      result_.ranks[rank].reduce_time += end - start;
      if (options_.timeline) {
        result_.timeline.push_back({rank, step, *slot, start, end, kept_by_rank_[rank]});
      }
      result_.makespan = std::max(result_.makespan, end);
      ++next_step_[rank];
      return true;
    }
    const bool is_recv = is_receive(slot->type);
    double duration = 0.0;
    for (const Action& part : parts) duration += duration_of(part);
    // A RECV occupies its rank from the moment it is reached until its data arrives. The
    // rank's first communication posts all its RECVs, as the executor does: a RECV posts them
    // before it waits, a SEND right after it has gone (its data leaves first).
    const bool is_send = is_comm(slot->type) && !is_recv;
    double posting = 0.0;
    if (is_comm(slot->type) && receives_to_post_[rank] > 0) {
      posting = receives_to_post_[rank] * costs_.recv_overhead;
      receives_to_post_[rank] = 0;
    }
    const double start = is_recv ? rank_time_[rank] : std::max(rank_time_[rank], ready);
    const double end = is_recv ? std::max(rank_time_[rank] + posting, ready) : start + duration;

    for (const Action& part : parts) record_finish(rank, part, end, woken);
    if (is_compute(slot->type)) result_.ranks[rank].busy_time += end - start;
    if (options_.timeline) {
      result_.timeline.push_back({rank, step, *slot, start, end, kept_by_rank_[rank]});
    }
    result_.makespan = std::max(result_.makespan, end);
    rank_time_[rank] = is_send ? end + posting : end;
    ++next_step_[rank];
    return true;
  }

  void record_finish(int rank, const Action& part, double end, std::vector<int>* ready) {
    const std::uint8_t made = made_events(part.type);
    for (int event = 0; event < kNumEvents; ++event) {
      if ((made >> event) & 1u) {
        set_finished(rank, static_cast<Event>(event), part.stage, part.microbatch, end, ready);
      }
    }
    const StageCosts* stage = costs_of(part.stage);
    if (stage == nullptr || part.microbatch < 0 || part.microbatch >= plan_.num_microbatches) {
      return;
    }
    // What the stage keeps for the microbatch, before, while and after the action: memory.
    Kept& kept = kept_[static_cast<std::size_t>(part.stage) * plan_.num_microbatches +
                       static_cast<std::size_t>(part.microbatch)];
    const Kept before = kept;
    kept = kept_after(part.type, before, stage->recompute);
    if (kept == before) return;
    const Kept during = kept_while(part.type, before, stage->recompute);
    RankStatistics& stats = result_.ranks[rank];
    KeptTally& tally = kept_by_rank_[rank];
    --tally[before];
    ++tally[kept];
    stats.peak_activations = std::max(stats.peak_activations, tally.held());
    const double held_before = live_bytes_[rank];
    live_bytes_[rank] += bytes_of(*stage, kept) - bytes_of(*stage, before);
    stats.peak_activation_bytes =
        std::max({stats.peak_activation_bytes, live_bytes_[rank],
                  held_before - bytes_of(*stage, before) + bytes_of(*stage, during)});
  }

  // Bytes a stage keeps for one microbatch.
  static double bytes_of(const StageCosts& stage, Kept kept) {
    switch (kept) {
      case Kept::kInputs:
        return stage.input_bytes;
      case Kept::kGraph:
      case Kept::kWeightGraph:
        return stage.activation_bytes;
      case Kept::kNothing:
        break;
    }
    return 0.0;
  }

  void summarize() {
    double total_idle = 0.0;
    for (std::size_t rank = 0; rank < result_.ranks.size(); ++rank) {
      RankStatistics& stats = result_.ranks[rank];
      stats.exposed_reduce_time = std::max(0.0, reduce_free_[rank] - rank_time_[rank]);
    }
    for (RankStatistics& stats : result_.ranks) {
      stats.idle_time = result_.makespan - stats.busy_time;
      stats.bubble_fraction = result_.makespan > 0 ? stats.idle_time / result_.makespan : 0.0;
      total_idle += stats.idle_time;
    }
    const double capacity = result_.makespan * result_.num_ranks;
    result_.bubble_fraction = capacity > 0 ? total_idle / capacity : 0.0;
    if (options_.timeline) sort_timeline();
    if (options_.keep_plan) result_.lowered_plan = plan_;
  }

  // By start time, then rank, then step (unique: a rank runs each step once). Sorting small
  // keys and moving each entry once is several times faster than sorting the entries.
  void sort_timeline() {
    struct Key {
      double start;
      int rank;
      int step;
      std::size_t index;
    };
    std::vector<TimelineEntry>& timeline = result_.timeline;
    std::vector<Key> keys;
    keys.reserve(timeline.size());
    for (std::size_t index = 0; index < timeline.size(); ++index) {
      keys.push_back({timeline[index].start, timeline[index].rank, timeline[index].step, index});
    }
    std::sort(keys.begin(), keys.end(), [](const Key& a, const Key& b) {
      return std::tie(a.start, a.rank, a.step) < std::tie(b.start, b.rank, b.step);
    });
    std::vector<TimelineEntry> sorted;
    sorted.reserve(timeline.size());
    for (const Key& key : keys) sorted.push_back(std::move(timeline[key.index]));
    timeline = std::move(sorted);
  }

  // Where `need` would be satisfied, for the deadlock message.
  std::string locate(const Need& need, int waiting_rank) const {
    if (need.rank < 0 || need.rank >= result_.num_ranks) return ", which no rank can run";
    const std::string rank_text = "rank " + std::to_string(need.rank);
    const std::vector<PlanSlot>& steps = plan_.rank_steps[need.rank];
    for (int step = 0; step < static_cast<int>(steps.size()); ++step) {
      if (!steps[step]) continue;
      for (const Action& part : Parts(*steps[step])) {
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
      for (const Action& part : Parts(action)) {
        for (const Need& need : needs_of(plan_, part)) {
          if (finish_time(need) != kNotFinished) continue;
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
  const MeasuredCosts& costs_;
  const SimulationOptions options_;
  std::vector<int> next_step_;
  std::vector<double> rank_time_;
  std::vector<KeptTally> kept_by_rank_;  // per rank: its stages' microbatches, by what they keep
  std::vector<double> live_bytes_;
  std::vector<double> reduce_free_;  // per rank: when its last reduction posted so far ends
  // per rank: RECVs its first SEND or RECV posts (0 once posted)
  std::vector<int> receives_to_post_;
  std::vector<StageCosts> stage_costs_;  // per stage: its own, or the uniform figures
  struct EventRecord {
    double finished_at = kNotFinished;
    int finished_on = -1;   // the rank that finished it (-1: not yet)
    int first_waiter = -1;  // a rank waiting for it (-1: none)
  };
  // [stage][microbatch][event]: the events one action touches lie next to each other.
  std::vector<EventRecord> events_;
  std::vector<int> next_waiter_;  // per rank: the next rank waiting on the same event
  std::vector<Kept> kept_;        // [stage][microbatch]: what the stage keeps for it
  SimulationResult result_;
};

}  // namespace

namespace plan_internal {

SimulationResult replay(const Plan& plan, const MeasuredCosts& costs,
                        const SimulationOptions& options) {
  check_costs(costs);
  return Replayer(plan, costs, options).run();
}

void check_completes(const Plan& plan) {
  SimulationOptions nothing_kept;
  nothing_kept.timeline = false;
  nothing_kept.keep_plan = false;
  replay(plan, MeasuredCosts(), nothing_kept);
}

}  // namespace plan_internal

SimulationResult simulate(const Plan& plan, const MeasuredCosts& costs,
                          const SimulationOptions& options) {
  validate_plan(plan);
  if (plan.has_comms()) return plan_internal::replay(plan, costs, options);
  return plan_internal::replay(plan_internal::insert_comms(plan), costs, options);
}

SimulationResult simulate(const Plan& plan, const SimulationCosts& costs,
                          const SimulationOptions& options) {
  return simulate(plan, MeasuredCosts(costs), options);
}

}  // namespace baton
