// A transport plugin's descriptor as ABI 2.0 wrote it: it ends before the interface list, and
// says what the object can do with capability bits. It loads with the transport interface's
// version 1 and the interfaces its bits stand for.
#include <cstddef>
#include <cstdint>

#include "baton/plugin_torch_version.h"  // a transport records its LibTorch
#include "descriptor_fields.h"

TEST_PLUGIN_ENTRY("test-abi-2-0", d.kind = baton::PluginKind::kTransport; d.abi_minor = 0;
                  d.struct_size = offsetof(baton::PluginDescriptor, interfaces);
                  d.capabilities = baton::kCapabilityAllReduce;
                  d.interfaces = reinterpret_cast<const baton::PluginInterface*>(0x1);
                  d.num_interfaces = 99)

// A 2.0 plugin could ask the runtime what a descriptor's capability bits are. The function it
// called must stay in the runtime, or such a plugin no longer loads (its symbol is resolved
// when the library is opened).
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"
extern "C" __attribute__((visibility("default"))) std::uint32_t test_abi_2_0_capabilities(
    const baton::PluginDescriptor& descriptor) {
  return baton::plugin_capabilities(descriptor);
}
#pragma GCC diagnostic pop
