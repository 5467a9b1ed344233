// A transport that records no LibTorch version, as a plugin built without LibTorch would.
#include "descriptor_fields.h"

TEST_PLUGIN_ENTRY("test-no-torch", d.kind = baton::PluginKind::kTransport;
                  d.torch_version = nullptr)
