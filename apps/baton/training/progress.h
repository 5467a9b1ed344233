// Progress of a run, shown on rank 0: step, loss, samples/s and ETA — a bar on a terminal,
// plain periodic lines otherwise — and the per-step metrics file (JSON lines). The loss
// lives on the rank of the last stage; it reaches rank 0 through the rendezvous store.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "baton/config.h"
#include "baton/plan/plan.h"
#include "baton/runtime/executor.h"
#include "baton/store.h"
#include "world_env.h"

namespace baton_app {

class Progress {
 public:
  Progress(const baton::Config& config, const WorldInfo& world, std::shared_ptr<baton::Store> store,
           int steps, const baton::Plan& plan);
  // A resumed run: keeps the metrics of steps 1..`step` already on disk.
  void resume_after(int step);
  // `tokens`: tokens in the batch for language models (shown as tokens/s), 0 otherwise.
  void step_done(int step, const baton::StepResult& result, double seconds, std::int64_t samples,
                 std::int64_t tokens = 0);
  // `trace_path`: where the run's trace went (printed; empty: none).
  void finish(const std::string& trace_path = "");

 private:
  // Where one rank's time went in a step (from the executor).
  struct RankTime {
    double compute = 0, comm = 0, step = 0;
  };
  struct Line {
    int step;
    double loss;
    double seconds;
    double samples_per_second;
    double tokens_per_second;  // 0: not a language model
    double bubble;             // measured: 1 - compute / (ranks x the slowest rank's step)
    std::vector<RankTime> ranks;
  };
  // Every other rank sends rank 0 one message per step: its times, and the loss when it
  // holds the last stage. On rank 0: every rank's times, and the loss in `loss` (NAN: none).
  std::vector<RankTime> gather_on_rank0(int step, const baton::StepResult& result, double* loss);
  void write_metrics() const;

  WorldInfo world_;
  std::shared_ptr<baton::Store> store_;
  int steps_;
  int log_every_;
  bool last_stage_here_;
  bool terminal_;
  std::string metrics_path_;
  std::vector<Line> lines_;
  std::string earlier_metrics_;  // lines of the steps before a resume, as written then
  double elapsed_ = 0;
};

}  // namespace baton_app
