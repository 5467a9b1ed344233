// A plugin whose descriptor ends before `capabilities`, as ABI 1.0's did: it still loads, with
// no capabilities.
#include <cstddef>

#include "descriptor_fields.h"

TEST_PLUGIN_ENTRY("test-abi-1-0", d.abi_minor = 0;
                  d.struct_size = offsetof(baton::PluginDescriptor, capabilities);
                  d.capabilities = 0xFFFFFFFFu)
