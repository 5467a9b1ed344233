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
#include "model_settings.h"
#include "training/precision_settings.h"
#include "tuning/model_profile.h"
#include "tuning/transfer_profiler.h"

namespace baton_app {

// What a profile measures, read from a configuration that went through its front door
// (training/resolved_config.h).
struct ProfileSettings {
  baton_models::ModelSettings model;
  baton_models::DataSettings data;
  int ranks = 1;                // world.ranks: the company the units are timed in
  TransferSettings transfer;    // the transport whose messages are measured
  PrecisionSettings precision;  // what the units compute in and send as (unit_precision.h)
  // The configuration's part of the fingerprint: the model section, the model's and the
  // transport's parameters as written, the transport, the batch.
  std::string configured;
};

ProfileSettings read_profile_settings(const baton::Config& config);

// What the costs depend on: the model section, the batch, precision.compute, params and
// wire, the compute threads, the
// transport and its parameters, the machine (host name, CPU count) and the company the units
// were timed in. A cached profile with another fingerprint is measured again.
std::string profile_fingerprint(const ProfileSettings& settings);

// `repeats` timed passes per unit (the median is kept), after two alone (a warm-up, then one
// for the bytes kept), pass after pass over all the microbatch sizes; then the configured
// transport's message costs (transfer_profiler.h).
// `timeout` bounds each wait of the transport's measurement (world.timeout_s in a run).
ModelProfile profile_model(const ProfileSettings& settings, const std::string& data_dir,
                           std::chrono::milliseconds timeout, int repeats = 15);

struct CachedProfile {
  ModelProfile profile;
  bool reused = false;       // read from the file, not measured
  std::string why_measured;  // why a file that was there could not be reused
};

// The profile at `path` when its fingerprint matches this configuration; otherwise measured
// and written there (atomically). `baton tune` and `schedule: auto` share it.
CachedProfile cached_or_measured_profile(const ProfileSettings& settings, const std::string& path,
                                         const std::string& data_dir,
                                         std::chrono::milliseconds timeout);

}  // namespace baton_app
