// Measures the configured model for the schedule search (tuning/model_profile.h): every
// unit at every microbatch size that divides the batch, forward, full backward and the
// split backward (I, W), with the bytes it outputs, keeps for its backward and holds as
// parameters. One process, the configured threads; 5 to 15 s for the shipped models.
// The timed passes run in company: as many threads as the run has other ranks on this
// machine (no more than its other cores) compute the same model meanwhile, as those ranks
// will, sharing the caches and the memory bandwidth.
#pragma once

#include <chrono>
#include <string>

#include "baton/config.h"
#include "tuning/model_profile.h"

namespace baton_app {

// What the costs depend on: the model section, the batch, the compute threads, the
// transport and its parameters, the machine (host name, CPU count) and the company the units
// were timed in. A cached profile with another fingerprint is measured again.
std::string profile_fingerprint(const baton::Config& config);

// `repeats` timed passes per unit (the median is kept), after two alone (a warm-up, then one
// for the bytes kept), pass after pass over all the microbatch sizes; then the configured
// transport's message costs (transfer_profiler.h).
// `timeout` bounds each wait of the transport's measurement (world.timeout_s in a run).
ModelProfile profile_model(const baton::Config& config, const std::string& data_dir,
                           std::chrono::milliseconds timeout, int repeats = 15);

struct CachedProfile {
  ModelProfile profile;
  bool reused = false;       // read from the file, not measured
  std::string why_measured;  // why a file that was there could not be reused
};

// The profile at `path` when its fingerprint matches this configuration; otherwise measured
// and written there (atomically). `baton tune` and `schedule: auto` share it.
CachedProfile cached_or_measured_profile(const baton::Config& config, const std::string& path,
                                         const std::string& data_dir,
                                         std::chrono::milliseconds timeout);

}  // namespace baton_app
