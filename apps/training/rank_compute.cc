#include "rank_compute.h"

#include <cerrno>
#include <cstdlib>

#include <nlohmann/json.hpp>

#include "baton/error.h"
#include "baton/plan/format.h"

namespace baton_app {
namespace {

// OMP_NUM_THREADS as PyTorch reads it for its own default: a whole number from 1 to 4096, else
// not set (0). torchrun sets it to 1 for several processes a machine; a person sets it to pin
// a run's threads without editing the YAML.
int omp_num_threads() {
  const char* text = std::getenv("OMP_NUM_THREADS");
  if (text == nullptr || *text == '\0') return 0;
  char* end = nullptr;
  errno = 0;
  const long value = std::strtol(text, &end, 10);
  if (errno != 0 || *end != '\0' || value < 1 || value > 4096) return 0;
  return static_cast<int>(value);
}

}  // namespace

std::string RankCompute::describe() const {
  return blas.name + ", " + std::to_string(threads) + (threads == 1 ? " thread" : " threads") +
         " per rank (" + threads_origin + "), " + allocator;
}

void RankCompute::add_json_fields(nlohmann::ordered_json& record) const {
  record["threads"] = threads;
  record["threads_origin"] = threads_origin;
  record["blas"] = blas.name;
  record["blas_library"] = blas.library;
  record["allocator"] = allocator;
}

RankCompute set_up_compute(const WorldSettings& settings, const WorldInfo& world) {
  RankCompute setup;
  // The configuration checked the range (run.threads' declaration).
  if (settings.threads.value > 0) {
    setup.threads = settings.threads.value;
    setup.threads_origin = "run.threads";
  } else if (const int omp = omp_num_threads(); omp > 0) {
    setup.threads = omp;
    setup.threads_origin = "OMP_NUM_THREADS";
  } else {
    const int cpus = baton::cpus_available();
    setup.threads = baton::default_threads_per_rank(world.local_world_size);
    setup.threads_origin = std::to_string(cpus) + (cpus == 1 ? " CPU / " : " CPUs / ") +
                           std::to_string(world.local_world_size) +
                           (world.local_world_size == 1 ? " local rank" : " local ranks");
  }
  baton::apply_threads(setup.threads);
  setup.allocator = baton::apply_allocator_policy();
  setup.blas = baton::detect_blas();
  return setup;
}

}  // namespace baton_app
