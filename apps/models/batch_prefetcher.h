// Makes the microbatches a rank will use, a microbatch at a time: a rank holds only the
// microbatches in flight and those made ahead — never a whole batch, so memory does not grow
// with the microbatch count. With `ahead` > 0 a background thread makes them a few ahead of the
// one in use, in the order a step uses them (and the next step's first ones during this step's
// end), so that the first stage starts a microbatch without waiting for its data to be made or
// read; with 0 each is made when asked for, on the caller's thread (on a machine whose CPUs
// all compute, a background thread would take its time from the ranks). Rows depend on the step and
// their place in the batch alone (BatchSource::rows is const), so a prefetched microbatch is
// exactly the one the step would have made itself.
#pragma once

#include <ATen/core/Tensor.h>

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <exception>
#include <map>
#include <mutex>
#include <thread>
#include <vector>

#include "batches.h"

namespace baton_models {

class BatchPrefetcher {
 public:
  // A step's rows are cut into `microbatches` equal microbatches (it must divide them).
  // `keep_inputs` / `keep_targets`: whether this rank uses them; the others are dropped as
  // soon as a microbatch is made (every rank makes the same rows from the same seed). `ahead`:
  // how many microbatches past the newest asked for are made in the background (0: none, and
  // no background thread).
  BatchPrefetcher(const BatchSource& source, int microbatches, bool keep_inputs = true,
                  bool keep_targets = true, int ahead = 2);
  ~BatchPrefetcher();
  BatchPrefetcher(const BatchPrefetcher&) = delete;
  BatchPrefetcher& operator=(const BatchPrefetcher&) = delete;

  // Microbatch `microbatch` (from 0) of step `step`: its inputs, or its targets. Each is handed
  // out once: a microbatch is let go of when every part the rank keeps was taken. A failure of
  // the background work is rethrown here, for the microbatch it belonged to.
  std::vector<at::Tensor> inputs(int step, int microbatch);
  at::Tensor targets(int step, int microbatch);

  // Microbatches made so far (by the background thread or on demand): for tests.
  std::int64_t made() const;
  // Waits until the background thread has made every microbatch it may make ahead and waits
  // to be asked for more (true), or `guard` passed (false): for tests, which then know what
  // made() is without a clock.
  bool wait_until_caught_up(std::chrono::milliseconds guard) const;

 private:
  struct Made {
    Batch batch;
    std::exception_ptr failure;
    bool inputs_taken = false;
    bool targets_taken = false;
  };

  // Waits for (or makes) microbatch number `sequence`, then hands out a part of it.
  Batch take(std::int64_t sequence, bool inputs);
  // Hands out a part of `found` (mutex_ held), letting it go once every kept part was taken.
  Batch hand_out(std::map<std::int64_t, Made>::iterator found, bool inputs);
  Made make(std::int64_t sequence) const;
  void work();

  const BatchSource& source_;
  int microbatches_;
  std::int64_t rows_;  // per microbatch
  bool keep_inputs_, keep_targets_;
  int ahead_;
  mutable std::mutex mutex_;
  mutable std::condition_variable changed_;
  std::map<std::int64_t, Made> ready_;  // by sequence: (step - 1) x microbatches + microbatch
  std::int64_t next_ = -1;              // the next the worker makes (-1: nothing asked yet)
  std::int64_t until_ = -1;             // the worker makes up to this one
  std::int64_t making_ = -1;            // the one the worker is making (-1: none)
  std::int64_t made_ = 0;
  bool closing_ = false;
  std::thread worker_;
};

}  // namespace baton_models
