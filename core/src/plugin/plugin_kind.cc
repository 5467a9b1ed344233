#include <cstddef>

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

// Out of line so the type information lives in libbaton_core only: dynamic_cast across
// plugin boundaries then compares one object.
PluginObject::~PluginObject() = default;

std::uint32_t plugin_capabilities(const PluginDescriptor& descriptor) {
  if (descriptor.struct_size < offsetof(PluginDescriptor, capabilities) + sizeof(std::uint32_t)) {
    return 0;
  }
  return descriptor.capabilities;
}

}  // namespace baton
