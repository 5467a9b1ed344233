#include "batch_prefetcher.h"

#include <ATen/Parallel.h>

#include <algorithm>
#include <string>

#include "baton/error.h"

namespace baton_models {

BatchPrefetcher::BatchPrefetcher(const BatchSource& source, int microbatches, bool keep_inputs,
                                 bool keep_targets, int ahead)
    : source_(source),
      microbatches_(microbatches),
      rows_(microbatches > 0 ? source.rows_per_step() / microbatches : 0),
      keep_inputs_(keep_inputs),
      keep_targets_(keep_targets),
      ahead_(std::max(ahead, 0)) {
  if (microbatches < 1 || source.rows_per_step() % microbatches != 0) {
    throw baton::Error("a batch of " + std::to_string(source.rows_per_step()) +
                       " rows does not split into " + std::to_string(microbatches) +
                       " microbatches");
  }
  if (ahead_ == 0) return;
  worker_ = std::thread([this, threads = at::get_num_threads()] {
    // OpenMP's thread count is per thread: the worker follows the rank's (run.threads).
    at::set_num_threads(threads);
    work();
  });
}

BatchPrefetcher::~BatchPrefetcher() {
  {
    const std::lock_guard<std::mutex> lock(mutex_);
    closing_ = true;
  }
  changed_.notify_all();
  if (worker_.joinable()) worker_.join();
}

std::vector<at::Tensor> BatchPrefetcher::inputs(int step, int microbatch) {
  return take(std::int64_t{step - 1} * microbatches_ + microbatch, true).inputs;
}

at::Tensor BatchPrefetcher::targets(int step, int microbatch) {
  return take(std::int64_t{step - 1} * microbatches_ + microbatch, false).targets;
}

std::int64_t BatchPrefetcher::made() const {
  const std::lock_guard<std::mutex> lock(mutex_);
  return made_;
}

bool BatchPrefetcher::wait_until_caught_up(std::chrono::milliseconds guard) const {
  std::unique_lock<std::mutex> lock(mutex_);
  return changed_.wait_for(lock, guard, [&] {
    return closing_ || !worker_.joinable() || (making_ < 0 && (next_ < 0 || next_ > until_));
  });
}

BatchPrefetcher::Made BatchPrefetcher::make(std::int64_t sequence) const {
  Made made;
  try {
    const int step = static_cast<int>(sequence / microbatches_) + 1;
    const std::int64_t microbatch = sequence % microbatches_;
    made.batch = source_.rows(step, microbatch * rows_, rows_);
    if (!keep_inputs_) made.batch.inputs.clear();
    if (!keep_targets_) made.batch.targets = at::Tensor();
  } catch (...) {
    made.failure = std::current_exception();
  }
  return made;
}

Batch BatchPrefetcher::take(std::int64_t sequence, bool inputs) {
  std::unique_lock<std::mutex> lock(mutex_);
  // A step's microbatches are all used within it: older ones left over (a failed step) go.
  ready_.erase(ready_.begin(), ready_.lower_bound(sequence - sequence % microbatches_));
  auto found = ready_.find(sequence);
  const bool taken_before =
      found != ready_.end() && (inputs ? found->second.inputs_taken : found->second.targets_taken);
  const bool background = ahead_ > 0 && !taken_before && (sequence >= next_ || sequence == making_);
  if (found == ready_.end() && background && sequence > until_ && sequence != making_) {
    next_ = sequence;  // a jump: the first ask, a resume
  }
  if (ahead_ > 0 && !taken_before) {
    until_ = std::max(until_, sequence + ahead_);
    changed_.notify_all();
  }
  if (found == ready_.end() && background) {
    changed_.wait(lock, [&] { return ready_.count(sequence) > 0; });
    found = ready_.find(sequence);
  } else if (found == ready_.end() || taken_before) {
    // Made here: there is no background thread, or it was asked for again after it was
    // handed out (then it is not kept).
    lock.unlock();
    Made made = make(sequence);
    lock.lock();
    ++made_;
    if (taken_before) {
      if (made.failure) std::rethrow_exception(made.failure);
      return inputs ? Batch{std::move(made.batch.inputs), {}}
                    : Batch{{}, std::move(made.batch.targets)};
    }
    found = ready_.emplace(sequence, std::move(made)).first;
  }
  return hand_out(found, inputs);
}

Batch BatchPrefetcher::hand_out(std::map<std::int64_t, Made>::iterator found, bool inputs) {
  Made& made = found->second;
  Batch part;
  if (inputs) {
    made.inputs_taken = true;
    part.inputs = std::move(made.batch.inputs);
  } else {
    made.targets_taken = true;
    part.targets = std::move(made.batch.targets);
  }
  std::exception_ptr failure = made.failure;
  if ((made.inputs_taken || !keep_inputs_) && (made.targets_taken || !keep_targets_)) {
    ready_.erase(found);
  }
  if (failure) std::rethrow_exception(failure);
  return part;
}

void BatchPrefetcher::work() {
  std::unique_lock<std::mutex> lock(mutex_);
  for (;;) {
    changed_.wait(lock, [&] { return closing_ || (next_ >= 0 && next_ <= until_); });
    if (closing_) return;
    const std::int64_t sequence = next_++;
    making_ = sequence;
    lock.unlock();
    Made made = make(sequence);
    lock.lock();
    making_ = -1;
    ++made_;
    ready_.insert_or_assign(sequence, std::move(made));
    changed_.notify_all();
  }
}

}  // namespace baton_models
