// Static plan checks; see validate.h for the rules and why each exists.
#include "baton/plan/validate.h"

#include <algorithm>
#include <string>
#include <utility>
#include <vector>

#include "baton/error.h"
#include "baton/plan/action_rules.h"
#include "baton/plan/format.h"
#include "baton/plan/shape_limits.h"

namespace baton {
namespace {

struct Occurrence {
  int rank = 0;
  int step = 0;
};

// Where one (kind, stage, microbatch) runs: its first two occurrences (the second is what a
// duplicate is reported at) and how many there are. Plain values in one dense table, since a
// valid plan fills every cell once and the checks visit them all.
struct Occurrences {
  Occurrence first;
  Occurrence second;
  int count = 0;
};

// The action types that are counted per (stage, microbatch).
enum Kind { kF, kB, kI, kW, kSendF, kRecvF, kSendB, kRecvB, kNumKinds };

int kind_of(ActionType type) {
  switch (type) {
    case ActionType::kForward:
      return kF;
    case ActionType::kBackward:
      return kB;
    case ActionType::kBackwardInput:
      return kI;
    case ActionType::kBackwardWeight:
      return kW;
    case ActionType::kSendForward:
      return kSendF;
    case ActionType::kRecvForward:
      return kRecvF;
    case ActionType::kSendBackward:
      return kSendB;
    case ActionType::kRecvBackward:
      return kRecvB;
    default:
      return -1;
  }
}

constexpr ActionType kKindTypes[kNumKinds] = {
    ActionType::kForward,        ActionType::kBackward,     ActionType::kBackwardInput,
    ActionType::kBackwardWeight, ActionType::kSendForward,  ActionType::kRecvForward,
    ActionType::kSendBackward,   ActionType::kRecvBackward,
};

bool takes_microbatch(ActionType type) {
  return kind_of(type) >= 0;
}

std::string action_text(int stage, int kind, int microbatch) {
  return to_string(make_action(stage, kKindTypes[kind], microbatch));
}

std::string at(const Occurrence& occurrence) {
  return "rank " + std::to_string(occurrence.rank) + " step " + std::to_string(occurrence.step);
}

class PlanChecker {
 public:
  explicit PlanChecker(const Plan& plan) : plan_(plan) {}

  std::vector<PlanIssue> run() {
    if (!check_shape()) return issues_;
    collect();
    check_counts();
    check_needs();
    check_gradient_reductions();
    if (plan_.has_comms()) check_comms();
    // Earliest step first: that is where a reader of the table starts looking.
    std::stable_sort(issues_.begin(), issues_.end(), [](const PlanIssue& a, const PlanIssue& b) {
      const bool a_stepless = a.step < 0;
      const bool b_stepless = b.step < 0;
      if (a_stepless != b_stepless) return b_stepless;
      if (a.step != b.step) return a.step < b.step;
      return a.rank < b.rank;
    });
    return issues_;
  }

 private:
  int stages() const { return plan_.num_stages; }
  int microbatches() const { return plan_.num_microbatches; }

  void add(int rank, int step, std::string message) {
    PlanIssue issue;
    issue.rank = rank;
    issue.step = step;
    if (rank >= 0 && step >= 0) {
      const PlanSlot& slot = plan_.rank_steps[rank][step];
      if (slot) issue.action = to_string(*slot);
    }
    issue.message = std::move(message);
    issues_.push_back(std::move(issue));
  }
  void add(const Occurrence& where, std::string message) {
    add(where.rank, where.step, std::move(message));
  }

