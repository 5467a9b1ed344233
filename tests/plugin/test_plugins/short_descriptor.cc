// A descriptor shorter than ABI 1.0's (it ends before its factory): refused before the
// loader reads past its end.
#include <cstddef>

#include "descriptor_fields.h"

TEST_PLUGIN_ENTRY("test-short-descriptor",
                  d.struct_size = offsetof(baton::PluginDescriptor, create))
