// What a message between neighbouring ranks costs over the configured transport, for the
// schedule search: two instances of the transport in this process, ranks 0 and 1 of a world
// of two, meeting through a file store in a scratch folder, ping-pong a small and a large
// message (the one-way times give the cost per byte), time posting a send and a receive, and
// then exchange messages of two sizes while both compute, as ranks do in a pipeline: the
// latency, and the send overhead (posting plus the compute a message takes from the ranks, by
// message size) the search uses are those under load, since a busy machine makes both several
// times dearer than an idle one. That is the cost between two ranks on this machine (what
// `baton launch` runs), not across hosts.
#pragma once

#include <chrono>
#include <cstdint>
#include <string>

#include "baton/config.h"
#include "baton/params.h"
#include "baton/plugin_loader.h"
#include "tuning/model_profile.h"

namespace baton_app {

// The configured transport: its plugin (a name or a path), found as the run finds it, and its
// checked parameters.
struct TransferSettings {
  baton::PluginLoader loader;  // plugins.path first
  std::string transport;       // transport.name
  baton::ParamValues params;   // transport.params, as the run's front door checked them
};

// `config` went through its front door (training/resolved_config.h).
TransferSettings read_transfer_settings(const baton::Config& config);

// `largest_message_bytes`: the biggest activation a stage may send (the fit's second point).
// A transport that cannot run here, or a probe that fails, is recorded in `source` with why,
// at zero cost (the search then ignores transfers), and said on stderr.
TransferProfile profile_transfers(const TransferSettings& settings, double largest_message_bytes,
                                  std::chrono::milliseconds timeout);

}  // namespace baton_app