  bool check_shape() {
    const size_t issues_before = issues_.size();
    if (plan_.num_ranks <= 0) add(-1, -1, "the plan has no ranks");
    if (plan_.num_stages <= 0) add(-1, -1, "the plan has no stages");
    if (plan_.num_microbatches <= 0) add(-1, -1, "the plan has no microbatches");
    // The checks keep a table per stage and microbatch; a plan past the shape limits that
    // compile enforces is a typo, refused before those tables are sized.
    if (plan_.num_ranks > kMaxRanks || plan_.num_microbatches > kMaxMicrobatches ||
        static_cast<long long>(plan_.num_stages) * plan_.num_microbatches > kMaxPlanUnits) {
      add(-1, -1,
          "the plan is too large to check: " + std::to_string(plan_.num_ranks) + " ranks, " +
              std::to_string(plan_.num_stages) + " stages x " +
              std::to_string(plan_.num_microbatches) + " microbatches (limits: " +
              std::to_string(kMaxRanks) + " ranks, " + std::to_string(kMaxMicrobatches) +
              " microbatches, " + std::to_string(kMaxPlanUnits) + " stage-microbatch pairs)");
      return false;
    }
    if (static_cast<int>(plan_.rank_steps.size()) != plan_.num_ranks) {
      add(-1, -1,
          "the plan lists actions for " + std::to_string(plan_.rank_steps.size()) +
              " ranks but num_ranks is " + std::to_string(plan_.num_ranks));
    }
    if (static_cast<int>(plan_.stage_to_rank.size()) != plan_.num_stages) {
      add(-1, -1,
          "stage_to_rank places " + std::to_string(plan_.stage_to_rank.size()) +
              " stages but num_stages is " + std::to_string(plan_.num_stages));
    } else {
      for (int stage = 0; stage < plan_.num_stages; ++stage) {
        if (plan_.rank_of(stage) < 0 || plan_.rank_of(stage) >= plan_.num_ranks) {
          add(-1, -1,
              "stage " + std::to_string(stage) + " is placed on rank " +
                  std::to_string(plan_.rank_of(stage)) + ", which does not exist (the plan has " +
                  std::to_string(plan_.num_ranks) + " ranks)");
        }
      }
    }
    return issues_.size() == issues_before;
  }

  Occurrences& occurrences(int kind, int stage, int microbatch) {
    return occurrences_[kind][static_cast<size_t>(stage) * microbatches() + microbatch];
  }
  const Occurrence* first(int kind, int stage, int microbatch) {
    const Occurrences& found = occurrences(kind, stage, microbatch);
    return found.count == 0 ? nullptr : &found.first;
  }
  // The first B, else the first I: the action that consumes the gradient of the next stage.
  const Occurrence* first_backward(int stage, int microbatch) {
    const Occurrence* full = first(kB, stage, microbatch);
    return full ? full : first(kI, stage, microbatch);
  }

  void collect() {
    reductions_.assign(static_cast<size_t>(stages()), {});
    for (std::vector<Occurrences>& table : occurrences_) {
      table.assign(static_cast<size_t>(stages()) * microbatches(), {});
    }
    for (int rank = 0; rank < plan_.num_ranks; ++rank) {
      const std::vector<PlanSlot>& steps = plan_.rank_steps[rank];
      for (int step = 0; step < static_cast<int>(steps.size()); ++step) {
        if (!steps[step]) continue;
        const Action& action = *steps[step];
        if (action.type == ActionType::kOverlapForwardBackward) {
          for (const Action& part : action.sub_actions) collect_one(part, {rank, step});
        } else {
          collect_one(action, {rank, step});
        }
      }
    }
  }

  void collect_one(const Action& action, const Occurrence& where) {
    auto text = [&action] { return to_string(action); };
    if (action.stage < 0 || action.stage >= stages()) {
      add(where, text() + " names stage " + std::to_string(action.stage) + ", but the plan has " +
                     std::to_string(stages()) + " stages (0.." + std::to_string(stages() - 1) +
                     ")");
      return;
    }
    if (takes_microbatch(action.type) &&
        (action.microbatch < 0 || action.microbatch >= microbatches())) {
      add(where, text() + " names microbatch " + std::to_string(action.microbatch) +
                     ", but the plan has " + std::to_string(microbatches()) + " microbatches (0.." +
                     std::to_string(microbatches() - 1) + ")");
      return;
    }
    if (plan_.rank_of(action.stage) != where.rank) {
      add(where, text() + " runs on rank " + std::to_string(where.rank) + ", but stage " +
                     std::to_string(action.stage) + " is placed on rank " +
                     std::to_string(plan_.rank_of(action.stage)) + " (placement " +
                     std::string(placement_name(plan_.placement)) + ")");
      // Still counted below, so a misplaced action does not also show up as a missing one.
    }
    if (action.type == ActionType::kReduceGrad) {
      Occurrences& found = reductions_[static_cast<size_t>(action.stage)];
      if (found.count == 0) found.first = where;
      if (found.count == 1) found.second = where;
      ++found.count;
      return;
    }
    const int kind = kind_of(action.type);
    if (kind >= 0) {
      Occurrences& found = occurrences(kind, action.stage, action.microbatch);
      if (found.count == 0) found.first = where;
      if (found.count == 1) found.second = where;
      ++found.count;
    }
  }

