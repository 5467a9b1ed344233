// Internal: the clock of the step a rank is running and where its time went. Every part of
// the executor records its spans here; each adds to the compute or communication total, and
// goes to the observers only when someone listens (with none, no span is built).
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <vector>

#include "baton/runtime/step_observer.h"

namespace baton {

class StepSpans {
 public:
  explicit StepSpans(std::vector<std::shared_ptr<StepObserver>> observers)
      : observers_(std::move(observers)) {}

  // Someone listens to the step under way.
  bool observed() const { return !listening_.empty(); }

  // Restarts the clock and the totals for training step `training_step`.
  void start(int training_step);
  // Seconds since start().
  double now() const {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
  }

  // A span of `kind` about `action` (see SpanKind for which kinds carry one).
  void add(SpanKind kind, double start, double end, const Action& action);
  // A compute action's span: its plan step and what the rank holds after it (`kept` is asked
  // for only when someone listens).
  template <typename KeptNow>
  void add_compute(double start, double end, const Action& action, int timestep,
                   const KeptNow& kept_now) {
    count(SpanKind::kCompute, end - start);
    if (!observed()) return;
    StepSpan span = make_span(SpanKind::kCompute, start, end);
    span.action = action;
    span.timestep = timestep;
    span.kept = kept_now();
    tell(span);
  }
  // A span without an action (kWaitSends, kWaitReductions).
  void add(SpanKind kind, double start, double end);
  // A post of several transfers (kPostTransfers, kPostReceives), and the bytes they move.
  void add(SpanKind kind, double start, double end, const std::vector<Action>& transfers,
           std::int64_t bytes_sent, std::int64_t bytes_received);

  double compute_seconds() const { return compute_seconds_; }
  double comm_seconds() const { return comm_seconds_; }

 private:
  static StepSpan make_span(SpanKind kind, double start, double end);
  void count(SpanKind kind, double seconds);
  void tell(const StepSpan& span) const;

  std::vector<std::shared_ptr<StepObserver>> observers_;
  std::vector<StepObserver*> listening_;  // to this step
  std::chrono::steady_clock::time_point start_;
  double compute_seconds_ = 0.0;
  double comm_seconds_ = 0.0;
};

}  // namespace baton
