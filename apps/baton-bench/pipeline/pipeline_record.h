// What one rank of `baton bench pipeline` records while it trains: per step, when it started,
// how long it took, the executor's spans (typed: compute, posting, waiting, reductions) and
// the most heap in use after a compute action; after the last step, the one-way time of a
// stage-boundary message. Written as JSON to a file the bench reads back (`baton-bench
// pipeline-rank --record FILE`).
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "baton/runtime/step_observer.h"
#include "training/trainer.h"

namespace baton_app {

struct RecordedStep {
  int step = 0;
  double started_s = 0.0;  // steady clock, comparable across processes of one machine
  double seconds = 0.0;    // the whole step: batch, zeroing, plan, optimizer, progress
  double executor_seconds = 0.0;
  int peak_activations = 0;           // baton::StepResult::peak_activations
  std::int64_t peak_heap_bytes = 0;   // the most heap in use after a compute action
  std::int64_t start_heap_bytes = 0;  // the heap in use as the step started
  std::vector<baton::StepSpan> spans;
};

struct PipelineRecord {
  std::vector<RecordedStep> steps;
  std::int64_t probe_bytes = 0;
  double probe_one_way_s = -1.0;    // < 0: no probe on this rank
  std::int64_t peak_rss_bytes = 0;  // the rank's peak resident memory (getrusage)
};

// Installs the observers in `options` that collect the record; write() saves it. It hears
// the executor's spans (a StepObserver) and the training loop (a TrainingObserver): each
// step as it ends, and once trained, it times the stage-boundary message itself.
class PipelineRecorder {
 public:
  explicit PipelineRecorder(std::string path);
  ~PipelineRecorder();
  void attach(TrainOptions* options);
  void write() const;

 private:
  class SpanCollector;
  class LoopListener;

  std::string path_;
  std::shared_ptr<SpanCollector> collector_;
  std::shared_ptr<LoopListener> listener_;
  std::string steps_text_;  // the steps so far, as the record's JSON array holds them
  std::int64_t probe_bytes_ = 0;
  double probe_one_way_s_ = -1.0;  // < 0: no probe on this rank
};

// Throws baton::Error naming the file when it is missing or malformed.
PipelineRecord read_pipeline_record(const std::string& path);

}  // namespace baton_app
