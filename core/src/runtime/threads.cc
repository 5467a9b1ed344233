#include <ATen/Parallel.h>
#include <sched.h>

#include <algorithm>

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

int intra_op_threads() {
  return at::get_num_threads();
}

}  // namespace baton
