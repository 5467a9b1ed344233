// The trace of a real run: each rank records what it ran during the first `trace.steps`
// steps (spans from the executor, placed on a wall clock), writes them to
// <trace dir>/ranks/rank<r>.json, and rank 0 merges every rank's into one Chrome-trace
// JSON (one process per rank, "compute" and "comms" threads), renders it as SVG, and puts
// the simulated plan's trace and picture beside it.
#pragma once

#include <chrono>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "baton/config.h"
#include "baton/plan/chrome_trace.h"
#include "baton/plan/plan.h"
#include "baton/runtime/step_observer.h"
#include "baton/store.h"

namespace baton_app {

// An SVG timeline of the same events as the Chrome trace: a row per rank with its two lanes,
// bars colored by kind (F, B, I, W, comms), a time axis in ms. Opens in any browser.
std::string render_timeline_svg(const std::vector<baton::TraceEvent>& events, int ranks,
                                const std::string& title);

struct TraceSettings {
  bool enabled = true;  // trace.enabled, and at least one step to record
  int steps = 3;        // trace.steps: the first steps recorded
  std::string path;     // the merged trace (trace.json); the rest goes beside it
};

// Listens to the executor (a baton::StepObserver) during the first steps.
class RunTrace : public baton::StepObserver {
 public:
  // `pipeline_ranks`: one replica's ranks (data parallelism), for the trace's rank names.
  RunTrace(const TraceSettings& settings, int rank, int world_size,
           std::shared_ptr<baton::Store> store, std::chrono::milliseconds timeout,
           int pipeline_ranks = 0);

  bool enabled() const { return enabled_; }
  // The training step about to run (its spans are labelled with it).
  void begin_step(int step);
  // baton::StepObserver: the executor's clock starts (placed on the system clock here), and
  // each span as it ends.
  bool listens() const override { return recording_; }
  void step_started(int training_step) override;
  void span(const baton::StepSpan& span) override;
  // Writes this rank's part; on rank 0, waits for the others and writes the merged trace,
  // its SVG and the simulated plan's (with `recompute_stages` recomputing, as in the run).
  // Returns the merged trace's path on rank 0.
  std::string finish(const baton::Plan& lowered_plan, const std::set<int>& recompute_stages);

 private:
  bool enabled_;
  int steps_;
  int rank_;
  int world_size_;
  int pipeline_ranks_;
  std::shared_ptr<baton::Store> store_;
  std::chrono::milliseconds timeout_;
  std::string path_;
  std::vector<baton::TraceEvent> events_;
  int recorded_ = 0;
  bool recording_ = false;  // the step under way is one of the first `steps_`
  int step_ = 0;
  double wall_start_us_ = 0.0;
};

}  // namespace baton_app
