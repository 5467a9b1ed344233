#include "compute_setup.h"

#include <nlohmann/json.hpp>

#include "baton/error.h"
#include "baton/plan/format.h"

namespace baton_app {

std::string ComputeSetup::describe() const {
  return blas.name + ", " + std::to_string(threads) + (threads == 1 ? " thread" : " threads") +
         " per rank (" + threads_origin + "), " + allocator;
}

void ComputeSetup::add_json_fields(nlohmann::ordered_json& record) const {
  record["threads"] = threads;
  record["threads_origin"] = threads_origin;
  record["blas"] = blas.name;
  record["blas_library"] = blas.library;
  record["allocator"] = allocator;
}

ComputeSetup set_up_compute(const baton::Config& config, const WorldInfo& world) {
  ComputeSetup setup;
  const baton::ParamValue& configured = config.section("run").at("threads");
  if (configured.as_int() < 0 || configured.as_int() > 4096) {
    throw baton::ConfigError(configured.origin().description + ": run.threads must be from 0 " +
                             "(automatic) to 4096, got " + configured.text());
  }
  if (configured.as_int() > 0) {
    setup.threads = static_cast<int>(configured.as_int());
    setup.threads_origin = "run.threads";
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
