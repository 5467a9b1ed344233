#include "batch_prefetcher.h"

#include <ATen/Parallel.h>

namespace baton_models {

BatchPrefetcher::BatchPrefetcher(const BatchSource& source, bool keep_inputs, bool keep_targets)
    : source_(source),
      keep_inputs_(keep_inputs),
      keep_targets_(keep_targets),
      worker_([this, threads = at::get_num_threads()] {
        // OpenMP's thread count is per thread: the worker follows the rank's (run.threads).
        at::set_num_threads(threads);
        work();
      }) {}

BatchPrefetcher::~BatchPrefetcher() {
  {
    const std::lock_guard<std::mutex> lock(mutex_);
    closing_ = true;
  }
  changed_.notify_all();
  worker_.join();
}

Batch BatchPrefetcher::take(int step) {
  std::optional<Batch> batch;
  {
    std::unique_lock<std::mutex> lock(mutex_);
    // Wait only for a batch already being made for this step.
    changed_.wait(lock, [&] { return wanted_ != step || ready_step_ == step || failure_; });
    if (ready_step_ == step && ready_) {
      batch = std::move(ready_);
    } else if (wanted_ == step && failure_) {
      std::exception_ptr failure = failure_;
      failure_ = nullptr;
      std::rethrow_exception(failure);
    }
    ready_.reset();
    ready_step_ = 0;
    failure_ = nullptr;
    wanted_ = step + 1;
  }
  changed_.notify_all();
  if (!batch) batch = make(step);  // the first step, or after a jump (resume)
  return std::move(*batch);
}

Batch BatchPrefetcher::make(int step) const {
  Batch batch = source_.batch(step);
  if (!keep_inputs_) batch.inputs.clear();
  if (!keep_targets_) batch.targets = at::Tensor();
  return batch;
}

void BatchPrefetcher::work() {
  std::unique_lock<std::mutex> lock(mutex_);
  for (;;) {
    changed_.wait(lock, [&] { return closing_ || (wanted_ != 0 && ready_step_ != wanted_); });
    if (closing_) return;
    const int step = wanted_;
    lock.unlock();
    std::optional<Batch> made;
    std::exception_ptr failure;
    try {
      made = make(step);
    } catch (...) {
      failure = std::current_exception();
    }
    lock.lock();
    if (wanted_ == step) {
      ready_ = std::move(made);
      ready_step_ = step;
      failure_ = failure;
    }
    changed_.notify_all();
  }
}

}  // namespace baton_models
