// A thread the profiler starts to compute beside the timed unit computes with a rank's
// intra-op threads from its first operation: apps/training/rank_thread.h. LibTorch applies
// at::set_num_threads() to another thread only when that thread first asks for the setting
// (an elementwise operation above its grain size does); until then the thread has OpenMP's
// default, every core, and a matrix product — what a small microbatch's Linear runs first
// and often only — takes them all.
#include <gtest/gtest.h>
#include <omp.h>

#include <ATen/Parallel.h>

#include <thread>

#include "training/rank_thread.h"

namespace {

TEST(RankThread, ComputesWithTheCallersIntraOpThreadsFromItsFirstOperation) {
  const int before = at::get_num_threads();
  for (const int threads : {1, 2, 3}) {
    at::set_num_threads(threads);
    // What BLAS reads when the thread's first product starts: OpenMP's own setting, before
    // any LibTorch call could have applied the rank's.
    int seen = 0;
    std::thread thread = baton_app::rank_thread([&seen] { seen = omp_get_max_threads(); });
    thread.join();
    EXPECT_EQ(seen, threads);
  }
  at::set_num_threads(before);
}

}  // namespace
