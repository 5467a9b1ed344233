// Evaluation (the `eval` section): every eval.every steps and after the last, a forward-only
// pass through the pipeline over held-out data — no backward, no gradient kept, the stages in
// eval mode — whose loss is the token mean over every row evaluated (ignore_index honoured),
// the number F.cross_entropy gives on all of them at once.
//
// The held-out rows: with data.source files, every row of eval.inputs / eval.targets once;
// otherwise eval.batches batches of data.batch_size rows drawn as the training data is, but
// with seed run.seed + 1 (and from eval.tokens when given): eval batch k is the batch step k
// of such a run would train on. They go through the pipeline in the training's microbatches
// (the same rows per microbatch), up to schedule.microbatches at a time, in a plan of
// forwards alone (baton/plan/forward_only.h); a last microbatch with fewer rows takes a pass
// of its own. Every replica evaluates all of them.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "baton/params.h"
#include "rank_pipeline.h"
#include "run_settings.h"

namespace baton_app {

class Evaluation {
 public:
  // Reads the held-out data (on every rank: a rank uses the inputs or the targets its stages
  // need), as `settings.eval` says, in the training's data settings. Throws ConfigError naming
  // the eval key when the data does not fit the model.
  Evaluation(const RunSettings& settings, RankPipeline& pipeline, const WorldInfo& world,
             const std::string& data_dir);
  ~Evaluation();

  bool due(int step, int last_step) const;
  // The pass; every rank of the pipeline calls it at the same step. Returns the loss on the
  // rank of the last stage, NAN elsewhere. Throws StepError/Error as a training step does.
  double run();

 private:
  struct Microbatch {
    int step;            // of the eval source
    std::int64_t first;  // rows [first, first + rows)
    std::int64_t rows;
  };
  baton::PipelineExecutor& executor_for(int microbatches, std::int64_t rows);

  EvalSettings settings_;
  RankPipeline& pipeline_;
  baton::Setting<std::vector<std::string>> validators_;  // validation.validators
  WorldInfo world_;
  std::chrono::milliseconds timeout_;
  std::unique_ptr<baton_models::BatchSource> source_;
  std::vector<Microbatch> microbatches_;
  int per_pass_ = 1;
  // By (microbatches, rows per microbatch): a pass's shape is fixed at its set-up.
  std::map<std::pair<int, std::int64_t>, std::unique_ptr<baton::PipelineExecutor>> executors_;
};

}  // namespace baton_app
