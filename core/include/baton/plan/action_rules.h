// What each action of a plan needs, what it makes happen, and what its stage keeps for the
// microbatch afterwards: the one table that plan validation (validate.h), the simulator
// (simulate.h) and the runtime's step loop (its computations and its receives) all read, so
// the plan's rules, its simulated time and memory, and what a run does cannot drift apart.
//
//   action   needs (on its rank unless said)                      makes     keeps after
//   F(s)     F(s-1) if s-1 is on the rank, else RECV_F(s)          outputs   graph (inputs,
//                                                                            recomputing)
//   B(s)     F(s); B/I(s+1) if s+1 is on the rank, else RECV_B(s)  input     nothing
//                                                                  grads
//   I(s)     as B                                                  input     what W reads
//                                                                  grads, W
//   W(s)     I(s)                                                  -         nothing
//   SEND_F   F(s)            SEND_B  B/I(s)
//   RECV_F   SEND_F(s-1) on its rank      RECV_B  SEND_B(s+1) on its rank
// A recomputing B or I builds the graph again first: while it runs the stage holds the graph.
#pragma once

#include <cstdint>
#include <string>

#include "baton/export.h"
#include "baton/plan/action.h"
#include "baton/plan/plan.h"

namespace baton {

// Something that happened to one (stage, microbatch), which later actions wait for.
enum class Event : std::uint8_t {
  kOutputs,           // F ran: the stage's outputs exist
  kInputGradients,    // B or I ran: the gradients of the stage's inputs exist
  kWeightPending,     // I ran: its W may run
  kSentForward,       // SEND_F ran (on the sender's rank)
  kSentBackward,      // SEND_B ran
  kReceivedForward,   // RECV_F ran: the previous stage's outputs are on this rank
  kReceivedBackward,  // RECV_B ran: the gradients of the next stage's inputs are here
};
constexpr int kNumEvents = 7;

// What a stage keeps for one microbatch between its actions: what its memory holds for it.
enum class Kept : std::uint8_t {
  kNothing,      // before F; after B, or after W when the backward is split
  kInputs,       // after F on a recomputing stage: only the inputs (B or I builds the graph)
  kGraph,        // after F: the forward's autograd graph, its activations
  kWeightGraph,  // after I: what W still reads (the inputs, the graph toward the weights)
};
constexpr int kNumKept = 4;

// "nothing", "inputs", "graph", "weight graph".
BATON_API const char* kept_name(Kept kept);

// How many (stage, microbatch) pairs of one rank keep each thing: what the simulator and the
// runtime say a rank holds after each of its actions.
struct KeptTally {
  int count[kNumKept] = {};
  int& operator[](Kept kept) { return count[static_cast<int>(kept)]; }
  int operator[](Kept kept) const { return count[static_cast<int>(kept)]; }
  // Pairs that keep anything: "activations alive" (RankStatistics::peak_activations).
  int held() const { return count[1] + count[2] + count[3]; }
  bool operator==(const KeptTally& other) const;
  bool operator!=(const KeptTally& other) const { return !(*this == other); }
};

// "graph 2, inputs 1, weight graph 0".
BATON_API std::string to_string(const KeptTally& tally);

// One thing an action waits for: `event` of (stage, microbatch), which happens on `rank`.
struct Need {
  Event event = Event::kOutputs;
  int stage = 0;
  int microbatch = 0;
  int rank = 0;
  const char* reason = "";  // why, for messages: "it consumes the output of the previous stage"
};

// An action waits for at most two things (a backward: its forward, and the next stage's
// gradient); on the stack, since the simulator asks for every action's.
struct Needs {
  Need items[2];
  int count = 0;
  const Need* begin() const { return items; }
  const Need* end() const { return items + count; }
};

// What `action` (F, B, I, W, SEND_F, SEND_B, RECV_F, RECV_B: OVERLAP_F_B's parts are asked
// one by one) waits for in `plan`, whose placement says whether data comes from a neighbour
// stage on the same rank or through a receive. A neighbour that does not exist (the first
// stage's input, the last stage's gradient, a receive with no peer) is not needed; UNSHARD,
// RESHARD and REDUCE_GRAD need nothing here (REDUCE_GRAD's order is validate.h's).
BATON_API Needs needs_of(const Plan& plan, const Action& action);

// The action that makes `event` (input gradients: B, and I on a split backward).
BATON_API ActionType made_by(Event event);
// The events running `type` makes happen for its own (stage, microbatch): a bit per Event.
BATON_API std::uint8_t made_events(ActionType type);
// True when running `type` makes `event` happen for its own (stage, microbatch).
BATON_API bool makes(ActionType type, Event event);

// What the stage keeps for the microbatch after `type` ran (F, B, I, W; any other action
// keeps what it found), on a stage that recomputes or not.
BATON_API Kept kept_after(ActionType type, Kept before, bool recompute);
// What it keeps while `type` runs: a recomputing B or I builds the whole graph again.
BATON_API Kept kept_while(ActionType type, Kept before, bool recompute);

// For messages: the action that makes `event` for (stage, microbatch): "1F0", "1B0 (or 1I0)".
BATON_API std::string event_text(Event event, int stage, int microbatch);

}  // namespace baton
