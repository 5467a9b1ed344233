#include <cstddef>
#include <cstring>

#include "baton/plugin.h"

namespace baton {

const char* plugin_kind_name(PluginKind kind) {
  switch (kind) {
    case PluginKind::kSchedule:
      return "schedule";
    case PluginKind::kTransport:
      return "transport";
    case PluginKind::kValidator:
      return "validator";
  }
  return "unknown";
}

const char* kind_interface_name(PluginKind kind) {
  switch (kind) {
    case PluginKind::kSchedule:
      return kScheduleInterface.name;
    case PluginKind::kTransport:
      return kTransportInterface.name;
    case PluginKind::kValidator:
      return kValidatorInterface.name;
  }
  return "unknown";
}

// Out of line so the type information lives in libbaton_core only: dynamic_cast across
// plugin boundaries then compares one object.
PluginObject::~PluginObject() = default;

namespace {

template <typename Field>
bool holds(const PluginDescriptor& descriptor, std::size_t offset) {
  return descriptor.struct_size >= offset + sizeof(Field);
}

}  // namespace

std::vector<PluginInterface> plugin_interfaces(const PluginDescriptor& descriptor) {
  if (holds<std::size_t>(descriptor, offsetof(PluginDescriptor, num_interfaces)) &&
      descriptor.interfaces != nullptr) {
    return {descriptor.interfaces, descriptor.interfaces + descriptor.num_interfaces};
  }
  // Before ABI 2.1 (or BATON_PLUGIN): the kind's first interface, and the capability bits
  // (ABI 1.1; a 1.0 descriptor ends before them).
  std::vector<PluginInterface> interfaces = {{kind_interface_name(descriptor.kind), 1}};
  const std::uint32_t bits =
      holds<std::uint32_t>(descriptor, offsetof(PluginDescriptor, capabilities))
          ? descriptor.capabilities
          : 0u;
  if (descriptor.kind == PluginKind::kTransport) {
    if ((bits & kCapabilityAllReduce) != 0) interfaces.push_back(kAllReduceInterface);
    if ((bits & kCapabilityReceivesMatchByTag) != 0) interfaces.push_back(kReceivesMatchByTag);
  }
  return interfaces;
}

std::uint32_t plugin_capabilities(const PluginDescriptor& descriptor) {
  std::uint32_t bits = 0;
  if (declares(descriptor, kAllReduceInterface)) bits |= kCapabilityAllReduce;
  if (declares(descriptor, kReceivesMatchByTag)) bits |= kCapabilityReceivesMatchByTag;
  return bits;
}

std::uint32_t interface_version(const PluginDescriptor& descriptor, const char* name) {
  for (const PluginInterface& interface : plugin_interfaces(descriptor)) {
    if (interface.name != nullptr && std::strcmp(interface.name, name) == 0) {
      return interface.version;
    }
  }
  return 0;
}

}  // namespace baton