  // Reports the second occurrence when there is more than one.
  bool report_duplicate(int kind, int stage, int microbatch) {
    const Occurrences& found = occurrences(kind, stage, microbatch);
    if (found.count < 2) return false;
    add(found.second, action_text(stage, kind, microbatch) + " appears " +
                          std::to_string(found.count) + " times (" + at(found.first) + " and " +
                          at(found.second) + "); it must run exactly once");
    return true;
  }

  void check_counts() {
    for (int stage = 0; stage < stages(); ++stage) {
      for (int microbatch = 0; microbatch < microbatches(); ++microbatch) {
        check_forward_count(stage, microbatch);
        check_backward_count(stage, microbatch);
      }
    }
  }

  void check_forward_count(int stage, int microbatch) {
    if (occurrences(kF, stage, microbatch).count == 0) {
      add(plan_.rank_of(stage), -1,
          "stage " + std::to_string(stage) + " never runs F for microbatch " +
              std::to_string(microbatch) + " (expected " + action_text(stage, kF, microbatch) +
              " on rank " + std::to_string(plan_.rank_of(stage)) + ")");
      return;
    }
    report_duplicate(kF, stage, microbatch);
  }

  void check_backward_count(int stage, int microbatch) {
    const Occurrence* full_at = first(kB, stage, microbatch);
    const Occurrence* input_at = first(kI, stage, microbatch);
    const Occurrence* weight_at = first(kW, stage, microbatch);
    const Occurrence* split_at = input_at ? input_at : weight_at;
    // The common case, one B or one I and one W, in order, needs no words.
    const bool one_full = full_at && !split_at && occurrences(kB, stage, microbatch).count == 1;
    const bool one_split = !full_at && input_at && weight_at &&
                           occurrences(kI, stage, microbatch).count == 1 &&
                           occurrences(kW, stage, microbatch).count == 1;
    if (one_full || one_split) return;
    const std::string full = action_text(stage, kB, microbatch);
    const std::string input = action_text(stage, kI, microbatch);
    const std::string weight = action_text(stage, kW, microbatch);
    if (full_at && split_at) {
      const Occurrence& later = std::make_pair(full_at->step, full_at->rank) >
                                        std::make_pair(split_at->step, split_at->rank)
                                    ? *full_at
                                    : *split_at;
      add(later, "stage " + std::to_string(stage) + " mixes the full backward " + full +
                     " with the split backward (" + input + "/" + weight + ") for microbatch " +
                     std::to_string(microbatch) + "; use either " + full + " or " + input +
                     " and " + weight);
      return;
    }
    if (report_duplicate(kB, stage, microbatch) || report_duplicate(kI, stage, microbatch) ||
        report_duplicate(kW, stage, microbatch)) {
      return;
    }
    if (!full_at && !input_at && !weight_at) {
      add(plan_.rank_of(stage), -1,
          "stage " + std::to_string(stage) + " never runs a backward for microbatch " +
              std::to_string(microbatch) + " (expected " + full + ", or " + input + " and " +
              weight + " on rank " + std::to_string(plan_.rank_of(stage)) + ")");
    } else if (input_at && !weight_at) {
      add(*input_at,
          input + " has no matching " + weight + "; a split backward needs both its I and its W");
    } else if (weight_at && !input_at) {
      add(*weight_at,
          weight + " has no matching " + input + "; a split backward needs both its I and its W");
    }
  }

  // An action named by (stage, kind) of the microbatch being checked; put into words only
  // when an issue is reported.
  struct Named {
    int stage;
    int kind;
  };

  // Reports `later` when it does not come after `earlier` on the same rank.
  void require_after(const Occurrence* earlier, const Occurrence* later, Named later_action,
                     Named earlier_action, int microbatch, const char* reason) {
    if (!earlier || !later || earlier->rank != later->rank) return;
    if (later->step > earlier->step) return;
    const std::string relation =
        later->step == earlier->step ? "runs in the same step as " : "runs before ";
    add(*later, action_text(later_action.stage, later_action.kind, microbatch) + " " + relation +
                    action_text(earlier_action.stage, earlier_action.kind, microbatch) + " (step " +
                    std::to_string(earlier->step) + ") on rank " + std::to_string(later->rank) +
                    "; " + reason);
  }

  // The event an action needs, as the plan runs it: its first occurrence, and its kind (a
  // stage's input gradients come from its B, or from its I on a split backward).
  const Occurrence* producer(const Need& need, int* kind) {
    *kind = kind_of(made_by(need.event));
    if (*kind == kB && !first(kB, need.stage, need.microbatch)) *kind = kI;
    return first(*kind, need.stage, need.microbatch);
  }

