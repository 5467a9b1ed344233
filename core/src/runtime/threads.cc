#include <ATen/Parallel.h>
#include <sched.h>

#include <algorithm>
#include <utility>

#include "baton/error.h"
#include "baton/runtime/compute_environment.h"

namespace baton {

void apply_threads(int threads) {
  if (threads < 1) {
    throw Error("threads per rank must be at least 1, got " + std::to_string(threads));
  }
  at::set_num_threads(threads);
  try {
    at::set_num_interop_threads(threads);
  } catch (const std::exception&) {
    // Already started or set: LibTorch allows it once per process. Harmless: the runtime
    // does not use inter-op parallelism on its hot path.
  }
}

std::thread start_rank_thread(std::function<void()> work) {
  const int threads = at::get_num_threads();
  return std::thread([threads, work = std::move(work)] {
    at::set_num_threads(threads);
    work();
  });
}

int intra_op_threads() {
  return at::get_num_threads();
}

}  // namespace baton
