#include "evaluation.h"

#include <ATen/ATen.h>
#include <torch/csrc/autograd/grad_mode.h>

#include <algorithm>
#include <cmath>

#include "baton/error.h"
#include "baton/plan/forward_only.h"
#include "baton/plugin.h"
#include "model_settings.h"

namespace baton_app {
namespace {

// Stages in eval mode for the pass, back in training mode however it ends.
class EvalMode {
 public:
  explicit EvalMode(const std::vector<std::shared_ptr<baton::Stage>>& stages) : stages_(stages) {
    for (const auto& stage : stages_) stage->set_training(false);
  }
  ~EvalMode() {
    for (const auto& stage : stages_) stage->set_training(true);
  }

 private:
  const std::vector<std::shared_ptr<baton::Stage>>& stages_;
};

}  // namespace

Evaluation::Evaluation(const RunSettings& settings, RankPipeline& pipeline, const WorldInfo& world,
                       const std::string& data_dir)
    : settings_(settings.eval),
      pipeline_(pipeline),
      validators_(settings.stages.validators),
      world_(world),
      timeout_(settings.timeout) {
  if (settings_.every <= 0) return;
  // The training's data settings, pointed at the held-out data.
  baton_models::DataSettings data = settings.data;
  data.seed += 1;
  const bool files = data.source.value == baton_models::DataSource::kFiles;
  if (files) {
    data.inputs = settings_.inputs;
    data.targets = settings_.targets;
    data.batch_size = 1;  // rows are taken by index below; a file of any size is fine
  } else if (!settings_.tokens.value.empty()) {
    data.tokens = settings_.tokens;
  }
  source_ = baton_models::make_batch_source(data, pipeline_.model, data_dir);
  // In the training's microbatches: the same rows per microbatch, so a pass is shaped as a
  // step is (a smaller last one gets a pass of its own).
  const int training_microbatches = pipeline_.plan.plan().num_microbatches;
  const std::int64_t rows_per_microbatch =
      pipeline_.batches->rows_per_step() / training_microbatches;
  per_pass_ = training_microbatches;
  auto add_rows = [&](int step, std::int64_t rows) {
    for (std::int64_t first = 0; first < rows; first += rows_per_microbatch) {
      microbatches_.push_back({step, first, std::min(rows_per_microbatch, rows - first)});
    }
  };
  if (files) {
    add_rows(1, source_->rows_held());
  } else {
    for (int step = 1; step <= settings_.batches; ++step) add_rows(step, data.batch_size);
  }
}

Evaluation::~Evaluation() = default;

bool Evaluation::due(int step, int last_step) const {
  return settings_.every > 0 && (step % settings_.every == 0 || step == last_step);
}

baton::PipelineExecutor& Evaluation::executor_for(int microbatches, std::int64_t rows) {
  auto& slot = executors_[{microbatches, rows}];
  if (slot) return *slot;
  baton::ExecutorOptions options;
  set_rank_executor_options(options, pipeline_, world_, timeout_);
  slot = std::make_unique<baton::PipelineExecutor>(
      world_.pipeline_rank, baton::forward_only_plan(pipeline_.plan.plan(), microbatches),
      pipeline_.local.stages, pipeline_.transport,
      make_validators(validators_, pipeline_.plan.loader), pipeline_.model.loss, options);
  // Every rank sets up the same passes in the same order (the shapes' handshake).
  const Microbatch& first = microbatches_.front();
  baton::StepData data;
  data.inputs = [&](int) { return source_->rows(first.step, first.first, rows).inputs; };
  slot->setup(data);
  return *slot;
}

double Evaluation::run() {
  const EvalMode eval_mode(pipeline_.local.stages);
  const at::NoGradGuard no_gradients;
  double sum = 0.0;
  double counted = 0.0;
  bool has_loss = false;
  for (std::size_t start = 0; start < microbatches_.size();) {
    // A pass: up to per_pass_ microbatches of one row count.
    const std::int64_t rows = microbatches_[start].rows;
    std::size_t end = start;
    while (end < microbatches_.size() && end - start < static_cast<std::size_t>(per_pass_) &&
           microbatches_[end].rows == rows) {
      ++end;
    }
    const int count = static_cast<int>(end - start);
    baton::PipelineExecutor& executor = executor_for(count, rows);
    baton::StepData data;
    data.inputs = [this, start](int mb) {
      const Microbatch& m = microbatches_[start + static_cast<std::size_t>(mb)];
      return source_->rows(m.step, m.first, m.rows).inputs;
    };
    data.targets = [this, start](int mb) {
      const Microbatch& m = microbatches_[start + static_cast<std::size_t>(mb)];
      return source_->rows(m.step, m.first, m.rows).targets;
    };
    const baton::StepResult result = executor.run_step(data);
    if (result.has_loss) {
      has_loss = true;
      // A token mean: sums over counted targets; a scripted loss's means, weighted by rows.
      const double weight = pipeline_.model.count_targets
                                ? static_cast<double>(result.counted_targets)
                                : static_cast<double>(rows * count);
      sum += result.loss * weight;
      counted += weight;
    }
    start = end;
  }
  if (!has_loss) return NAN;
  if (counted <= 0) {
    throw baton::Error(
        "eval: no target of the held-out data is counted by the loss (every one "
        "equals model.ignore_index); its mean is undefined");
  }
  return sum / counted;
}

}  // namespace baton_app