  // Every action runs after what it needs on its own rank: the rows of action_rules.h, which
  // the simulator and the runtime follow too. (What it needs from another rank comes through
  // a SEND and a RECV, paired by check_comms; the simulator finds a plan that never lets it
  // arrive.)
  void check_needs() {
    for (int stage = 0; stage < stages(); ++stage) {
      for (int microbatch = 0; microbatch < microbatches(); ++microbatch) {
        const int backward_kind = first(kB, stage, microbatch) ? kB : kI;
        for (int kind : {int{kF}, backward_kind, int{kW}, int{kSendF}, int{kSendB}}) {
          const Occurrence* later = first(kind, stage, microbatch);
          if (!later) continue;
          for (const Need& need :
               needs_of(plan_, make_action(stage, kKindTypes[kind], microbatch))) {
            int need_kind = kF;
            const Occurrence* earlier = producer(need, &need_kind);
            require_after(earlier, later, {stage, kind}, {need.stage, need_kind}, microbatch,
                          need.reason);
          }
        }
      }
    }
  }

  // REDUCE_GRAD (data parallelism): once per stage, after every backward of the stage (the
  // gradients it reduces are complete only then), and on every stage or none (a stage left
  // out would step its optimizer on its replica's gradients alone).
  void check_gradient_reductions() {
    int reduced = -1, unreduced = -1;
    for (int stage = 0; stage < stages(); ++stage) {
      const Occurrences& found = reductions_[static_cast<size_t>(stage)];
      if (found.count == 0) {
        if (unreduced < 0) unreduced = stage;
        continue;
      }
      if (reduced < 0) reduced = stage;
      const std::string text = std::to_string(stage) + "REDUCE_GRAD";
      if (found.count > 1) {
        add(found.second, text + " appears " + std::to_string(found.count) + " times (" +
                              at(found.first) + " and " + at(found.second) +
                              "); a stage reduces its gradients once per step");
        continue;
      }
      for (int microbatch = 0; microbatch < microbatches(); ++microbatch) {
        for (int kind : {kB, kW}) {
          const Occurrences& backward = occurrences(kind, stage, microbatch);
          if (backward.count == 0 || backward.first.rank != found.first.rank) continue;
          if (backward.first.step < found.first.step) continue;
          add(found.first, text + " runs before " + action_text(stage, kind, microbatch) +
                               " (step " + std::to_string(backward.first.step) +
                               "); the gradients are reduced after the stage's last backward");
          microbatch = microbatches();
          break;
        }
      }
    }
    if (reduced >= 0 && unreduced >= 0) {
      add(plan_.rank_of(unreduced), -1,
          "stage " + std::to_string(unreduced) + " never reduces its gradients (expected " +
              std::to_string(unreduced) + "REDUCE_GRAD on rank " +
              std::to_string(plan_.rank_of(unreduced)) + ", as stage " + std::to_string(reduced) +
              " does); with data parallelism every stage reduces, or none");
    }
  }

  // One comm kind's own rules: no duplicates and a real cross-rank boundary (its order against
  // the compute that produces or consumes its data is check_needs()'s).
  void check_comm_kind(int kind) {
    const bool is_send = kind == kSendF || kind == kSendB;
    const bool is_forward = kind == kSendF || kind == kRecvF;
    for (int stage = 0; stage < stages(); ++stage) {
      // The stage on the other end of the transfer.
      const int peer = is_forward == is_send ? stage + 1 : stage - 1;
      for (int microbatch = 0; microbatch < microbatches(); ++microbatch) {
        const Occurrence* comm = first(kind, stage, microbatch);
        if (!comm) continue;
        auto text = [&] { return action_text(stage, kind, microbatch); };
        if (peer < 0 || peer >= stages()) {
          add(*comm, text() + " has no peer: stage " + std::to_string(peer) + " does not exist");
          continue;
        }
        if (plan_.rank_of(peer) == plan_.rank_of(stage)) {
          add(*comm, text() + " joins stages " + std::to_string(std::min(stage, peer)) + " and " +
                         std::to_string(std::max(stage, peer)) + ", which are both on rank " +
                         std::to_string(plan_.rank_of(stage)) +
                         "; stages on one rank pass tensors locally");
          continue;
        }
        report_duplicate(kind, stage, microbatch);
      }
    }
  }

