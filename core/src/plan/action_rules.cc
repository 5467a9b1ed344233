// The table of action_rules.h, as data: one row per thing an action needs, one per action's
// effect on what its stage keeps. Everything else reads these rows.
#include "baton/plan/action_rules.h"

#include <array>

namespace baton {
namespace {

// Whether a need applies, by where the neighbour stage the data comes from lives.
enum class When : std::uint8_t {
  kAlways,
  kNeighbourOnRank,    // the neighbour is on the action's rank: handed over in memory
  kNeighbourElsewhere  // it is on another rank: through a receive
};

struct NeedRow {
  ActionType type;
  Event event;
  int stage_offset;  // of the stage whose event it is, from the action's
  When when;
  int neighbour_offset;  // the stage the data comes from (kNeighbour*): -1 or +1
  const char* reason;
};

constexpr const char* kConsumesOutput = "it consumes the output of the previous stage";
constexpr const char* kNeedsForward = "a backward needs the activations of its forward";
constexpr const char* kConsumesGradient = "it consumes the gradient of the next stage";
constexpr const char* kNeedsReceive = "it needs the data this RECV brings";
constexpr const char* kSends = "it sends what that action produces";
constexpr const char* kReceives = "it receives what that SEND sends";

constexpr NeedRow kNeedRows[] = {
    {ActionType::kForward, Event::kOutputs, -1, When::kNeighbourOnRank, -1, kConsumesOutput},
    {ActionType::kForward, Event::kReceivedForward, 0, When::kNeighbourElsewhere, -1,
     kNeedsReceive},
    {ActionType::kBackward, Event::kOutputs, 0, When::kAlways, 0, kNeedsForward},
    {ActionType::kBackward, Event::kInputGradients, 1, When::kNeighbourOnRank, 1,
     kConsumesGradient},
    {ActionType::kBackward, Event::kReceivedBackward, 0, When::kNeighbourElsewhere, 1,
     kNeedsReceive},
    {ActionType::kBackwardInput, Event::kOutputs, 0, When::kAlways, 0, kNeedsForward},
    {ActionType::kBackwardInput, Event::kInputGradients, 1, When::kNeighbourOnRank, 1,
     kConsumesGradient},
    {ActionType::kBackwardInput, Event::kReceivedBackward, 0, When::kNeighbourElsewhere, 1,
     kNeedsReceive},
    {ActionType::kBackwardWeight, Event::kWeightPending, 0, When::kAlways, 0,
     "the weight gradient W runs after its input gradient I"},
    {ActionType::kSendForward, Event::kOutputs, 0, When::kAlways, 0, kSends},
    {ActionType::kSendBackward, Event::kInputGradients, 0, When::kAlways, 0, kSends},
    {ActionType::kRecvForward, Event::kSentForward, -1, When::kAlways, 0, kReceives},
    {ActionType::kRecvBackward, Event::kSentBackward, 1, When::kAlways, 0, kReceives},
};

struct MakesRow {
  ActionType type;
  Event event;
};

constexpr MakesRow kMakesRows[] = {
    {ActionType::kForward, Event::kOutputs},
    {ActionType::kBackward, Event::kInputGradients},
    {ActionType::kBackwardInput, Event::kInputGradients},
    {ActionType::kBackwardInput, Event::kWeightPending},
    {ActionType::kSendForward, Event::kSentForward},
    {ActionType::kSendBackward, Event::kSentBackward},
    {ActionType::kRecvForward, Event::kReceivedForward},
    {ActionType::kRecvBackward, Event::kReceivedBackward},
};

struct KeptRow {
  ActionType type;
  Kept after;
  Kept after_recomputing;
  Kept while_running;      // at most, while it runs
  Kept while_recomputing;  // the same on a recomputing stage
};

constexpr KeptRow kKeptRows[] = {
    {ActionType::kForward, Kept::kGraph, Kept::kInputs, Kept::kGraph, Kept::kInputs},
    {ActionType::kBackward, Kept::kNothing, Kept::kNothing, Kept::kGraph, Kept::kGraph},
    {ActionType::kBackwardInput, Kept::kWeightGraph, Kept::kWeightGraph, Kept::kGraph,
     Kept::kGraph},
    {ActionType::kBackwardWeight, Kept::kNothing, Kept::kNothing, Kept::kWeightGraph,
     Kept::kWeightGraph},
};

// The rows of one action type, gathered once: the simulator and the runtime ask for every
// action, and a plan has millions.
struct TypeRules {
  const NeedRow* needs[3] = {};
  int need_count = 0;
  std::uint8_t made = 0;  // a bit per Event
  const KeptRow* kept = nullptr;
};

constexpr std::size_t kNumActionTypes =
    static_cast<std::size_t>(ActionType::kOverlapForwardBackward) + 1;

std::array<TypeRules, kNumActionTypes> gather_rows() {
  std::array<TypeRules, kNumActionTypes> rules{};
  for (const NeedRow& row : kNeedRows) {
    TypeRules& type = rules[static_cast<std::size_t>(row.type)];
    type.needs[type.need_count++] = &row;
  }
  for (const MakesRow& row : kMakesRows) {
    rules[static_cast<std::size_t>(row.type)].made |=
        static_cast<std::uint8_t>(1u << static_cast<int>(row.event));
  }
  for (const KeptRow& row : kKeptRows) rules[static_cast<std::size_t>(row.type)].kept = &row;
  return rules;
}

const std::array<TypeRules, kNumActionTypes> kRulesByType = gather_rows();

const TypeRules& rules_of(ActionType type) {
  return kRulesByType[static_cast<std::size_t>(type)];
}

bool applies(const NeedRow& row, const Plan& plan, const Action& action, int rank) {
  if (row.when == When::kAlways) return true;
  const int neighbour = action.stage + row.neighbour_offset;
  if (neighbour < 0 || neighbour >= plan.num_stages) return false;
  const bool on_rank = plan.stage_to_rank[static_cast<std::size_t>(neighbour)] == rank;
  return on_rank == (row.when == When::kNeighbourOnRank);
}

}  // namespace

const char* kept_name(Kept kept) {
  switch (kept) {
    case Kept::kNothing:
      return "nothing";
    case Kept::kInputs:
      return "inputs";
    case Kept::kGraph:
      return "graph";
    case Kept::kWeightGraph:
      return "weight graph";
  }
  return "?";
}

bool KeptTally::operator==(const KeptTally& other) const {
  for (int i = 0; i < kNumKept; ++i) {
    if (count[i] != other.count[i]) return false;
  }
  return true;
}

std::string to_string(const KeptTally& tally) {
  std::string text;
  for (Kept kept : {Kept::kGraph, Kept::kInputs, Kept::kWeightGraph}) {
    text += (text.empty() ? "" : ", ") + std::string(kept_name(kept)) + " " +
            std::to_string(tally[kept]);
  }
  return text;
}

Needs needs_of(const Plan& plan, const Action& action) {
  Needs needs;
  const int stage_count = plan.num_stages;
  if (action.stage < 0 || action.stage >= stage_count) return needs;
  const int rank = plan.stage_to_rank[static_cast<std::size_t>(action.stage)];
  const TypeRules& rules = rules_of(action.type);
  for (int i = 0; i < rules.need_count; ++i) {
    const NeedRow& row = *rules.needs[i];
    if (!applies(row, plan, action, rank)) continue;
    const int stage = action.stage + row.stage_offset;
    if (stage < 0 || stage >= stage_count) continue;
    needs.items[needs.count++] = {row.event, stage, action.microbatch,
                                  plan.stage_to_rank[static_cast<std::size_t>(stage)], row.reason};
  }
  return needs;
}

ActionType made_by(Event event) {
  for (const MakesRow& row : kMakesRows) {
    if (row.event == event) return row.type;
  }
  return ActionType::kForward;  // every event has a row
}

std::uint8_t made_events(ActionType type) {
  return rules_of(type).made;
}

bool makes(ActionType type, Event event) {
  return (made_events(type) >> static_cast<int>(event)) & 1u;
}

Kept kept_after(ActionType type, Kept before, bool recompute) {
  const KeptRow* row = rules_of(type).kept;
  if (row == nullptr) return before;
  return recompute ? row->after_recomputing : row->after;
}

Kept kept_while(ActionType type, Kept before, bool recompute) {
  const KeptRow* row = rules_of(type).kept;
  if (row == nullptr) return before;
  return recompute ? row->while_recomputing : row->while_running;
}

std::string event_text(Event event, int stage, int microbatch) {
  std::string text = to_string(make_action(stage, made_by(event), microbatch));
  if (event == Event::kInputGradients) {
    text += " (or " + to_string(make_action(stage, ActionType::kBackwardInput, microbatch)) + ")";
  }
  return text;
}

}  // namespace baton
