// A thread that computes as a rank of the run does. LibTorch keeps the process's intra-op
// threads (run.threads, compute_setup.h) but applies them to another thread only when that
// thread first asks for the setting — an elementwise operation above its grain size does.
// Until then the thread has OpenMP's default, every core, and a matrix product — what a small
// microbatch's Linear runs first, and often only — takes them all, crowding the machine
// more than a rank does.
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
