// Makes the next step's batch on a background thread while the current step trains, so that
// the first stage starts a step without waiting for its data to be made or read. Batches
// depend on the step alone (BatchSource::batch is const), so a prefetched batch is exactly
// the one the step would have made itself.
#pragma once

#include <condition_variable>
#include <exception>
#include <mutex>
#include <optional>
#include <thread>

#include "batches.h"

namespace baton_models {

class BatchPrefetcher {
 public:
  // `keep_inputs` / `keep_targets`: whether this rank uses them; the others are dropped as
  // soon as a batch is made (every rank makes the same batches from the same seed).
  BatchPrefetcher(const BatchSource& source, bool keep_inputs = true, bool keep_targets = true);
  ~BatchPrefetcher();
  BatchPrefetcher(const BatchPrefetcher&) = delete;
  BatchPrefetcher& operator=(const BatchPrefetcher&) = delete;

  // The batch of `step`, then starts making the batch of `step + 1`. A failure of the
  // background work is rethrown here, for the step it belonged to.
  Batch take(int step);

 private:
  void work();
  Batch make(int step) const;

  const BatchSource& source_;
  bool keep_inputs_, keep_targets_;
  std::mutex mutex_;
  std::condition_variable changed_;
  int wanted_ = 0;      // the step the worker should make next (0: none)
  int ready_step_ = 0;  // the step `ready_` holds
  std::optional<Batch> ready_;
  std::exception_ptr failure_;
  bool closing_ = false;
  std::thread worker_;
};

}  // namespace baton_models
