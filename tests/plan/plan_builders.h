// Hand-built plans for the plan tests. The real schedules come later and live elsewhere; these
// generators are deliberately simple textbook versions so the tests can check known formulas.
#pragma once

#include <algorithm>
#include <string>
#include <vector>

#include "baton/plan/action.h"
#include "baton/plan/plan.h"

namespace baton {
namespace testing {

inline Action make(int stage, ActionType type, int microbatch) {
  return make_action(stage, type, microbatch);
}

// A plan from action text per rank; "" is an idle step.
inline Plan plan_from_text(int num_stages, int num_microbatches, Placement placement,
                           const std::vector<std::vector<std::string>>& cells,
                           std::vector<int> stage_to_rank = {}) {
  Plan plan;
  plan.num_ranks = static_cast<int>(cells.size());
  plan.num_stages = num_stages;
  plan.num_microbatches = num_microbatches;
  plan.placement = placement;
  plan.stage_to_rank = placement == Placement::kCustom
                           ? stage_to_rank
                           : place_stages(placement, plan.num_ranks, num_stages);
  plan.schedule_name = "test";
  for (const std::vector<std::string>& rank_cells : cells) {
    std::vector<PlanSlot> steps;
    for (const std::string& cell : rank_cells) {
      steps.push_back(cell.empty() ? PlanSlot() : PlanSlot(parse_action(cell)));
    }
    plan.rank_steps.push_back(steps);
  }
  return plan;
}

inline Plan empty_plan(int num_ranks, int num_stages, int num_microbatches, Placement placement,
                       const std::string& name) {
  Plan plan;
  plan.num_ranks = num_ranks;
  plan.num_stages = num_stages;
  plan.num_microbatches = num_microbatches;
  plan.placement = placement;
  plan.stage_to_rank = place_stages(placement, num_ranks, num_stages);
  plan.rank_steps.resize(num_ranks);
  plan.schedule_name = name;
  return plan;
}

// GPipe: one stage per rank, all forwards, then all backwards. `split_backward` uses I then W
// instead of B.
inline Plan gpipe_plan(int ranks, int microbatches, bool split_backward = false) {
  Plan plan = empty_plan(ranks, ranks, microbatches, Placement::kLoop, "GPipe");
  for (int rank = 0; rank < ranks; ++rank) {
    std::vector<PlanSlot>& steps = plan.rank_steps[rank];
    for (int mb = 0; mb < microbatches; ++mb) steps.push_back(make(rank, ActionType::kForward, mb));
    for (int mb = 0; mb < microbatches; ++mb) {
      if (split_backward) {
        steps.push_back(make(rank, ActionType::kBackwardInput, mb));
        steps.push_back(make(rank, ActionType::kBackwardWeight, mb));
      } else {
        steps.push_back(make(rank, ActionType::kBackward, mb));
      }
    }
  }
  return plan;
}

// 1F1B: rank r warms up with (ranks - r - 1) forwards, alternates F and B, then drains.
inline Plan one_f_one_b_plan(int ranks, int microbatches) {
  Plan plan = empty_plan(ranks, ranks, microbatches, Placement::kLoop, "1F1B");
  for (int rank = 0; rank < ranks; ++rank) {
    std::vector<PlanSlot>& steps = plan.rank_steps[rank];
    const int warmup = std::min(ranks - rank - 1, microbatches);
    int next_forward = 0;
    int next_backward = 0;
    while (next_forward < warmup) steps.push_back(make(rank, ActionType::kForward, next_forward++));
    while (next_forward < microbatches) {
      steps.push_back(make(rank, ActionType::kForward, next_forward++));
      steps.push_back(make(rank, ActionType::kBackward, next_backward++));
    }
    while (next_backward < microbatches) {
      steps.push_back(make(rank, ActionType::kBackward, next_backward++));
    }
  }
  return plan;
}

// ZB-H1 (Qi et al., "Zero Bubble Pipeline Parallelism"; PyTorch's ZB1P with one stage per
// rank): the 1F1B order with I in place of B; rank r follows its j-th I with the W of its
// oldest pending microbatch once j >= r (holding back r Ws), and drains the rest at the end.
inline Plan zero_bubble_h1_plan(int ranks, int microbatches) {
  Plan plan = empty_plan(ranks, ranks, microbatches, Placement::kLoop, "ZBH1");
  for (int rank = 0; rank < ranks; ++rank) {
    std::vector<PlanSlot>& steps = plan.rank_steps[rank];
    const int warmup = std::min(ranks - rank - 1, microbatches);
    int next_forward = 0, next_input = 0, next_weight = 0;
    auto input_then_weight = [&] {
      steps.push_back(make(rank, ActionType::kBackwardInput, next_input));
      if (next_input >= rank)
        steps.push_back(make(rank, ActionType::kBackwardWeight, next_weight++));
      ++next_input;
    };
    while (next_forward < warmup) steps.push_back(make(rank, ActionType::kForward, next_forward++));
    while (next_forward < microbatches) {
      steps.push_back(make(rank, ActionType::kForward, next_forward++));
      input_then_weight();
    }
    while (next_input < microbatches) input_then_weight();
    while (next_weight < microbatches) {
      steps.push_back(make(rank, ActionType::kBackwardWeight, next_weight++));
    }
  }
  return plan;
}

// Megatron's interleaved 1F1B: `chunks` stages per rank in loop placement (stage = chunk * ranks
// + rank); microbatches must be a multiple of ranks.
inline Plan interleaved_1f1b_plan(int ranks, int chunks, int microbatches) {
  Plan plan = empty_plan(ranks, ranks * chunks, microbatches, Placement::kLoop, "Interleaved1F1B");
  const int total = microbatches * chunks;
  auto microbatch_of = [&](int k) { return (k / (ranks * chunks)) * ranks + k % ranks; };
  for (int rank = 0; rank < ranks; ++rank) {
    auto forward = [&](int k) {
      const int chunk = (k / ranks) % chunks;
      return make(chunk * ranks + rank, ActionType::kForward, microbatch_of(k));
    };
    auto backward = [&](int k) {
      const int chunk = chunks - 1 - (k / ranks) % chunks;
      return make(chunk * ranks + rank, ActionType::kBackward, microbatch_of(k));
    };
    std::vector<PlanSlot>& steps = plan.rank_steps[rank];
    const int warmup = std::min((ranks - rank - 1) * 2 + (chunks - 1) * ranks, total);
    for (int k = 0; k < warmup; ++k) steps.push_back(forward(k));
    for (int k = 0; k < total - warmup; ++k) {
      steps.push_back(forward(warmup + k));
      steps.push_back(backward(k));
    }
    for (int k = total - warmup; k < total; ++k) steps.push_back(backward(k));
  }
  return plan;
}

// Two stages per rank in "v" placement (stages r and 2R-1-r on rank r), GPipe order: all
// forwards of the first stage, then of the second, then the backwards in reverse.
inline Plan v_gpipe_plan(int ranks, int microbatches) {
  Plan plan = empty_plan(ranks, 2 * ranks, microbatches, Placement::kV, "VGPipe");
  for (int rank = 0; rank < ranks; ++rank) {
    const int down = rank;
    const int up = 2 * ranks - 1 - rank;
    std::vector<PlanSlot>& steps = plan.rank_steps[rank];
    for (int stage : {down, up}) {
      for (int mb = 0; mb < microbatches; ++mb)
        steps.push_back(make(stage, ActionType::kForward, mb));
    }
    for (int stage : {up, down}) {
      for (int mb = 0; mb < microbatches; ++mb) {
        steps.push_back(make(stage, ActionType::kBackward, mb));
      }
    }
  }
  return plan;
}

// One line per rank of the plan's action text, "" for idle; handy for exact comparisons.
inline std::vector<std::vector<std::string>> plan_text(const Plan& plan) {
  std::vector<std::vector<std::string>> text;
  for (const std::vector<PlanSlot>& steps : plan.rank_steps) {
    std::vector<std::string> row;
    for (const PlanSlot& slot : steps) row.push_back(slot ? to_string(*slot) : std::string());
    text.push_back(row);
  }
  return text;
}

}  // namespace testing
}  // namespace baton
