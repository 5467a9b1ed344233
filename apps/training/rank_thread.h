// A thread that computes as a rank of the run does. LibTorch's intra-op threads are an
// OpenMP setting of the thread that set them (run.threads, compute_setup.h): a thread the
// program starts begins with OpenMP's default instead — every core — and its matrix products
// then crowd the machine more than a rank's do.
#pragma once

#include <ATen/Parallel.h>

#include <thread>
#include <utility>

namespace baton_app {

// Starts `work` on a new thread with the calling thread's intra-op threads.
template <typename Work>
std::thread rank_thread(Work&& work) {
  const int threads = at::get_num_threads();
  return std::thread([threads, work = std::forward<Work>(work)]() mutable {
    at::set_num_threads(threads);
    work();
  });
}

}  // namespace baton_app
