// The compute a rank runs with, set before any tensor work: threads per rank (run.threads,
// else OMP_NUM_THREADS as PyTorch reads it, else the CPUs available shared out among the
// local ranks) and the BLAS LibTorch resolved to.
#pragma once

#include <string>

#include <nlohmann/json_fwd.hpp>

#include "baton/runtime/compute_environment.h"
#include "world_info.h"

namespace baton_app {

struct RankCompute {
  int threads = 1;
  std::string threads_origin;  // "run.threads", "OMP_NUM_THREADS" or "2 CPUs / 2 local ranks"
  baton::BlasInfo blas;
  std::string allocator;  // baton::apply_allocator_policy()'s description
  // "OpenBLAS 0.3.21 (openmp), 1 thread per rank (2 CPUs / 2 local ranks)"
  std::string describe() const;
  // Adds "threads", "threads_origin", "blas", "blas_library" and "allocator" to `record`.
  void add_json_fields(nlohmann::ordered_json& record) const;
};

// Applies settings.threads (run.threads) (baton::apply_threads), sets the allocator policy and
// detects the BLAS.
RankCompute set_up_compute(const WorldSettings& settings, const WorldInfo& world);

}  // namespace baton_app