  // Every cross-rank stage boundary needs a SEND on one side and a RECV on the other.
  void check_comm_pairs(int send_kind, int recv_kind, int sender_stage, int receiver_stage,
                        int microbatch) {
    const Occurrence* send = first(send_kind, sender_stage, microbatch);
    const Occurrence* recv = first(recv_kind, receiver_stage, microbatch);
    if (send && recv) return;
    const std::string send_text = action_text(sender_stage, send_kind, microbatch);
    const std::string recv_text = action_text(receiver_stage, recv_kind, microbatch);
    const std::string receiver_rank = std::to_string(plan_.rank_of(receiver_stage));
    const std::string sender_rank = std::to_string(plan_.rank_of(sender_stage));
    if (send && !recv) {
      add(*send, send_text + " has no matching " + recv_text + " on rank " + receiver_rank);
    } else if (recv && !send) {
      add(*recv, recv_text + " has no matching " + send_text + " on rank " + sender_rank);
    } else if (!send && !recv) {
      const bool forward = send_kind == kSendF;
      const Occurrence* consumer = forward ? first(kF, receiver_stage, microbatch)
                                           : first_backward(receiver_stage, microbatch);
      const std::string message = "microbatch " + std::to_string(microbatch) +
                                  " crosses from stage " + std::to_string(sender_stage) +
                                  " (rank " + sender_rank + ") to stage " +
                                  std::to_string(receiver_stage) + " (rank " + receiver_rank +
                                  ") without " + send_text + " and " + recv_text;
      if (consumer) {
        add(*consumer, message);
      } else {
        add(plan_.rank_of(receiver_stage), -1, message);
      }
    }
  }

  void check_comms() {
    for (int kind : {kSendF, kRecvF, kSendB, kRecvB}) check_comm_kind(kind);
    for (int stage = 0; stage + 1 < stages(); ++stage) {
      if (plan_.rank_of(stage) == plan_.rank_of(stage + 1)) continue;
      for (int microbatch = 0; microbatch < microbatches(); ++microbatch) {
        check_comm_pairs(kSendF, kRecvF, stage, stage + 1, microbatch);
        check_comm_pairs(kSendB, kRecvB, stage + 1, stage, microbatch);
      }
    }
  }

  const Plan& plan_;
  std::vector<PlanIssue> issues_;
  std::vector<Occurrences> occurrences_[kNumKinds];
  std::vector<Occurrences> reductions_;  // REDUCE_GRAD, per stage
};

std::string location(const PlanIssue& issue) {
  if (issue.rank < 0) return "plan";
  std::string text = "rank " + std::to_string(issue.rank);
  if (issue.step >= 0) text += ", step " + std::to_string(issue.step);
  if (!issue.action.empty()) text += ", action " + issue.action;
  return text;
}

constexpr size_t kMaxListedIssues = 20;

}  // namespace

std::vector<PlanIssue> find_plan_issues(const Plan& plan) {
  return PlanChecker(plan).run();
}

std::string describe_plan_issues(const Plan& plan, const std::vector<PlanIssue>& issues) {
  std::string message = "invalid plan";
  if (!plan.schedule_name.empty()) message += " \"" + plan.schedule_name + "\"";
  message += " (" + std::to_string(plan.num_ranks) + " ranks, " + std::to_string(plan.num_stages) +
             " stages, " + std::to_string(plan.num_microbatches) + " microbatches)";
  if (issues.empty()) return message + ": no problems found\n";
  message += ": " + location(issues.front()) + ": " + issues.front().message + "\n";
  if (issues.size() > 1) {
    message += std::to_string(issues.size() - 1) + " more problem" +
               (issues.size() > 2 ? "s" : "") + ":\n";
    for (size_t i = 1; i < issues.size() && i <= kMaxListedIssues; ++i) {
      message += "  " + location(issues[i]) + ": " + issues[i].message + "\n";
    }
    if (issues.size() - 1 > kMaxListedIssues) {
      message += "  ... and " + std::to_string(issues.size() - 1 - kMaxListedIssues) + " more\n";
    }
  }
  // The table only makes sense when the plan has a sane shape.
  if (static_cast<int>(plan.rank_steps.size()) == plan.num_ranks && plan.num_ranks > 0) {
    std::vector<TableMarker> markers;
    if (issues.front().rank >= 0 && issues.front().step >= 0) {
      markers.push_back({issues.front().rank, issues.front().step});
    }
    message += format_plan_table(plan, markers);
  }
  return message;
}

void validate_plan(const Plan& plan) {
  const std::vector<PlanIssue> issues = find_plan_issues(plan);
  if (!issues.empty()) throw PlanError(describe_plan_issues(plan, issues));
}

}  // namespace baton
