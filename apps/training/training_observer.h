// What a program that runs training for its own ends (a bench) hears from the step loop,
// beside the executor's spans (baton::StepObserver): each training step as it ends, and the
// rank once trained, with its pipeline still connected. The trainer knows nothing of benches:
// what a bench measures, it measures here.
#pragma once

#include <chrono>

#include "baton/runtime/executor.h"

namespace baton_app {

struct RankPipeline;
struct WorldInfo;

// The rank after its last step, before its transport closes.
struct TrainedRank {
  const RankPipeline& pipeline;
  const WorldInfo& world;
  std::chrono::milliseconds timeout;
};

class TrainingObserver {
 public:
  virtual ~TrainingObserver();
  // A training step ended: when it started (steady clock, seconds), how long it took in all
  // (batch, zeroing, plan, optimizer, progress) and the executor's result.
  virtual void step_ended(int step, double started_s, double seconds,
                          const baton::StepResult& result);
  // Every step is done; the rank's peers are there until each has returned from this.
  virtual void trained(const TrainedRank& rank);
};

}  // namespace baton_app
