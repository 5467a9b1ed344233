// What the machine offers a rank, without LibTorch: CPUs in this process's affinity mask. (The
// BLAS probe is in blas_detect.cc; applying threads to LibTorch is the runtime's threads.cc.)
#include <sched.h>

#include <algorithm>

#include "baton/runtime/compute_environment.h"

namespace baton {

int cpus_available() {
  cpu_set_t set;
  CPU_ZERO(&set);
  if (sched_getaffinity(0, sizeof(set), &set) == 0) return std::max(1, CPU_COUNT(&set));
  return 1;
}

int default_threads_per_rank(int local_ranks) {
  return std::max(1, cpus_available() / std::max(1, local_ranks));
}

}  // namespace baton
