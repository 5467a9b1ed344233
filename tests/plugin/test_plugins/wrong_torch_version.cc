// A transport (tensors cross its boundary) that claims to be built against another LibTorch.
#include "descriptor_fields.h"

TEST_PLUGIN_ENTRY("test-torch-version", d.kind = baton::PluginKind::kTransport;
                  d.torch_version = "0.4.1")
