// What a transport plugin's object offers beyond version 1 of the transport interface, found
// through one mechanism: the interfaces its descriptor lists (baton/plugin.h). The core asks
// for the highest version of each it knows and falls back to what the plugin lists, so a
// plugin built against an older SDK runs with the functions it has, and the descriptor is the
// one truth: what `baton config check` read from it is what the run gets.
#pragma once

#include "baton/all_reduce.h"
#include "baton/export.h"
#include "baton/plugin.h"
#include "baton/shard_collectives.h"
#include "baton/transport.h"

namespace baton {

struct TransportInterfaces {
  // Version 2 of the transport interface; null for a plugin that lists version 1 only.
  TransportV2* v2 = nullptr;
  // baton.all_reduce; null when the plugin does not list it.
  AllReduceTransport* all_reduce = nullptr;
  // baton.shard_collectives (reduce-scatter, all-gather); null when the plugin does not list
  // it.
  ShardCollectiveTransport* shard_collectives = nullptr;
  // baton.receives_match_by_tag is listed.
  bool receives_match_by_tag = false;
};

// The interfaces of `transport`, an object made by the plugin `descriptor` describes. Throws
// PluginError naming the plugin when it lists an interface its object does not implement
// (the list and the object must agree; an interface the object has but the list lacks is
// not used).
BATON_API TransportInterfaces transport_interfaces(const PluginDescriptor& descriptor,
                                                   Transport& transport);

}  // namespace baton
