// A plan: for every rank, the ordered list of actions it runs (an empty slot is an idle
// step), plus where each stage lives.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "baton/export.h"
#include "baton/plan/action.h"

namespace baton {

enum class Placement {
  kLoop,    // stage s on rank s % ranks
  kV,       // 0,1,...,r-1,r-1,...,0 (two stages per rank, "V" shape)
  kCustom,  // stage_to_rank given explicitly
};

BATON_API std::string_view placement_name(Placement placement);

// stage -> rank for `num_stages` stages over `num_ranks` ranks. Throws PlanError for kCustom
// (it has no formula) and for kV when num_stages is not a multiple of 2 * num_ranks (the zig-zag
// would leave ranks with unequal stage counts).
BATON_API std::vector<int> place_stages(Placement placement, int num_ranks, int num_stages);

// The named placement `stage_to_rank` matches (loop is preferred when both match), else kCustom.
// Lets a plan read back from CSV report the placement its schedule asked for.
BATON_API Placement classify_placement(const std::vector<int>& stage_to_rank, int num_ranks);

using PlanSlot = std::optional<Action>;  // nullopt = idle step

struct BATON_API Plan {
  int num_ranks = 0;
  int num_stages = 0;
  int num_microbatches = 0;
  Placement placement = Placement::kLoop;
  std::vector<int> stage_to_rank;                 // size num_stages
  std::vector<std::vector<PlanSlot>> rank_steps;  // [rank][step]
  std::string schedule_name;                      // for messages; may be empty

  // True when the plan holds SEND/RECV actions (it was lowered or loaded with comms).
  bool has_comms() const;
  // The number of rows of the table: the longest rank's step count.
  int num_steps() const;
  // The rank that computes `stage`; -1 for a stage the plan does not place (validate_plan
  // says which).
  int rank_of(int stage) const;
};

}  // namespace baton
