// What ran on a rank during a step, told as it happens to whoever listens: the run's trace,
// the benches' recorders. A span is typed — its kind and the plan actions it covers — so a
// listener never parses a name back. With no observer the executor builds no span at all.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "baton/export.h"
#include "baton/plan/action.h"
#include "baton/plan/action_rules.h"

namespace baton {

enum class SpanKind {
  kCompute,         // `action` (F, B, I, W, OVERLAP_F_B), from when its inputs were there
  kPostTransfers,   // `transfers`: a run of adjacent SEND/RECV actions posted as one batch
  kPostReceives,    // `transfers`: receives posted ahead of the plan (tag matching)
  kPostReduction,   // `action` (REDUCE_GRAD): gradients copied into buckets, all-reduces posted
  kWaitReceive,     // `action` (RECV_F/RECV_B): a compute action waiting for its data
  kWaitSends,       // the step's end: its sends taken by their receivers
  kWaitReductions,  // the step's end: the gradient all-reduces still running
  kReduction,       // `action` (REDUCE_GRAD): from its post until the rank saw it complete; it
                    // runs beside the rank's work, so it is not part of compute or comm time
};

// "compute", "post_transfers", ... (stable: bench records store it).
BATON_API const char* span_kind_name(SpanKind kind);
// The inverse of span_kind_name(); throws baton::Error naming `name` when it is none.
BATON_API SpanKind span_kind_from_name(const std::string& name);
// Compute (F, B, I, W, OVERLAP_F_B): they are part of compute time; the rest of a step's
// spans but kReduction are communication.
inline bool is_compute_span(SpanKind kind) {
  return kind == SpanKind::kCompute;
}

struct StepSpan {
  SpanKind kind = SpanKind::kCompute;
  Action action;                  // see SpanKind
  std::vector<Action> transfers;  // kPostTransfers, kPostReceives
  // kPostTransfers, kPostReceives: the bytes the posted sends carry and the posted receives
  // take (as they cross: precision.wire's dtype).
  std::int64_t bytes_sent = 0;
  std::int64_t bytes_received = 0;
  double start = 0.0;  // seconds since the executor's step started
  double end = 0.0;
  // kCompute: the action's plan step, and what the rank's stages hold for their microbatches
  // once it ran, read from the tensors (the simulator's TimelineEntry::kept says the same).
  int timestep = -1;
  KeptTally kept;
};

// For people: "1F3", "SEND_F 1F3 RECV_B 1B2" style lists, "wait 1RECV_F3", "wait sends".
BATON_API std::string describe_span(const StepSpan& span);

class BATON_API StepObserver {
 public:
  virtual ~StepObserver();
  // Asked as each step starts: an observer that does not listen to this step costs nothing
  // in it (a trace that has its first steps stops listening).
  virtual bool listens() const { return true; }
  // `training_step` counts run_step() calls from 1; called as the step's clock starts.
  virtual void step_started(int training_step) { (void)training_step; }
  // In the order the spans end, except kReduction, told when the step waits for it.
  virtual void span(const StepSpan& span) = 0;
};

}  // namespace baton
