// Stage placement and the small queries on Plan.
#include "baton/plan/plan.h"

#include <algorithm>
#include <string>

#include "baton/error.h"

namespace baton {

std::string_view placement_name(Placement placement) {
  switch (placement) {
    case Placement::kLoop:
      return "loop";
    case Placement::kV:
      return "v";
    case Placement::kCustom:
      return "custom";
  }
  return "?";
}

std::vector<int> place_stages(Placement placement, int num_ranks, int num_stages) {
  if (num_ranks <= 0 || num_stages < 0) {
    throw PlanError("cannot place " + std::to_string(num_stages) + " stages on " +
                    std::to_string(num_ranks) + " ranks: need at least one rank");
  }
  std::vector<int> stage_to_rank(num_stages);
  switch (placement) {
    case Placement::kLoop:
      for (int stage = 0; stage < num_stages; ++stage) stage_to_rank[stage] = stage % num_ranks;
      return stage_to_rank;
    case Placement::kV:
      if (num_stages % (2 * num_ranks) != 0) {
        throw PlanError("placement \"v\" needs the stage count to be a multiple of 2 x ranks (" +
                        std::to_string(2 * num_ranks) + "), got " + std::to_string(num_stages) +
                        " stages on " + std::to_string(num_ranks) +
                        " ranks; use \"loop\" or a custom placement");
      }
      // Even rounds go down the ranks, odd rounds come back up, so stages r-1 and r (and every
      // other turn of the zig-zag) share a rank and pass activations locally.
      for (int stage = 0; stage < num_stages; ++stage) {
        const int round = stage / num_ranks;
        const int offset = stage % num_ranks;
        stage_to_rank[stage] = round % 2 == 0 ? offset : num_ranks - 1 - offset;
      }
      return stage_to_rank;
    case Placement::kCustom:
      break;
  }
  throw PlanError("placement \"custom\" has no formula; give stage_to_rank explicitly");
}

Placement classify_placement(const std::vector<int>& stage_to_rank, int num_ranks) {
  if (num_ranks <= 0) return Placement::kCustom;
  const int num_stages = static_cast<int>(stage_to_rank.size());
  for (Placement candidate : {Placement::kLoop, Placement::kV}) {
    if (candidate == Placement::kV && num_stages % (2 * num_ranks) != 0) continue;
    if (place_stages(candidate, num_ranks, num_stages) == stage_to_rank) return candidate;
  }
  return Placement::kCustom;
}

bool Plan::has_comms() const {
  for (const std::vector<PlanSlot>& steps : rank_steps) {
    for (const PlanSlot& slot : steps) {
      if (slot && is_comm(slot->type)) return true;
    }
  }
  return false;
}

int Plan::rank_of(int stage) const {
  if (stage < 0 || stage >= static_cast<int>(stage_to_rank.size())) return -1;
  return stage_to_rank[static_cast<std::size_t>(stage)];
}

int Plan::num_steps() const {
  size_t longest = 0;
  for (const std::vector<PlanSlot>& steps : rank_steps) longest = std::max(longest, steps.size());
  return static_cast<int>(longest);
}

}  // namespace baton
