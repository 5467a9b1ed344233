// What one rank of `baton bench pipeline` records while it trains: per step, when it started,
// how long it took, and the executor's timeline (compute, transfer posting, waiting); after
// the last step, the one-way time of a stage-boundary message. Written as text lines to a
// file the bench reads back (hidden option `baton run --bench-record FILE`).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "trainer.h"

namespace baton_app {

struct RecordedSpan {
  int kind = 0;  // baton::ActionSpan::Kind as int: 0 compute, 1 posting, 2 waiting, 3 reduce
  std::string name;
  double start = 0.0, end = 0.0;  // seconds since the executor's step started
};

struct RecordedStep {
  int step = 0;
  double started_s = 0.0;  // steady clock, comparable across processes of one machine
  double seconds = 0.0;    // the whole step: batch, zeroing, plan, optimizer, progress
  double executor_seconds = 0.0;
  int peak_activations = 0;          // baton::StepResult::peak_activations
  std::int64_t peak_heap_bytes = 0;  // baton::StepResult::peak_heap_bytes
  std::vector<RecordedSpan> spans;
};

struct PipelineRecord {
  std::vector<RecordedStep> steps;
  std::int64_t probe_bytes = 0;
  double probe_one_way_s = -1.0;    // < 0: no probe on this rank
  std::int64_t peak_rss_bytes = 0;  // the rank's peak resident memory (getrusage)
};

// Installs observers in `options` that collect the record; write() saves it.
class PipelineRecorder {
 public:
  explicit PipelineRecorder(std::string path) : path_(std::move(path)) {}
  void attach(TrainOptions* options);
  void write() const;

 private:
  std::string path_;
  PipelineRecord record_;
};

// Throws baton::Error naming the file when it is missing or malformed.
PipelineRecord read_pipeline_record(const std::string& path);

}  // namespace baton_app
