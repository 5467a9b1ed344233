// Progress of a run, shown on rank 0: step, loss, samples/s and ETA — a bar on a terminal,
// plain periodic lines otherwise — and the per-step metrics file (JSON lines, after a header
// line saying what the run ran on). The loss lives on the rank of the last stage; it reaches
// rank 0 through the rendezvous store.
//
// All of it happens on a background thread: store traffic, waiting for the other ranks'
// figures, printing and the (fsynced) metrics file would otherwise sit between two training
// steps, on the critical path of the pipeline.
#pragma once

#include <atomic>
#include <cmath>
#include <condition_variable>
#include <deque>
#include <exception>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "baton/config.h"
#include "baton/plan/plan.h"
#include "baton/runtime/executor.h"
#include "baton/store.h"
#include "loss_scaler.h"
#include "world_info.h"

namespace baton_app {

struct ProgressSettings {
  int log_every = 1;    // run.log_every
  std::string run_dir;  // metrics.jsonl goes here
};

class Progress {
 public:
  // `header_json`: a JSON object written as the metrics file's first line.
  Progress(const ProgressSettings& settings, const WorldInfo& world,
           std::shared_ptr<baton::Store> store, int steps, const baton::Plan& plan,
           std::string header_json);
  ~Progress();
  Progress(const Progress&) = delete;
  Progress& operator=(const Progress&) = delete;
  // A resumed run: keeps the metrics of steps 1..`step` already on disk.
  void resume_after(int step);
  // `tokens`: tokens in the batch for language models (shown as tokens/s), 0 otherwise;
  // `lr`: the learning rate the step's update used (NAN: not shown); `eval_loss`: the
  // held-out loss after the step, on the last stage's rank (NAN: none). Returns at once; a
  // failure of earlier background work (the store) is rethrown here.
  // `loss_scale`: precision.loss_scale's part (the same on every rank: rank 0's is shown).
  void step_done(int step, const baton::StepResult& result, double seconds, std::int64_t samples,
                 std::int64_t tokens = 0, double lr = NAN, double eval_loss = NAN,
                 const LossScaleReport& loss_scale = {});
  // Waits for the background work, then prints the summary. `trace_path`: where the run's
  // trace went (printed; empty: none). Rethrows a background failure.
  void finish(const std::string& trace_path = "");

 private:
  // Where one rank's time went in a step (from the executor).
  struct RankTime {
    double compute = 0, comm = 0, step = 0;
    double exposed_reduce = 0;  // data parallelism: the wait for the gradient all-reduces
  };
  struct Report {
    int step;
    double compute, comm, executor_seconds, exposed_reduce, loss;  // loss: NAN unless here
    double seconds;
    std::int64_t samples, tokens;
    double lr, grad_norm;    // NAN: none
    double counted_targets;  // the targets the loss counted (token-mean losses); NAN: none
    double eval_loss;        // NAN: none
    LossScaleReport loss_scale;
  };
  struct Line {
    int step;
    double loss;
    double lr, grad_norm, counted_targets, eval_loss;  // NAN: none
    double seconds;
    double samples_per_second;
    double tokens_per_second;  // 0: not a language model
    double bubble;             // measured: 1 - compute / (ranks x the slowest rank's step)
    std::vector<RankTime> ranks;
    LossScaleReport loss_scale;
  };
  // Every other rank sends rank 0 one message per step: its times, and the loss when it
  // holds the last stage. On rank 0: every rank's times, and the loss in `loss` (NAN: none).
  std::vector<RankTime> gather_on_rank0(const Report& report, double* loss, double* counted_targets,
                                        double* eval_loss);
  std::vector<std::uint8_t> wait_for_key(const std::string& key);
  void handle(const Report& report);
  void work();
  void rethrow_failure();
  // Appends `line` to the metrics file (created, with the header and the lines kept from
  // before a resume, at the first step): one write per step, never a rewrite of the file.
  void append_metrics(const Line& line);

  WorldInfo world_;
  std::shared_ptr<baton::Store> store_;
  int steps_;
  int log_every_;
  bool last_stage_here_;
  bool terminal_;
  std::string metrics_path_;
  int metrics_fd_ = -1;
  std::vector<Line> lines_;
  std::string earlier_metrics_;  // lines of the steps before a resume, as written then
  std::string header_;
  double elapsed_ = 0;

  std::mutex mutex_;
  std::condition_variable wake_;
  std::deque<Report> queue_;
  bool closing_ = false;
  std::atomic<bool> abandoned_{false};  // destroyed without finish(): stop waiting for peers
  std::exception_ptr failure_;
  std::thread worker_;
};

}  // namespace baton_app
