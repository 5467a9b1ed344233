#include "baton/transport_interfaces.h"

#include <string>

#include "baton/error.h"

namespace baton {
namespace {

// The object, as the interface class the plugin listed. The listed versions' classes derive
// from one another under names of their own (TransportV2 from Transport), so an object built
// before a version existed is never taken for one.
template <typename Interface>
Interface* listed_interface(const PluginDescriptor& descriptor, Transport& transport,
                            const PluginInterface& wanted, const char* class_name) {
  const std::uint32_t listed = interface_version(descriptor, wanted.name);
  if (listed < wanted.version) return nullptr;
  auto* implemented = dynamic_cast<Interface*>(&transport);
  if (implemented == nullptr) {
    throw PluginError(std::string("transport plugin '") + descriptor.name + "' lists " +
                      wanted.name + " version " + std::to_string(listed) +
                      ", but its object is no " + class_name +
                      "; derive the transport from it, or leave it out of the interface list");
  }
  return implemented;
}

}  // namespace

TransportInterfaces transport_interfaces(const PluginDescriptor& descriptor, Transport& transport) {
  TransportInterfaces interfaces;
  interfaces.v2 = listed_interface<TransportV2>(descriptor, transport, kTransportInterface,
                                                "baton::TransportV2");
  interfaces.all_reduce = listed_interface<AllReduceTransport>(
      descriptor, transport, kAllReduceInterface, "baton::AllReduceTransport");
  interfaces.shard_collectives = listed_interface<ShardCollectiveTransport>(
      descriptor, transport, kShardCollectivesInterface, "baton::ShardCollectiveTransport");
  interfaces.receives_match_by_tag = declares(descriptor, kReceivesMatchByTag);
  return interfaces;
}

}  // namespace baton
